package gemini

import (
	"bytes"
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

// Agent is Gemini CLI, for the registry (parse/agent).
type Agent struct{}

var (
	kType        = agent.NewKey("type")
	kID          = agent.NewKey("id")
	kSessionID   = agent.NewKey("sessionId")
	kTimestamp   = agent.NewKey("timestamp")
	kProjectHash = agent.NewKey("projectHash")
	kSet         = agent.NewKey("$set")
	kRewindTo    = agent.NewKey("$rewindTo")
	kStartTime   = agent.NewKey("startTime")
	kMessage     = agent.NewKey("message")
	kParentID    = agent.NewKey("parentId")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return manifest.AgentGemini }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "Gemini CLI", Sessions: "Gemini CLI sessions (~/.gemini/tmp/…/chats/session-*.json or .jsonl)",
		Home: "$GEMINI_CLI_HOME/.gemini or ~/.gemini", Resume: "--resume ID to gemini",
		StateEnv: []string{"GEMINI_CLI_HOME"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"file_path", "absolute_path", "path"}, CommandKeys: []string{"command"},
			ToolKeys: []string{"name"}, CallTypes: []string{"functionCall"}, HolderTypes: []string{"message"},
			WriteTools: []string{"write_file", "replace", "run_shell_command"}}}
}

// Home implements discover.Source: $GEMINI_CLI_HOME/.gemini, else
// ~/.gemini.
func (Agent) Home(getenv func(string) string, home string) string {
	return agent.EnvHome(getenv, home, "GEMINI_CLI_HOME", ".gemini", ".gemini")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".gemini") }

// Scan implements discover.Source: tmp/<project>/chats/session-*.json and
// .jsonl (<project> is the sha256 of the project root in the old layout, a
// short name in the new one), and subagent sessions in
// chats/<parent session>/, named by their id.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	var out []discover.Candidate
	tmp := filepath.Join(home, "tmp")
	f.Look(tmp)
	for _, d := range f.Subdirs(tmp) {
		chats := filepath.Join(tmp, d, "chats")
		out = append(out, f.ScanFiles(chats, manifest.AgentGemini, w, harness, func(name string) bool {
			return discover.IsTranscriptName(name) && strings.HasPrefix(name, "session-")
		})...)
		for _, s := range f.Subdirs(chats) {
			out = append(out, f.ScanFiles(filepath.Join(chats, s), manifest.AgentGemini, w, harness, discover.IsTranscriptName)...)
		}
	}
	return out
}

// Document implements agent.Agent: the pretty-printed single-JSON session
// of Gemini CLI before its JSON Lines files, told by its top-level keys (as
// far as the head holds them).
func (Agent) Document(b []byte) (agent.Head, int) {
	if !Pretty(b) {
		return agent.Head{}, 0
	}
	doc := gjson.ParseBytes(b)
	if !doc.Get("projectHash").Exists() && !(doc.Get("sessionId").Exists() && doc.Get("messages").Exists()) {
		return agent.Head{}, 0
	}
	h := agent.Head{ID: doc.Get("sessionId").Str}
	h.Add(doc.Get("startTime").Str)
	h.Add(doc.Get("lastUpdated").Str)
	doc.Get("messages").ForEach(func(_, m gjson.Result) bool {
		h.Add(m.Get("timestamp").Str)
		return true
	})
	return h, 2
}

// Shape implements agent.Agent: session metadata, $set and $rewindTo
// records are Gemini CLI's alone; a message record is typed, has a string
// id, and no message or parentId of its own.
func (Agent) Shape(r *agent.Record, first bool) (int, bool) {
	if r.Get(kProjectHash).Exists() || r.Get(kSet).IsObject() || r.Get(kRewindTo).Exists() {
		return agent.RankDistinct, true
	}
	typ, id := r.Get(kType), r.Get(kID)
	if typ.Type == gjson.String && id.Type == gjson.String {
		switch typ.Str {
		case "gemini":
			return agent.RankMessage, true
		case "info", "user", "error", "warning":
			if !r.Get(kMessage).Exists() && !r.Get(kParentID).Exists() && !first {
				return agent.RankMessage, true
			}
		}
	}
	return 0, false
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, _ bool, h *agent.Head) string {
	if ts := r.Get(kTimestamp); ts.Type == gjson.String {
		h.Add(ts.Str)
	}
	if ts := r.Get(kStartTime); ts.Type == gjson.String {
		h.Add(ts.Str) // the session metadata's
	}
	if r.Get(kProjectHash).Exists() {
		return r.Get(kSessionID).Str
	}
	return ""
}

// Root implements agent.Rooted: Gemini CLI records no working directory;
// the project root marker beside a session on the host says it, else the
// paths of the file tools in the head.
func (Agent) Root(t agent.Transcript, head []byte) string {
	if root := projectRoot(t.Name, t.OnDisk); root != "" {
		return root
	}
	if head == nil {
		return ""
	}
	s, err := stream(context.Background(), bytes.NewReader(head), t.Name, Options{}, emit.Handler{})
	if err != nil {
		return ""
	}
	return s.Cwd
}

// Stream implements agent.Agent. A session on the host takes its project
// root from the marker beside it.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, Options{Cwd: projectRoot(t.Name, t.OnDisk)}, h)
}

// Resume implements agent.Agent: gemini --resume ID.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	if filepath.Base(command[0]) != "gemini" {
		return nil, false
	}
	return append([]string{command[0], "--resume", id}, command[1:]...), true
}
