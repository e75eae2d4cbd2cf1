package crush

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// name is Crush's name in sandbox (--agent crush).
const name manifest.Agent = "crush"

// Agent is Crush, for the registry (parse/agent).
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return name }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "Crush", Sessions: "Crush sessions (<project>/.crush/crush.db, listed in ~/.local/share/crush/projects.json)",
		Home: "$CRUSH_GLOBAL_DATA, $XDG_DATA_HOME/crush or ~/.local/share/crush", Resume: "--session ID to crush (after run for crush run)",
		CaseSensitiveIDs: true, StateEnv: []string{"CRUSH_GLOBAL_DATA", "CRUSH_GLOBAL_CONFIG"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"file_path"}, CommandKeys: []string{"command"}, ToolKeys: []string{"name"},
			WriteTools: []string{"write", "edit", "multiedit", "bash", "download"}}}
}

// Home implements discover.Source: $CRUSH_GLOBAL_DATA, else
// $XDG_DATA_HOME/crush, else ~/.local/share/crush, where projects.json
// lists the projects (each with its own database).
func (Agent) Home(getenv func(string) string, home string) string {
	if d := getenv("CRUSH_GLOBAL_DATA"); d != "" {
		return d
	}
	return agent.EnvHome(getenv, home, "XDG_DATA_HOME", "crush", ".local", "share", "crush")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".local", "share", "crush") }

// Scan implements discover.Source: the sessions of the database of each
// project projects.json lists, whose database (or its log) changed in the
// window.
func (Agent) Scan(f *discover.Finder, home string, w discover.Window, harness string) []discover.Candidate {
	f.Look(home)
	data, err := os.ReadFile(filepath.Join(home, "projects.json"))
	if err != nil {
		return nil
	}
	var list struct {
		Projects []struct {
			Path    string `json:"path"`
			DataDir string `json:"data_dir"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		f.Problem(filepath.Join(home, "projects.json"), err)
		return nil
	}
	var out []discover.Candidate
	seen := map[string]bool{}
	for _, p := range list.Projects {
		dir := p.DataDir
		if dir == "" {
			dir = filepath.Join(p.Path, ".crush")
		} else if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Path, dir)
		}
		db := filepath.Join(dir, "crush.db")
		if seen[db] {
			continue
		}
		seen[db] = true
		f.Look(db)
		info, err := os.Stat(db)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		mod := info.ModTime()
		if wal, err := os.Stat(db + "-wal"); err == nil && wal.ModTime().After(mod) {
			mod = wal.ModTime() // the database keeps its time while writes go to its log
		}
		if !w.Since.IsZero() && mod.Before(w.Since) {
			continue
		}
		cands, err := dbSessions(db, db, w.Since, harness, filepath.ToSlash(p.Path))
		if err != nil {
			f.Problem(db, err)
			continue
		}
		out = append(out, cands...)
	}
	return out
}

// DB implements discover.Store: the sessions of a Crush database (or of
// the Go predecessor of Crush, whose database has its schema).
func (Agent) DB(_ *discover.Finder, path, name string, since time.Time, harness string) ([]discover.Candidate, error) {
	return dbSessions(path, name, since, harness, "")
}

// StoreDir implements discover.Store: Crush keeps no file store.
func (Agent) StoreDir(*discover.Finder, string) ([]discover.Candidate, bool) { return nil, false }

// dbSessions lists the sessions of the Crush database at path updated
// since since; label is how the database is called in messages, project
// the project's directory when projects.json says it.
func dbSessions(path, label string, since time.Time, harness, project string) ([]discover.Candidate, error) {
	st, err := openStore(path)
	if err != nil {
		return nil, err
	}
	sessions, err := st.sessions(since)
	if err != nil {
		return nil, err
	}
	dir := dbDir(path)
	// A session's sub-agents' sessions (its agent tool's) come with it.
	var candidate func(s sessionInfo, kids bool) discover.Candidate
	candidate = func(s sessionInfo, kids bool) discover.Candidate {
		cwd := project
		if cwd == "" {
			cwd = st.workDir(s.ID, dir)
		}
		c := discover.Candidate{Name: label + "#" + s.ID, Store: path, Agent: name, ModTime: s.Updated, ID: s.ID, Harness: harness,
			Listed: &discover.Listed{Cwd: cwd, First: s.Created, Last: s.Updated}}
		var children func() []discover.Candidate
		if kids {
			children = func() []discover.Candidate {
				var out []discover.Candidate
				for _, k := range st.descendants(s.ID) {
					out = append(out, candidate(k, false))
				}
				return out
			}
		}
		return discover.StoreCandidate(c, func() (io.ReadCloser, error) { return st.records(s, cwd), nil }, children)
	}
	out := make([]discover.Candidate, 0, len(sessions))
	for _, s := range sessions {
		out = append(out, candidate(s, true))
	}
	return out, nil
}

// streamMark is how a record stream of a Crush session starts.
var streamMark = []byte(`{"crush":"session"`)

// Document implements agent.Agent: a record stream of a Crush session
// (a database's session read out, or one written by hand or by a test).
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

// Shape implements agent.Agent: Crush's sessions are read as documents.
func (Agent) Shape(*agent.Record, bool) (int, bool) { return 0, false }

// Note implements agent.Agent.
func (Agent) Note(*agent.Record, bool, *agent.Head) string { return "" }

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: --session ID to Crush's TUI, or after run
// for crush run, unless the command already picks a session
// (--session, -s, --continue, -C).
func (Agent) Resume(command []string, id string) ([]string, bool) {
	return agent.ResumeFlagAfter(command, id, []string{"crush"}, "run", "--session", "-s", "-C", "--continue")
}
