package copilot

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

// name is GitHub Copilot CLI's name in sandbox (--agent copilot).
const name manifest.Agent = "copilot"

// Agent is GitHub Copilot CLI, for the registry (parse/agent).
type Agent struct{}

var (
	kType      = agent.NewKey("type")
	kData      = agent.NewKey("data")
	kTimestamp = agent.NewKey("timestamp")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return name }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "GitHub Copilot CLI", Sessions: "GitHub Copilot CLI sessions (~/.copilot/session-state/<id>/events.jsonl)",
		Home: "$COPILOT_HOME or ~/.copilot", Resume: "--resume ID to copilot",
		StateEnv: []string{"COPILOT_HOME"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"path"}, CommandKeys: []string{"command"}, ToolKeys: []string{"toolName"},
			CallTypes:  []string{"tool.execution_start"},
			WriteTools: []string{"create", "edit", "apply_patch", "bash", "powershell"}, PatchTools: []string{"apply_patch"}}}
}

// Home implements discover.Source: $COPILOT_HOME, else ~/.copilot.
func (Agent) Home(getenv func(string) string, home string) string {
	return agent.EnvHome(getenv, home, "COPILOT_HOME", "", ".copilot")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".copilot") }

// Scan implements discover.Source: session-state/<id>/events.jsonl, and
// history-session-state/ of older builds.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	events := func(name string) bool { return name == "events.jsonl" }
	out := f.ScanSubdirs(filepath.Join(home, "session-state"), name, w, harness, events)
	return append(out, f.ScanSubdirs(filepath.Join(home, "history-session-state"), name, w, harness, events)...)
}

// Document implements agent.Agent: Copilot CLI writes no single-document
// session.
func (Agent) Document([]byte) (agent.Head, int) { return agent.Head{}, 0 }

// namespaces are the first words of the dotted event types Copilot CLI
// writes; no other agent's type has a dot.
var namespaces = []string{"session.", "user.", "assistant.", "tool.", "system.", "permission.", "subagent.", "hook.", "skill."}

// Shape implements agent.Agent: session.start with Copilot's producer is
// its own mark; any other event is a dotted type of its namespaces (or
// abort) with a data object.
func (Agent) Shape(r *agent.Record, _ bool) (int, bool) {
	typ := r.Get(kType)
	data := r.Get(kData)
	if typ.Type != gjson.String || !data.IsObject() {
		return 0, false
	}
	if typ.Str == "session.start" && data.Get("producer").Str == "copilot-agent" {
		return agent.RankDistinct, true
	}
	if typ.Str == "abort" {
		return agent.RankTyped, true
	}
	for _, ns := range namespaces {
		if strings.HasPrefix(typ.Str, ns) && len(typ.Str) > len(ns) {
			return agent.RankTyped, true
		}
	}
	return 0, false
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, _ bool, h *agent.Head) string {
	if ts := r.Get(kTimestamp); ts.Type == gjson.String {
		h.Add(ts.Str)
	}
	switch r.Get(kType).Str {
	case "session.start", "session.resume":
		data := r.Get(kData)
		h.SetCwd(data.Get("context.cwd").Str)
		return data.Get("sessionId").Str
	}
	return ""
}

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: copilot --resume ID, unless the command
// already says which session to go on with (--resume, --continue).
func (Agent) Resume(command []string, id string) ([]string, bool) {
	return agent.ResumeFlag(command, id, []string{"copilot"}, "--resume", "--continue")
}
