package opencode

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Agent is opencode, for the registry (parse/agent).
type Agent struct{}

// Name implements agent.Agent.
func (Agent) Name() manifest.Agent { return manifest.AgentOpencode }

// About implements agent.Agent.
func (Agent) About() agent.About {
	return agent.About{Title: "opencode",
		Sessions: "opencode sessions (~/.local/share/opencode/opencode.db, storage/, opencode export JSON)",
		Home:     "$XDG_DATA_HOME/opencode or ~/.local/share/opencode", Resume: "--session ID to opencode (after run for opencode run)",
		CaseSensitiveIDs: true, StateEnv: []string{"OPENCODE_CONFIG_DIR"},
		Lost: jsonl.Vocabulary{PathKeys: []string{"filePath"}, CommandKeys: []string{"command"}, ToolKeys: []string{"tool"},
			WriteTools: []string{"write", "edit", "patch", "apply_patch", "bash"}, PatchTools: []string{"patch", "apply_patch"}}}
}

// Home implements discover.Source: $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode.
func (Agent) Home(getenv func(string) string, home string) string {
	return agent.EnvHome(getenv, home, "XDG_DATA_HOME", "opencode", ".local", "share", "opencode")
}

// HomeIn implements discover.Source.
func (Agent) HomeIn(ws string) string { return filepath.Join(ws, ".local", "share", "opencode") }

// dbName matches opencode.db and the per-channel opencode-<channel>.db.
var dbName = regexp.MustCompile(`^opencode(-[A-Za-z0-9._-]+)?\.db$`)

// Scan implements discover.Source: the sessions of opencode's databases,
// then those of the legacy file store that no database holds (the store
// is migrated into the database, and may remain).
func (Agent) Scan(f *discover.Finder, dir string, w discover.Window, harness string) []discover.Candidate {
	f.Look(dir)
	var out []discover.Candidate
	inDB := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.Type().IsRegular() || !dbName.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			continue
		}
		// The database file keeps its time while writes go to its log.
		mod := info.ModTime()
		if wal, err := os.Stat(p + "-wal"); err == nil && wal.ModTime().After(mod) {
			mod = wal.ModTime()
		}
		if !w.Since.IsZero() && mod.Before(w.Since) {
			continue
		}
		cands, err := dbSessions(p, p, w.Since, harness)
		if err != nil {
			f.Problem(p, err)
			continue
		}
		for _, c := range cands {
			inDB[c.ID] = true
		}
		out = append(out, cands...)
	}
	storage := filepath.Join(dir, "storage")
	if isLegacy(storage) {
		for _, c := range legacySessions(storage, w, harness) {
			if !inDB[c.ID] {
				out = append(out, c)
			}
		}
	}
	return out
}

// DB implements discover.Store: the sessions of an opencode database.
func (Agent) DB(_ *discover.Finder, path, name string, since time.Time, harness string) ([]discover.Candidate, error) {
	return dbSessions(path, name, since, harness)
}

// StoreDir implements discover.Store: a legacy file store (storage/).
func (Agent) StoreDir(_ *discover.Finder, dir string) ([]discover.Candidate, bool) {
	if filepath.Base(dir) != "storage" || !isLegacy(dir) {
		return nil, false
	}
	return legacySessions(dir, discover.Window{}, ""), true
}

// dbSessions lists the sessions of an opencode database updated since
// since; name is how the database is called in messages.
func dbSessions(path, name string, since time.Time, harness string) ([]discover.Candidate, error) {
	db, err := OpenDB(path)
	if err != nil {
		return nil, err
	}
	sessions, err := db.Sessions(since)
	if err != nil {
		return nil, err
	}
	candidate := func(s SessionInfo) discover.Candidate {
		return discover.Candidate{Name: name + "#" + s.ID, Store: path, Agent: manifest.AgentOpencode, ModTime: s.Updated, ID: s.ID, Harness: harness,
			Listed: &discover.Listed{Cwd: s.Directory, First: s.Created, Last: s.Updated}}
	}
	out := make([]discover.Candidate, 0, len(sessions))
	for _, s := range sessions {
		out = append(out, discover.StoreCandidate(candidate(s), func() (io.ReadCloser, error) { return db.Records(s), nil }, func() []discover.Candidate {
			var kids []discover.Candidate
			for _, k := range db.Descendants(s.ID) {
				kids = append(kids, discover.StoreCandidate(candidate(k), func() (io.ReadCloser, error) { return db.Records(k), nil }, nil))
			}
			return kids
		}))
	}
	return out, nil
}

