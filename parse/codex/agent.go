package codex

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Agent is OpenAI Codex CLI, for the registry (parse/agent).
type Agent struct{}

var (
	kType       = agent.NewKey("type")
	kID         = agent.NewKey("id")
	kTimestamp  = agent.NewKey("timestamp")
	kCwd        = agent.NewKey("cwd")
	kPayload    = agent.NewKey("payload")
	kRecordType = agent.NewKey("record_type")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return manifest.AgentCodex }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "OpenAI Codex CLI", Sessions: "Codex CLI rollouts (~/.codex/sessions/…/rollout-*.jsonl)",
		Home: "$CODEX_HOME or ~/.codex", Resume: "resume ID to codex (exec resume ID to codex exec)",
		StateEnv: []string{"CODEX_HOME"},
		Lost: jsonl.Vocabulary{CommandKeys: []string{"command", "cmd"}, WorkdirKeys: []string{"workdir"},
			ToolKeys: []string{"name"}, CallTypes: []string{"function_call", "custom_tool_call", "local_shell_call"},
			HolderTypes: []string{"response_item"}, WriteTools: []string{"shell", "container.exec", "shell_command", "exec_command",
				"exec", "apply_patch", "create_file", "delete_file", "local_shell_call"},
			WriteTypes: []string{"local_shell_call"}, PatchTools: []string{"apply_patch"}, ArgumentKeys: []string{"arguments"}}}
}

// Home implements discover.Source: $CODEX_HOME, else ~/.codex.
func (Agent) Home(getenv func(string) string, home string) string {
	return agent.EnvHome(getenv, home, "CODEX_HOME", "", ".codex")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".codex") }

var (
	yearRe = regexp.MustCompile(`^\d{4}$`)
	twoRe  = regexp.MustCompile(`^\d{2}$`)
)

// Scan implements discover.Source: sessions/YYYY/MM/DD/rollout-*.jsonl
// (plain, .gz or .zst; the plain file wins when both exist), the earliest
// flat sessions/ layout and archived_sessions/. A date folder after the
// window's end holds no session in it.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	var out []discover.Candidate
	plain := map[string]bool{}
	add := func(dir string, day time.Time) {
		entries, err := f.Files().ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() || !discover.IsTranscriptName(e.Name()) {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if strings.HasSuffix(p, ".zst") && plain[strings.TrimSuffix(p, ".zst")] {
				continue // codex: when both exist, the plain file wins
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			info, ok := f.Regular(p, info)
			if !ok || !discover.Keep(info, w) {
				continue
			}
			plain[p] = true
			c := f.FileCandidate(p, info, manifest.AgentCodex, harness)
			c.Day = day
			out = append(out, c)
		}
	}
	sessions := filepath.Join(home, "sessions")
	f.Look(sessions, filepath.Join(home, "archived_sessions"))
	add(sessions, time.Time{}) // the earliest flat layout
	for _, y := range f.Subdirs(sessions) {
		if !yearRe.MatchString(y) {
			continue
		}
		for _, m := range f.Subdirs(filepath.Join(sessions, y)) {
			if !twoRe.MatchString(m) {
				continue
			}
			for _, d := range f.Subdirs(filepath.Join(sessions, y, m)) {
				if !twoRe.MatchString(d) {
					continue
				}
				yy, _ := strconv.Atoi(y)
				mm, _ := strconv.Atoi(m)
				dd, _ := strconv.Atoi(d)
				day := time.Date(yy, time.Month(mm), dd, 0, 0, 0, 0, time.Local)
				// The folder is the local date the session started: one that
				// starts after the window's end holds nothing in it.
				if !w.Until.IsZero() && day.After(w.Until) {
					continue
				}
				add(filepath.Join(sessions, y, m, d), day)
			}
		}
	}
	add(filepath.Join(home, "archived_sessions"), time.Time{})
	return out
}

// Document implements agent.Agent: the single-JSON rollout of the
// TypeScript codex-cli.
func (Agent) Document(b []byte) (agent.Head, int) {
	if !SingleJSON(b) {
		return agent.Head{}, 0
	}
	var h agent.Head
	doc := gjson.ParseBytes(b) // read as far as it goes: the head may cut it
	h.ID = uuidOnly(doc.Get("session.id").Str)
	h.Add(doc.Get("session.timestamp").Str)
	return h, 1
}

// Shape implements agent.Agent: a rollout's typed records, a legacy
// rollout's state lines and first line.
func (Agent) Shape(r *agent.Record, first bool) (int, bool) {
	typ := r.Get(kType)
	switch {
	case typ.Type == gjson.String:
		switch typ.Str {
		case "session_meta", "turn_context", "response_item", "event_msg", "compacted":
			return agent.RankTyped, true
		}
		return agent.RankTyped, false
	case r.Get(kRecordType).Exists():
		return agent.RankLegacy, true // a legacy rollout's state line
	case first && r.Get(kID).Exists() && r.Get(kTimestamp).Exists():
		return agent.RankWeak, true // a legacy rollout's first line
	}
	return 0, false
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, first bool, h *agent.Head) string {
	typ := r.Get(kType)
	if ts := r.Get(kTimestamp); ts.Type == gjson.String {
		h.Add(ts.Str)
	}
	h.SetCwd(r.Get(kCwd).Str)
	switch {
	case typ.Str == "session_meta":
		p := r.Get(kPayload)
		if ts := p.Get("timestamp"); ts.Type == gjson.String {
			h.Add(ts.Str)
		}
		h.SetCwd(p.Get("cwd").Str)
		return uuidOnly(firstNonEmpty(p.Get("id").Str, p.Get("session_id").Str))
	case typ.Str == "turn_context":
		h.SetCwd(r.Get(kPayload).Get("cwd").Str)
	case first && !typ.Exists():
		return uuidOnly(r.Get(kID).Str) // a legacy rollout's first line
	}
	return ""
}

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return Stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: codex exec "…" resumes as codex exec
// resume ID "…"; the TUI as codex resume ID.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	if filepath.Base(command[0]) != "codex" {
		return nil, false
	}
	if len(command) > 1 && (command[1] == "exec" || command[1] == "e") {
		return append([]string{command[0], command[1], "resume", id}, command[2:]...), true
	}
	return append([]string{command[0], "resume", id}, command[1:]...), true
}

// uuidOnly keeps a session id that has the shape of one.
func uuidOnly(id string) string {
	if len(id) != 36 || strings.Trim(id, "0123456789abcdefABCDEF-") != "" {
		return ""
	}
	return id
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
