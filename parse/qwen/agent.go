package qwen

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

// name is Qwen Code's name in sandbox (--agent qwen).
const name manifest.Agent = "qwen"

// Agent is Qwen Code, for the registry (parse/agent).
type Agent struct{}

var (
	kUUID           = agent.NewKey("uuid")
	kSessionID      = agent.NewKey("sessionId")
	kType           = agent.NewKey("type")
	kMessage        = agent.NewKey("message")
	kToolCallResult = agent.NewKey("toolCallResult")
	kSystemPayload  = agent.NewKey("systemPayload")
	kTimestamp      = agent.NewKey("timestamp")
	kCwd            = agent.NewKey("cwd")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return name }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "Qwen Code", Sessions: "Qwen Code sessions (~/.qwen/projects/…/chats/<session>.jsonl)",
		Home: "$QWEN_RUNTIME_DIR, $QWEN_HOME or ~/.qwen", Resume: "--resume ID to qwen",
		StateEnv: []string{"QWEN_HOME", "QWEN_RUNTIME_DIR"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"file_path", "absolute_path"}, CommandKeys: []string{"command"}, ToolKeys: []string{"name"},
			CallTypes:  []string{"functionCall"},
			WriteTools: []string{"write_file", "edit", "replace", "run_shell_command"}}}
}

// Home implements discover.Source: the runtime base Qwen Code keeps its
// sessions in, $QWEN_RUNTIME_DIR, else its global directory $QWEN_HOME,
// else ~/.qwen.
func (Agent) Home(getenv func(string) string, home string) string {
	if d := getenv("QWEN_RUNTIME_DIR"); d != "" {
		if rest, ok := strings.CutPrefix(d, "~"); ok && home != "" && (rest == "" || rest[0] == '/' || rest[0] == filepath.Separator) {
			return filepath.Join(home, rest)
		}
		return d
	}
	return agent.EnvHome(getenv, home, "QWEN_HOME", "", ".qwen")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".qwen") }

// Scan implements discover.Source: projects/<project>/chats/<session>.jsonl,
// and the subagents' projects/<project>/subagents/<session>/agent-<id>.jsonl.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	var out []discover.Candidate
	projects := filepath.Join(home, "projects")
	f.Look(projects)
	jsonlName := func(n string) bool { return strings.HasSuffix(n, ".jsonl") }
	for _, p := range f.Subdirs(projects) {
		out = append(out, f.ScanFiles(filepath.Join(projects, p, "chats"), name, w, harness, jsonlName)...)
		subagents := filepath.Join(projects, p, "subagents")
		for _, s := range f.Subdirs(subagents) {
			out = append(out, f.ScanFiles(filepath.Join(subagents, s), name, w, harness, func(n string) bool {
				return strings.HasPrefix(n, "agent-") && jsonlName(n)
			})...)
		}
	}
	return out
}

// Document implements agent.Agent: Qwen Code writes no single-document
// session.
func (Agent) Document([]byte) (agent.Head, int) { return agent.Head{}, 0 }

// Shape implements agent.Agent: a record has Claude Code's envelope (uuid,
// sessionId), and what Claude Code never writes: a tool_result record, a
// toolCallResult or systemPayload, or a message of Gemini's parts.
func (Agent) Shape(r *agent.Record, _ bool) (int, bool) {
	if !r.Get(kUUID).Exists() || !r.Get(kSessionID).Exists() {
		return 0, false
	}
	typ := r.Get(kType)
	if typ.Type == gjson.String && typ.Str == "tool_result" || r.Get(kToolCallResult).IsObject() || r.Get(kSystemPayload).IsObject() ||
		r.Get(kMessage).Get("parts").IsArray() {
		return agent.RankDistinct, true
	}
	return 0, false
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, _ bool, h *agent.Head) string {
	if ts := r.Get(kTimestamp); ts.Type == gjson.String {
		h.Add(ts.Str)
	}
	h.SetCwd(r.Get(kCwd).Str)
	return r.Get(kSessionID).Str
}

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: qwen --resume ID, unless the command
// already says which session to go on with (--resume, -r, --continue, -c).
func (Agent) Resume(command []string, id string) ([]string, bool) {
	return agent.ResumeFlag(command, id, []string{"qwen"}, "--resume", "-r", "--continue", "-c")
}
