package goose

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// name is Goose's name in sandbox (--agent goose).
const name manifest.Agent = "goose"

// Agent is Goose, for the registry (parse/agent).
type Agent struct{}

var (
	kRole         = agent.NewKey("role")
	kCreated      = agent.NewKey("created")
	kContent      = agent.NewKey("content")
	kType         = agent.NewKey("type")
	kMessage      = agent.NewKey("message")
	kWorkingDir   = agent.NewKey("working_dir")
	kMessageCount = agent.NewKey("message_count")
)

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return name }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "Goose", Sessions: "Goose sessions (~/.local/share/goose/sessions/sessions.db, and the older <name>.jsonl beside it)",
		Home: "$GOOSE_PATH_ROOT/data, $XDG_DATA_HOME/goose or ~/.local/share/goose", Resume: "session --resume --session-id ID to goose",
		CaseSensitiveIDs: true, StateEnv: []string{"GOOSE_PATH_ROOT"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"path"}, CommandKeys: []string{"command"}, ToolKeys: []string{"name"},
			WriteTools: []string{"developer__text_editor", "text_editor", "developer__shell", "shell", "write", "edit", "developer__write", "developer__edit"}}}
}

// Home implements discover.Source: $GOOSE_PATH_ROOT/data when it is an
// absolute path, else $XDG_DATA_HOME/goose, else ~/.local/share/goose
// (Goose's data directory, on Linux and macOS alike).
func (Agent) Home(getenv func(string) string, home string) string {
	if d := getenv("GOOSE_PATH_ROOT"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "data")
	}
	return agent.EnvHome(getenv, home, "XDG_DATA_HOME", "goose", ".local", "share", "goose")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".local", "share", "goose") }

// Scan implements discover.Source: the sessions of sessions/sessions.db
// whose database (or its log) changed in the window, and the legacy
// sessions/<name>.jsonl files the database does not hold.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	dir := filepath.Join(home, "sessions")
	f.Look(dir)
	return scanDir(f, dir, w, harness)
}

// scanDir lists a sessions folder: its database's sessions, then the
// legacy files of the sessions it does not hold (Goose imports them into
// a new database, and leaves them in place).
func scanDir(f *discover.Finder, dir string, w discover.Window, harness string) []discover.Candidate {
	var out []discover.Candidate
	inDB := map[string]bool{}
	db := filepath.Join(dir, "sessions.db")
	if info, err := os.Stat(db); err == nil && info.Mode().IsRegular() {
		st, err := openStore(db)
		if err != nil {
			f.Problem(db, err)
		} else {
			inDB = st.ids()
			mod := info.ModTime()
			if wal, err := os.Stat(db + "-wal"); err == nil && wal.ModTime().After(mod) {
				mod = wal.ModTime() // the database keeps its time while writes go to its log
			}
			if w.Since.IsZero() || !mod.Before(w.Since) {
				cands, err := dbSessions(db, db, w.Since, harness)
				if err != nil {
					f.Problem(db, err)
				}
				out = append(out, cands...)
			}
		}
	}
	for _, c := range f.ScanFiles(dir, name, w, harness, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }) {
		c.ID = idFromName(c.Name)
		if inDB[c.ID] {
			continue
		}
		out = append(out, c)
	}
	return out
}

// DB implements discover.Store: the sessions of a Goose sessions.db.
func (Agent) DB(_ *discover.Finder, path, name string, since time.Time, harness string) ([]discover.Candidate, error) {
	return dbSessions(path, name, since, harness)
}

// StoreDir implements discover.Store: a sessions folder holding Goose's
// database is read as Scan reads it, so that a legacy file the database
// imported is not listed twice.
func (Agent) StoreDir(f *discover.Finder, dir string) ([]discover.Candidate, bool) {
	if filepath.Base(dir) != "sessions" {
		return nil, false
	}
	db := filepath.Join(dir, "sessions.db")
	if info, err := os.Stat(db); err != nil || !info.Mode().IsRegular() {
		return nil, false
	}
	if _, err := openStore(db); err != nil {
		return nil, false
	}
	return scanDir(f, dir, discover.Window{}, ""), true
}

// streamMark is how a record stream of a Goose database's session starts.
var streamMark = []byte(`{"goose":"session"`)

// Document implements agent.Agent: a record stream of a session of
// sessions.db (read out of a database, or written by hand or a test).
func (Agent) Document(b []byte) (agent.Head, int) {
	t := bytes.TrimLeft(b, " \t\r\n\x00\xef\xbb\xbf")
	var h agent.Head
	if !bytes.HasPrefix(t, streamMark) {
		return h, 0
	}
	line := t
	if i := bytes.IndexByte(t, '\n'); i >= 0 {
		line = t[:i]
	}
	doc := gjson.ParseBytes(line)
	h.ID, h.Cwd = doc.Get("id").Str, doc.Get("cwd").Str
	h.AddMillis(emit.UnixTime(doc.Get("created").Int()).UnixMilli())
	h.AddMillis(emit.UnixTime(doc.Get("updated").Int()).UnixMilli())
	return h, 3
}

// Shape implements agent.Agent: a legacy file's metadata line (its
// working_dir and message_count, no type) is Goose's own; a message is a
// role, a creation time in seconds and an array of content items, with no
// type and no message object.
func (Agent) Shape(r *agent.Record, first bool) (int, bool) {
	if r.Get(kType).Exists() || r.Get(kMessage).Exists() {
		return 0, false
	}
	if first && r.Get(kWorkingDir).Exists() && r.Get(kMessageCount).Exists() {
		return agent.RankDistinct, true
	}
	role := r.Get(kRole)
	if role.Type != gjson.String || (role.Str != "user" && role.Str != "assistant") {
		return 0, false
	}
	if r.Get(kCreated).Type != gjson.Number || !r.Get(kContent).IsArray() {
		return 0, false
	}
	return agent.RankMessage, true
}

// Note implements agent.Agent.
func (Agent) Note(r *agent.Record, first bool, h *agent.Head) string {
	if c := r.Get(kCreated); c.Type == gjson.Number {
		h.AddMillis(emit.UnixTime(c.Int()).UnixMilli())
	}
	if first && r.Get(kMessageCount).Exists() {
		h.SetCwd(r.Get(kWorkingDir).Str)
	}
	return ""
}

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: goose session --resume --session-id ID
// (goose run takes the same flags), unless the command already resumes a
// session.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	if filepath.Base(command[0]) != "goose" {
		return nil, false
	}
	for _, a := range command[1:] {
		if a == "--" {
			break
		}
		if a == "--resume" || a == "-r" || a == "--session-id" || strings.HasPrefix(a, "--session-id=") {
			return command, true
		}
	}
	out := []string{command[0]}
	rest := command[1:]
	if len(rest) > 0 && slices.Contains([]string{"session", "s", "run"}, rest[0]) {
		out, rest = append(out, rest[0]), rest[1:]
	} else {
		out = append(out, "session")
	}
	out = append(out, "--resume", "--session-id", id)
	return append(out, rest...), true
}
