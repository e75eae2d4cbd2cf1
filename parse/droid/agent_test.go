package droid

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
)

// record reads a head line's declared fields, as detection does.
func record(line string) *agent.Record {
	r := agent.NewRecord()
	gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
		if key, ok := agent.KeyOf([]byte(k.Str)); ok {
			r.Set(key, v)
		}
		return true
	})
	return r
}

// Droid claims its session_start and the message records only it writes;
// pi's messages (toolCall blocks, a numeric inner timestamp, short ids) and
// records of no shape stay someone else's.
func TestShape(t *testing.T) {
	for line, want := range map[string]int{
		`{"type":"session_start","id":"0b34cbcb-108c-4800-b68e-af7093c8cae9","title":"t","sessionTitle":"t","owner":"soph","version":2,"cwd":"/tmp/r"}`:                      agent.RankDistinct,
		`{"type":"message","id":"m1","timestamp":"2026-11-22T10:00:00Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Create","input":{}}]}}`: agent.RankMessage,
		`{"type":"message","id":"m2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}`:                                         agent.RankMessage,
		`{"type":"message","id":"a0000000-0000-4000-8000-000000000001","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`:                                   agent.RankMessage,
		// pi's: a numeric timestamp in the message, toolCall blocks, short ids.
		`{"type":"message","id":"a0000000-0000-4000-8000-000000000001","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1763681581544}}`: 0,
		`{"type":"message","id":"0000000a","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`:                                       0,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"x","name":"write","arguments":{}}]}}`:                                   0,
		`{"type":"message","id":"a0000000-0000-4000-8000-000000000001","message":{"role":"toolResult","content":[]}}`:                                                0,
		`{"type":"session","version":3,"id":"p","cwd":"/w"}`:                                                                                                         0,
		`{"type":"session_start"}`:            0,
		`{"type":"message","message":"text"}`: 0,
	} {
		if got, vote := (Agent{}).Shape(record(line), false); got != want || vote != (want > 0) {
			t.Errorf("Shape(%s) = %d, %v; want %d", line, got, vote, want)
		}
	}
}

// Note gives the session id, the working directory and the times.
func TestNote(t *testing.T) {
	var h agent.Head
	id := (Agent{}).Note(record(`{"type":"session_start","id":"0B34CBCB-108c-4800-b68e-af7093c8cae9","cwd":"/tmp/r","version":2}`), true, &h)
	(Agent{}).Note(record(`{"type":"message","id":"m","timestamp":"2026-11-22T10:00:00.000Z","message":{}}`), false, &h)
	if id != "0B34CBCB-108c-4800-b68e-af7093c8cae9" || h.Cwd != "/tmp/r" || h.First.IsZero() {
		t.Errorf("Note: id %q, head %+v", id, h)
	}
}

func TestResume(t *testing.T) {
	const id = "0b34cbcb-108c-4800-b68e-af7093c8cae9"
	for in, want := range map[string]string{
		"droid":                        "droid --resume " + id,
		"/usr/bin/droid --auto high":   "/usr/bin/droid --resume " + id + " --auto high",
		"droid --resume other":         "droid --resume other",
		"droid -r":                     "droid -r",
		"droid --fork other":           "droid --fork other",
		"droid resume other":           "droid resume other",
		"droid exec --auto low fix it": "droid exec --session-id " + id + " --auto low fix it",
		"droid exec --session-id x go": "droid exec --session-id x go",
		"droid exec -s x go":           "droid exec -s x go",
	} {
		got, ok := (Agent{}).Resume(strings.Fields(in), id)
		if !ok || strings.Join(got, " ") != want {
			t.Errorf("Resume(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := (Agent{}).Resume([]string{"claude"}, id); ok {
		t.Error("Resume took another agent's command")
	}
}

// The home is $FACTORY_HOME_OVERRIDE/.factory (an absolute value only),
// else ~/.factory.
func TestHome(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == homeEnv {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct{ env, home, want string }{
		{"", "/home/u", "/home/u/.factory"},
		{"/srv/f", "/home/u", "/srv/f/.factory"},
		{"relative/dir", "/home/u", "/home/u/.factory"},
		{"", "", ""},
	} {
		if got := (Agent{}).Home(env(c.env), c.home); got != c.want {
			t.Errorf("Home(%q, %q) = %q, want %q", c.env, c.home, got, c.want)
		}
	}
}

// Scan finds sessions/<project>/<id>.jsonl and sessions/<id>.jsonl, never
// the settings files beside them.
func TestScan(t *testing.T) {
	home := t.TempDir()
	for _, name := range []string{"sessions/-w-proj/a.jsonl", "sessions/-w-proj/a.settings.json", "sessions/b.jsonl", "sessions/b.settings.json", "settings.json"} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, c := range (Agent{}).Scan(&discover.Finder{}, home, discover.Window{}, "") {
		rel, _ := filepath.Rel(home, c.Path)
		got = append(got, filepath.ToSlash(rel))
	}
	slices.Sort(got)
	if want := []string{"sessions/-w-proj/a.jsonl", "sessions/b.jsonl"}; !slices.Equal(got, want) {
		t.Errorf("Scan found %v, want %v", got, want)
	}
}

// A Worker's session (a subagent's) is read as any session, with the
// session that called it as the one it came from; its calls are its own.
func TestWorker(t *testing.T) {
	data := `{"type":"session_start","id":"5f0e0000-0000-4000-8000-000000000002","title":"Create red.md and commit","sessionTitle":"worker: Create red.md and commit","owner":"soph","version":2,"cwd":"/tmp/e2e","callingSessionId":"0B34CBCB-108C-4800-B68E-AF7093C8CAE9","callingToolUseId":"toolu_01SC9sRHSef1vtNFtMrX9w6T"}
{"type":"message","id":"a0000000-0000-4000-8000-000000000001","timestamp":"2026-11-22T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_w","name":"Create","input":{"file_path":"docs/red.md","content":"# red\n"}}]}}
{"type":"message","id":"a0000000-0000-4000-8000-000000000002","timestamp":"2026-11-22T10:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_w","content":"created"}]}}
`
	res, err := parse(context.Background(), strings.NewReader(data), "5f0e0000-0000-4000-8000-000000000002.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Session
	if s.ID != "5f0e0000-0000-4000-8000-000000000002" || s.ForkedFrom != "0b34cbcb-108c-4800-b68e-af7093c8cae9" || s.Cwd != "/tmp/e2e" {
		t.Errorf("session %+v", s)
	}
	if len(res.Ops) != 1 || res.Ops[0].Paths[0] != "/tmp/e2e/docs/red.md" || res.Ops[0].Outcome != manifest.OutcomeApplied {
		t.Errorf("ops %+v", res.Ops)
	}
}

// The timeline has the prompts (without the system reminders) and every
// call, those that change nothing too, each once however often its lines
// were written.
func TestTimeline(t *testing.T) {
	data, err := os.ReadFile("testdata/cases/damage.txtar")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(data, []byte("-- session.jsonl --\n"))
	body, _, _ = bytes.Cut(body, []byte("-- want.json --\n"))
	var events []manifest.Event
	if _, err := stream(context.Background(), bytes.NewReader(body), "s.jsonl", emit.Handler{Event: func(e manifest.Event) { events = append(events, e) }}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		switch e.Kind {
		case manifest.EventTurn:
			got = append(got, "turn "+e.Text)
		case manifest.EventCall:
			got = append(got, "call "+e.Tool+" "+string(e.Outcome))
		}
	}
	want := []string{"turn go", "call Create applied", "call Write applied", "call Edit applied", "call Create applied", "call MultiEdit failed", "call Create applied"}
	if !slices.Equal(got, want) {
		t.Errorf("timeline %q, want %q", got, want)
	}
}

func TestUnnumbered(t *testing.T) {
	for in, want := range map[string]string{
		"     1\tone\n     2\ttwo\n": "one\ntwo",
		"1→one\n2→\n3→three":         "one\n\nthree",
		"     1\tone\n     3\tthree": "",
		"     1\tone\n     2→two":    "",
		"     2\ttwo":                "",
		"01\tone":                    "",
		"one\ntwo":                   "",
		"":                           "",
	} {
		got, ok := unnumbered(in)
		if got != want || ok != (want != "") {
			t.Errorf("unnumbered(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestStatedExit(t *testing.T) {
	for in, want := range map[string]string{
		"Exit code: 1\nlots of output":        "1",
		"output\nexit code 0":                 "0",
		"output\nCommand exited with code 2.": "2",
		"exit status 127":                     "127",
		"the exit code was not shown":         "",
	} {
		if got, _ := statedExit(in); got != want {
			t.Errorf("statedExit(%q) = %q, want %q", in, got, want)
		}
	}
}