// legacySessions lists the sessions of a legacy opencode file store whose
// activity is not older than the window.
func legacySessions(storage string, w discover.Window, harness string) []discover.Candidate {
	l := Legacy{Root: storage}
	sessions := l.Sessions()
	// The store's family tree, built once for all its sessions.
	var once sync.Once
	var kids map[string][]SessionInfo
	byID := map[string]LegacySession{}
	family := func(id string) []SessionInfo {
		once.Do(func() {
			infos := make([]SessionInfo, len(sessions))
			for i, a := range sessions {
				infos[i] = a.SessionInfo
				byID[a.ID] = a
			}
			kids = childrenOf(infos)
		})
		return descendants(id, kids)
	}
	var out []discover.Candidate
	for _, s := range sessions {
		if !w.Since.IsZero() && s.ModTime.Before(w.Since) {
			continue
		}
		c := legacyCandidate(l, s, harness)
		out = append(out, discover.StoreCandidate(c, c.Open, func() []discover.Candidate {
			var out []discover.Candidate
			for _, k := range family(s.ID) {
				out = append(out, legacyCandidate(l, byID[k.ID], harness))
			}
			return out
		}))
	}
	return out
}

func legacyCandidate(l Legacy, s LegacySession, harness string) discover.Candidate {
	last := s.Updated
	if last.IsZero() {
		last = s.ModTime
	}
	first := s.Created
	if first.IsZero() {
		first = last
	}
	c := discover.Candidate{Name: filepath.Join(l.Root, "session") + "#" + s.ID, Store: l.Root, Agent: manifest.AgentOpencode, ModTime: s.ModTime, ID: s.ID,
		Harness: harness, Listed: &discover.Listed{Cwd: s.Directory, First: first, Last: last}}
	return discover.StoreCandidate(c, func() (io.ReadCloser, error) { return l.Records(s), nil }, nil)
}

// Document implements agent.Agent: an opencode export (opencode export
// ID), or a record stream of sandbox's own (a store read out as one
// stream, starting with its session).
func (Agent) Document(b []byte) (agent.Head, int) {
	t := bytes.TrimLeft(b, " \t\r\n\x00")
	var h agent.Head
	switch {
	case IsExport(t):
		id, dir, created, updated := ExportHead(t)
		h.ID, h.Cwd = id, dir
		h.AddMillis(created)
		h.AddMillis(updated)
	case IsStream(t):
		line := t
		if i := bytes.IndexByte(t, '\n'); i >= 0 {
			line = t[:i]
		}
		doc := gjson.Parse(string(line))
		h.ID, h.Cwd = doc.Get("id").Str, doc.Get("directory").Str
		h.AddMillis(doc.Get("created").Int())
		h.AddMillis(doc.Get("updated").Int())
	default:
		return h, 0
	}
	return h, 3
}

// Shape implements agent.Agent: opencode's transcripts are documents.
func (Agent) Shape(*agent.Record, bool) (int, bool) { return 0, false }

// Note implements agent.Agent.
func (Agent) Note(*agent.Record, bool, *agent.Head) string { return "" }

// Stream implements agent.Agent.
func (Agent) Stream(ctx context.Context, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	return stream(ctx, body, t.Name, h)
}

// Resume implements agent.Agent: --session ID added to opencode's TUI or
// to opencode run, unless the command already picks a session itself.
func (Agent) Resume(command []string, id string) ([]string, bool) {
	return agent.ResumeFlagAfter(command, id, []string{"opencode"}, "run", "--session", "-s", "-c", "--continue")
}

// StoreOf implements discover.FileStore: a file under a storage/ folder's
// session/, message/ or part/ lies in that legacy store.
func (Agent) StoreOf(p string) (string, bool) {
	parts := strings.Split(p, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "storage" && (parts[i+1] == "session" || parts[i+1] == "message" || parts[i+1] == "part" || parts[i+1] == "project") {
			return strings.Join(parts[:i+1], "/"), true
		}
	}
	return "", false
}
