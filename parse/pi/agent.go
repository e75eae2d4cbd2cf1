package pi

import (
	"context"
	"io"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Agent is pi (the pi coding agent), for the registry (parse/agent).
type Agent struct{}

var (
	kType      = agent.NewKey("type")
	kID        = agent.NewKey("id")
	kTimestamp = agent.NewKey("timestamp")
	kCwd       = agent.NewKey("cwd")
	kMessage   = agent.NewKey("message")
	kParentID  = agent.NewKey("parentId")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return manifest.AgentPi }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "pi", Sessions: "pi sessions (~/.pi/agent/sessions/…/*.jsonl)",
		Home: "$PI_CODING_AGENT_DIR or ~/.pi/agent", Resume: "--session ID to pi",
		StateEnv: []string{"PI_CODING_AGENT_DIR"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"path"}, CommandKeys: []string{"command"}, ToolKeys: []string{"name"},
			CallTypes: []string{"toolCall"}, HolderTypes: []string{"message"},
			WriteTools: []string{"write", "edit", "bash", "bashExecution"}}}
}

// Home implements discover.Source: $PI_CODING_AGENT_DIR, else ~/.pi/agent.
func (Agent) Home(getenv func(string) string, home string) string {
	return agent.EnvHome(getenv, home, "PI_CODING_AGENT_DIR", "", ".pi", "agent")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".pi", "agent") }

// Scan implements discover.Source: sessions/--<cwd>--/<time>_<id>.jsonl.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	return f.ScanSubdirs(filepath.Join(home, "sessions"), manifest.AgentPi, w, harness, func(name string) bool {
		return strings.HasSuffix(name, ".jsonl")
	})
}

// Document implements agent.Agent: pi writes no single-document session.
func (Agent) Document([]byte) (agent.Head, int) { return agent.Head{}, 0 }

// Shape implements agent.Agent: the session header, message entries, and
// the other entries of pi's tree (typed, with a parentId); a typed entry
// with a parentId whose type pi does not write is no one's.
func (Agent) Shape(r *agent.Record, _ bool) (int, bool) {
	typ := r.Get(kType)
	switch {
	case typ.Str == "message" && r.Get(kMessage).IsObject(), typ.Str == "session" && (r.Get(kCwd).Exists() || r.Get(kID).Exists()):
		return agent.RankEntry, true
	case r.Get(kParentID).Exists() && typ.Type == gjson.String:
		switch typ.Str {
		case "model_change", "thinking_level_change", "compaction", "branch_summary", "custom", "custom_message", "label", "session_info":
			return agent.RankTree, true
		}
		return agent.RankTree, false
	}
	return 0, false
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, _ bool, h *agent.Head) string {
	if ts := r.Get(kTimestamp); ts.Type == gjson.String {
		h.Add(ts.Str)
	}
	h.SetCwd(r.Get(kCwd).Str)
	if r.Get(kType).Str == "session" {
		return r.Get(kID).Str
	}
	return ""
}

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: pi takes a session file or an id (prefix)
// to --session.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	if filepath.Base(command[0]) != "pi" {
		return nil, false
	}
	return append([]string{command[0], "--session", id}, command[1:]...), true
}
