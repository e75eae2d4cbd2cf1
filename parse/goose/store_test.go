package goose

import (
	"database/sql"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/fixtures/crushdb"
	"github.com/agentsandbox/sandbox/fixtures/goosedb"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
)

const spec = `{"session": {"id": "20251105_1", "name": "one", "working_dir": "/w/a", "created_at": "2025-11-05 10:00:00", "updated_at": "2025-11-05 10:05:00"}}
{"session": {"id": "20250614_173000", "name": "imported", "working_dir": "/w/old", "created_at": 1749922200, "updated_at": 1749922300}}
{"session": {"id": "20251106_1", "name": "sub", "type": "sub_agent", "working_dir": "relative"}}
{"message": {"session": "20251105_1", "role": "user", "created": 1762336801, "content": [{"type": "text", "text": "hi"}]}}
{"message": {"session": "20251106_1", "role": "user", "created": 1762423200, "content": [{"type": "text", "text": "hi"}]}}
`

// buildDB writes sessions.db of spec in dir.
func buildDB(t *testing.T, dir, spec string) string {
	t.Helper()
	p := filepath.Join(dir, "sessions.db")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := goosedb.Build(p, strings.NewReader(spec)); err != nil {
		t.Fatal(err)
	}
	return p
}

func names(cands []discover.Candidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, filepath.Base(c.Name)+" "+c.ID)
	}
	return out
}

// A home's sessions folder: the database's sessions (their times from the
// rows and the messages, the working directory when it is absolute), and
// the legacy files, less the one the database imported.
func TestScan(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	buildDB(t, dir, spec)
	for _, n := range []string{"20250614_173000.jsonl", "20240101_090000.jsonl", "notes.txt"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte(`{"working_dir":"/w/x","description":"","message_count":0}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	var f discover.Finder
	cands := Agent{}.Scan(&f, home, discover.Window{}, "")
	want := []string{"sessions.db#20251105_1 20251105_1", "sessions.db#20250614_173000 20250614_173000", "sessions.db#20251106_1 20251106_1",
		"20240101_090000.jsonl 20240101_090000"}
	if got := names(cands); !slices.Equal(got, want) {
		t.Fatalf("candidates %q, want %q (problems %v)", got, want, f.Problems)
	}
	l := cands[0].Listed
	if l.Cwd != "/w/a" || !l.First.Equal(time.Date(2025, 11, 5, 10, 0, 0, 0, time.UTC)) || !l.Last.Equal(time.Date(2025, 11, 5, 10, 5, 0, 0, time.UTC)) {
		t.Fatalf("listed %+v", l)
	}
	if l := cands[1].Listed; !l.First.Equal(time.Unix(1749922200, 0)) || l.Cwd != "/w/old" {
		t.Fatalf("listed %+v", l)
	}
	if l := cands[2].Listed; l.Cwd != "" || !l.Last.Equal(time.Unix(1762423200, 0)) {
		t.Fatalf("listed %+v", l)
	}
	// The window: the database's sessions last active before it are left out.
	cands = Agent{}.Scan(&f, home, discover.Window{Since: time.Date(2025, 11, 6, 0, 0, 0, 0, time.UTC)}, "")
	if got := names(cands); !slices.Equal(got, []string{"sessions.db#20251106_1 20251106_1"}) {
		t.Fatalf("in the window: %q", got)
	}
	// A sessions folder met in a --from tree is read the same way.
	got, ok := Agent{}.StoreDir(&f, dir)
	if !ok || len(got) != 4 {
		t.Fatalf("StoreDir: %v %q", ok, names(got))
	}
	if _, ok := (Agent{}).StoreDir(&f, home); ok {
		t.Fatal("StoreDir took a folder that is not sessions/")
	}
}

// A damaged database is an error naming it; another agent's is not mine.
func TestNotReadable(t *testing.T) {
	dir := t.TempDir()
	p := buildDB(t, dir, spec)
	data, _ := os.ReadFile(p)
	cut := filepath.Join(dir, "cut.db")
	if err := os.WriteFile(cut, data[:8192], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := dbSessions(cut, cut, time.Time{}, "")
	if err == nil || !strings.Contains(err.Error(), cut) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("cut database: %v", err)
	}
	crush := filepath.Join(dir, "crush.db")
	if err := crushdb.Build(crush, strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	if _, err := (Agent{}).DB(nil, crush, crush, time.Time{}, ""); !errors.Is(err, discover.ErrNotMine) {
		t.Fatalf("a Crush database: %v", err)
	}
}

// A database Goose is writing to has its newest messages in the -wal
// file: they are read.
func TestWriteAheadLog(t *testing.T) {
	p := buildDB(t, t.TempDir(), spec)
	u := url.URL{Scheme: "file", Path: p}
	w, err := sql.Open("sqlite", u.String()+"?_pragma=journal_mode(wal)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20251105_1', 'assistant', '[{"type":"text","text":"in the log"}]', 1762336900)`); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("no -wal file: %v", err)
	}
	cands, err := dbSessions(p, p, time.Time{}, "")
	if err != nil || len(cands) != 3 {
		t.Fatalf("%v %d", err, len(cands))
	}
	rc, err := cands[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(data), "in the log") || !strings.HasPrefix(string(data), `{"goose":"session","id":"20251105_1"`) {
		t.Fatalf("stream:\n%s", data)
	}
}

