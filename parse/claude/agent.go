package claude

import (
	"context"
	"io"
	"os"
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

// Agent is Claude Code, for the registry (parse/agent).
type Agent struct{}

var (
	kType       = agent.NewKey("type")
	kSessionID  = agent.NewKey("sessionId")
	kParentUUID = agent.NewKey("parentUuid")
	kTimestamp  = agent.NewKey("timestamp")
	kCwd        = agent.NewKey("cwd")
	kSnapshot   = agent.NewKey("snapshot")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return manifest.AgentClaude }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "Claude Code", Sessions: "Claude Code transcripts (~/.claude/projects/…/<session>.jsonl)",
		Home: "$CLAUDE_CONFIG_DIR or ~/.claude", Resume: "--resume ID to claude",
		StateEnv: []string{"CLAUDE_CONFIG_DIR"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"file_path", "filePath", "notebook_path"}, CommandKeys: []string{"command"},
			ToolKeys: []string{"name"}, CallTypes: []string{"tool_use"}, HolderTypes: []string{"assistant"},
			WriteTools: []string{"write", "edit", "multiedit", "notebookedit", "bash", "powershell"}}}
}

// Home implements discover.Source: $CLAUDE_CONFIG_DIR, else ~/.claude.
func (Agent) Home(getenv func(string) string, home string) string {
	return agent.EnvHome(getenv, home, "CLAUDE_CONFIG_DIR", "", ".claude")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".claude") }

// Scan implements discover.Source: projects/<project>/<session>.jsonl.
// Subagent files (agent-*.jsonl, <session>/subagents/) come with their
// session.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	return f.ScanSubdirs(filepath.Join(home, "projects"), manifest.AgentClaude, w, harness, func(name string) bool {
		return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, "agent-")
	})
}

// Document implements agent.Agent: Claude Code writes no single-document
// transcript.
func (Agent) Document([]byte) (agent.Head, int) { return agent.Head{}, 0 }

// Shape implements agent.Agent: every entry carries sessionId and
// parentUuid; file-history snapshots are typed.
func (Agent) Shape(r *agent.Record, _ bool) (int, bool) {
	switch {
	case r.Get(kSessionID).Exists() || r.Get(kParentUUID).Exists():
		return agent.RankIdentity, true
	case r.Get(kType).Str == "file-history-snapshot" && r.Get(kType).Type == gjson.String:
		return agent.RankTyped, true
	}
	return 0, false
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, _ bool, h *agent.Head) string {
	if ts := r.Get(kTimestamp); ts.Type == gjson.String {
		h.Add(ts.Str)
	}
	h.SetCwd(r.Get(kCwd).Str)
	if r.Get(kType).Str == "file-history-snapshot" {
		if ts := r.Get(kSnapshot).Get("timestamp"); ts.Type == gjson.String {
			h.Add(ts.Str)
		}
	}
	return r.Get(kSessionID).Str
}

// Stream implements agent.Agent. A transcript on the host reads its
// session's file-history backups from the config directory it lives in.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	var opts Options
	if t.OnDisk {
		opts.Backup = backupReader(t.Name, t.Home)
	}
	return stream(ctx, body, t.Name, opts, h)
}

// Resume implements agent.Agent: claude --resume ID.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	if filepath.Base(command[0]) != "claude" {
		return nil, false
	}
	return append([]string{command[0], "--resume", id}, command[1:]...), true
}

// configDir returns the Claude Code config directory a transcript lives
// in: the parent of the nearest "projects" folder above it, else home (the
// config directory the environment names: $CLAUDE_CONFIG_DIR, else
// ~/.claude).
func configDir(transcript, home string) string {
	if abs, err := filepath.Abs(transcript); err == nil {
		for dir := filepath.Dir(abs); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			if filepath.Base(dir) == "projects" {
				return filepath.Dir(dir)
			}
		}
	}
	return home
}

var backupNameRe = regexp.MustCompile(`^[0-9a-f]{16}@v[0-9]+$`)

// backupReader reads file-history backups (formats/claude.md §1.5) from the
// config directory of a transcript.
func backupReader(transcript, home string) func(sessionID, name string) ([]byte, bool) {
	root := configDir(transcript, home)
	return func(sessionID, name string) ([]byte, bool) {
		// Both parts come from the transcript: accept only their documented forms.
		if root == "" || !backupNameRe.MatchString(name) || strings.ContainsAny(sessionID, `/\`) || sessionID == ".." || sessionID == "" {
			return nil, false
		}
		data, err := os.ReadFile(filepath.Join(root, "file-history", sessionID, name))
		return data, err == nil
	}
}
