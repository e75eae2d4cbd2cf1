package droid

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// name is Factory Droid's name in sandbox (--agent droid).
const name manifest.Agent = "droid"

// homeEnv replaces the user's home directory for Droid: its state is in
// $FACTORY_HOME_OVERRIDE/.factory.
const homeEnv = "FACTORY_HOME_OVERRIDE"

// Agent is Factory Droid, for the registry (parse/agent).
type Agent struct{}

var (
	kType         = agent.NewKey("type")
	kID           = agent.NewKey("id")
	kTimestamp    = agent.NewKey("timestamp")
	kCwd          = agent.NewKey("cwd")
	kMessage      = agent.NewKey("message")
	kOwner        = agent.NewKey("owner")
	kSessionTitle = agent.NewKey("sessionTitle")
	kVersion      = agent.NewKey("version")
	kCalling      = agent.NewKey("callingSessionId")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return name }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "Factory Droid", Sessions: "Factory Droid sessions (~/.factory/sessions/<project>/<id>.jsonl)",
		Home: "$FACTORY_HOME_OVERRIDE/.factory or ~/.factory", Resume: "--resume ID to droid (droid exec: --session-id ID)",
		StateEnv: []string{homeEnv},
		Lost: jsonl.Vocabulary{PathKeys: []string{"file_path", "notebook_path"}, CommandKeys: []string{"command"}, ToolKeys: []string{"name"},
			CallTypes: []string{"tool_use"}, HolderTypes: []string{"message"},
			WriteTools: []string{"create", "write", "edit", "multiedit", "applypatch", "execute", "notebookedit"}, PatchTools: []string{"applypatch"}}}
}

// Home implements discover.Source: $FACTORY_HOME_OVERRIDE/.factory, else
// ~/.factory. The variable replaces the home directory, not the folder;
// a relative value is not a home Droid could have meant, and is ignored.
func (Agent) Home(getenv func(string) string, home string) string {
	env := func(k string) string {
		if v := getenv(k); filepath.IsAbs(v) {
			return v
		}
		return ""
	}
	return agent.EnvHome(env, home, homeEnv, ".factory", ".factory")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".factory") }

// Scan implements discover.Source: sessions/<sanitised cwd>/<id>.jsonl,
// and sessions/<id>.jsonl of earlier builds. The <id>.settings.json beside
// each holds no operation.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	jsonlFile := func(name string) bool { return strings.HasSuffix(name, ".jsonl") }
	root := filepath.Join(home, "sessions")
	out := f.ScanSubdirs(root, name, w, harness, jsonlFile)
	return append(out, f.ScanFiles(root, name, w, harness, jsonlFile)...)
}

// Document implements agent.Agent: Droid writes no single-document session.
func (Agent) Document([]byte) (agent.Head, int) { return agent.Head{}, 0 }

// uuid is how Droid names its sessions and messages.
var uuid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Shape implements agent.Agent. session_start is Droid's own record. Its
// message records have pi's outer shape ({"type":"message","message":{…}},
// which pi's Shape claims at RankEntry): Droid takes one at RankMessage
// only by a mark pi does not write, Anthropic tool_use or tool_result
// blocks, or a UUID id on a user or assistant message without the numeric
// timestamp pi stamps every message with. Any other message stays pi's.
func (Agent) Shape(r *agent.Record, _ bool) (int, bool) {
	typ := r.Get(kType)
	if typ.Type != gjson.String {
		return 0, false
	}
	switch typ.Str {
	case "session_start":
		if r.Get(kOwner).Exists() || r.Get(kSessionTitle).Exists() || r.Get(kVersion).Exists() || r.Get(kCalling).Exists() {
			return agent.RankDistinct, true
		}
	case "message":
		m := r.Get(kMessage)
		if !m.IsObject() {
			return 0, false
		}
		if toolBlocks(m.Get("content")) {
			return agent.RankMessage, true
		}
		role := m.Get("role").Str
		if (role == "user" || role == "assistant") && !m.Get("timestamp").Exists() && uuid.MatchString(r.Get(kID).Str) {
			return agent.RankMessage, true
		}
	}
	return 0, false
}

// toolBlocks reports whether content holds a tool_use or tool_result
// block, which pi (toolCall blocks, toolResult messages) never writes.
func toolBlocks(content gjson.Result) bool {
	found := false
	if content.IsArray() {
		content.ForEach(func(_, b gjson.Result) bool {
			t := b.Get("type").Str
			found = t == "tool_use" || t == "tool_result"
			return !found
		})
	}
	return found
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, _ bool, h *agent.Head) string {
	if ts := r.Get(kTimestamp); ts.Type == gjson.String {
		h.Add(ts.Str)
	}
	if r.Get(kType).Str == "session_start" {
		h.SetCwd(r.Get(kCwd).Str)
		return r.Get(kID).Str
	}
	return ""
}

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: droid --resume ID, and droid exec
// --session-id ID for the non-interactive run; a command that already says
// which session to go on with (--resume, -r, --fork, --session-id, or the
// resume subcommand) is left as it is.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	names := []string{"droid"}
	if len(command) == 0 || filepath.Base(command[0]) != "droid" {
		return nil, false
	}
	if len(command) > 1 && command[1] == "resume" {
		return command, true
	}
	if len(command) > 1 && command[1] == "exec" {
		return agent.ResumeFlagAfter(command, id, names, "exec", "--session-id", "-s", "--resume", "-r", "--fork")
	}
	return agent.ResumeFlag(command, id, names, "--resume", "-r", "--fork", "--session-id")
}
