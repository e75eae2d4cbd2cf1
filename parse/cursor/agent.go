package cursor

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

// name is Cursor CLI's name in sandbox (--agent cursor).
const name manifest.Agent = "cursor"

// Agent is Cursor CLI (cursor-agent), for the registry (parse/agent).
type Agent struct{}

var (
	kRole    = agent.NewKey("role")
	kMessage = agent.NewKey("message")
	kType    = agent.NewKey("type")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return name }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "Cursor CLI", Sessions: "Cursor CLI agent transcripts (~/.cursor/projects/…/agent-transcripts/<chat>.jsonl)",
		Home: "~/.cursor", Resume: "--resume ID to cursor-agent", CaseSensitiveIDs: false,
		Lost: jsonl.Vocabulary{PathKeys: []string{"path"}, CommandKeys: []string{"command"}, ToolKeys: []string{"name"},
			CallTypes: []string{"tool_use"}, WriteTools: []string{"write", "strreplace", "delete", "shell"}}}
}

// Home implements discover.Source: ~/.cursor (Cursor documents no variable
// that moves it).
func (Agent) Home(_ func(string) string, home string) string {
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cursor")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".cursor") }

// Scan implements discover.Source: projects/<project>/agent-transcripts/
// <chat>.jsonl (the CLI's), and <chat>/<chat>.jsonl (the IDE's).
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	var out []discover.Candidate
	projects := filepath.Join(home, "projects")
	f.Look(projects)
	jsonlName := func(name string) bool { return strings.HasSuffix(name, ".jsonl") }
	for _, p := range f.Subdirs(projects) {
		at := filepath.Join(projects, p, "agent-transcripts")
		out = append(out, f.ScanFiles(at, name, w, harness, jsonlName)...)
		for _, c := range f.Subdirs(at) {
			out = append(out, f.ScanFiles(filepath.Join(at, c), name, w, harness, jsonlName)...)
		}
	}
	return out
}

// Document implements agent.Agent: Cursor CLI writes no single-document
// transcript.
func (Agent) Document([]byte) (agent.Head, int) { return agent.Head{}, 0 }

// Shape implements agent.Agent: a turn is a user's or the assistant's
// message with the role at the top and no type (Claude Code's records have
// a type, and the role inside the message).
func (Agent) Shape(r *agent.Record, _ bool) (int, bool) {
	role := r.Get(kRole)
	if role.Type != gjson.String || (role.Str != "user" && role.Str != "assistant") || r.Get(kType).Exists() {
		return 0, false
	}
	if !r.Get(kMessage).IsObject() {
		return 0, false
	}
	return agent.RankMessage, true
}

// Note implements agent.Agent: the transcript holds no time, id or
// directory.
func (Agent) Note(*agent.Record, bool, *agent.Head) string { return "" }

// Root implements agent.Rooted: the working directory is the directory
// whose folder name, under projects/, the transcript lies in, found among
// the paths its calls name.
func (Agent) Root(t agent.Transcript, head []byte) string {
	return projectRoot(t.Name, head)
}

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: cursor-agent (or agent) --resume ID,
// unless the command already says which chat to go on with.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	return agent.ResumeFlag(command, id, []string{"cursor-agent"}, "--resume", "--continue")
}