func TestHome(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		env  func(string) string
		want string
	}{
		{env(), "/h/.local/share/goose"},
		{env("XDG_DATA_HOME", "/x"), "/x/goose"},
		{env("GOOSE_PATH_ROOT", "/r", "XDG_DATA_HOME", "/x"), "/r/data"},
		{env("GOOSE_PATH_ROOT", "rel", "XDG_DATA_HOME", "/x"), "/x/goose"},
	} {
		if got := (Agent{}).Home(tc.env, "/h"); got != tc.want {
			t.Errorf("Home = %q, want %q", got, tc.want)
		}
	}
}

func TestResume(t *testing.T) {
	for in, want := range map[string]string{
		"goose":                       "goose session --resume --session-id S",
		"goose session":               "goose session --resume --session-id S",
		"goose run -t hi":             "goose run --resume --session-id S -t hi",
		"goose session --resume":      "goose session --resume",
		"goose run --session-id X -r": "goose run --session-id X -r",
		"/usr/bin/goose --debug":      "/usr/bin/goose session --resume --session-id S --debug",
	} {
		got, ok := Agent{}.Resume(strings.Fields(in), "S")
		if !ok || strings.Join(got, " ") != want {
			t.Errorf("Resume(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	if _, ok := (Agent{}).Resume([]string{"claude"}, "S"); ok {
		t.Error("Resume took claude")
	}
}

// A record stream is a document of Goose's; a legacy file's lines are
// told by their shape.
func TestShape(t *testing.T) {
	h, rank := Agent{}.Document([]byte(`{"goose":"session","id":"20251105_1","cwd":"/w","created":1762336800,"updated":1762337100}` + "\n{}"))
	if rank == 0 || h.ID != "20251105_1" || h.Cwd != "/w" || !h.First.Equal(time.Unix(1762336800, 0)) || !h.Last.Equal(time.Unix(1762337100, 0)) {
		t.Fatalf("Document: %+v %d", h, rank)
	}
	if _, rank := (Agent{}).Document([]byte(`{"crush":"session"}`)); rank != 0 {
		t.Fatal("Document took Crush's stream")
	}
	rec := func(line string) *agent.Record {
		r := agent.NewRecord()
		gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
			if key, ok := agent.KeyOf([]byte(k.Str)); ok {
				r.Set(key, v)
			}
			return true
		})
		return r
	}
	for line, want := range map[string]int{
		`{"working_dir":"/w","description":"d","message_count":3}`:                    agent.RankDistinct,
		`{"role":"user","created":1749923359,"content":[{"type":"text","text":"x"}]}`: agent.RankMessage,
		`{"role":"user","created":"t","content":[]}`:                                  0,
		`{"role":"user","message":{},"created":1,"content":[]}`:                       0,
		`{"type":"user","role":"user","created":1,"content":[]}`:                      0,
	} {
		if got, _ := (Agent{}).Shape(rec(line), true); got != want {
			t.Errorf("Shape(%s) = %d, want %d", line, got, want)
		}
	}
	var hd agent.Head
	Agent{}.Note(rec(`{"working_dir":"/w/x","description":"d","message_count":3}`), true, &hd)
	Agent{}.Note(rec(`{"role":"user","created":1749923359,"content":[]}`), false, &hd)
	if hd.Cwd != "/w/x" || !hd.First.Equal(time.Unix(1749923359, 0)) {
		t.Fatalf("Note: %+v", hd)
	}
}
