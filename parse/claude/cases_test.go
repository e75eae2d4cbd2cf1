package claude

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/agentsandbox/sandbox/manifest"
)

// caseOps parses the session of a case in testdata/cases and returns its
// operations by call id (file-history observations by path).
func caseOps(t *testing.T, name string) map[string]manifest.Op {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/cases/" + name)
	if err != nil {
		t.Fatal(err)
	}
	backups := map[string][]byte{}
	var session []byte
	for _, f := range ar.Files {
		if rest, ok := strings.CutPrefix(f.Name, "file-history/"); ok {
			backups[rest] = f.Data
		}
		if f.Name == "session.jsonl" {
			session = f.Data
		}
	}
	opts := Options{Backup: func(sid, name string) ([]byte, bool) { b, ok := backups[sid+"/"+name]; return b, ok }}
	res, err := parse(context.Background(), bytes.NewReader(session), "session.jsonl", opts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]manifest.Op{}
	for _, op := range res.Ops {
		key := op.Provenance.CallID
		if key == "" {
			key = op.Paths[0] + "@" + string(op.Evidence[0].Kind)
		}
		if _, dup := out[key]; dup {
			t.Fatalf("%s: two operations for %s", name, key)
		}
		out[key] = op
	}
	return out
}

// TestCaseContents checks what the goldens of testdata/cases summarise
// away: the content, replacements and effects each operation carries.
func TestCaseContents(t *testing.T) {
	ops := caseOps(t, "outcomes.txtar")
	if c := ops["toolu_01"].Content; c == nil || *c != "written\n" {
		t.Errorf("a Write whose result says it wrote other content: %v, want the result's", c)
	}
	if e := ops["toolu_02"]; !reflect.DeepEqual(e.Edits, []manifest.Edit{{Old: "a=1", New: "a=3"}}) || !e.Evidence[0].LFNormalized || e.Evidence[0].Content != "a=1\r\nb=2\r\n" {
		t.Errorf("a user-modified Edit: %+v %+v, want the result's newString and the CRLF originalFile as it is", e.Edits, e.Evidence)
	}
	if e := ops["toolu_03"].Edits; len(e) != 1 || !e[0].ReplaceAll {
		t.Errorf("replace_all: %+v", e)
	}
	if e := ops["toolu_04"].Edits; !reflect.DeepEqual(e, []manifest.Edit{{Old: "x", New: "y"}, {Old: "p", New: "q", ReplaceAll: true}}) {
		t.Errorf("MultiEdit: %+v", e)
	}
	for id, want := range map[string]string{"toolu_01": "claude:toolu_01", "toolu_12": "claude:toolu_12"} {
		if got := ops[id].Identity; got != want {
			t.Errorf("%s: identity %q, want %q", id, got, want)
		}
	}

	ops = caseOps(t, "subagents.txtar")
	if e := ops["toolu_s2"]; len(e.Edits) != 1 || e.Edits[0] != (manifest.Edit{Old: "agent", New: "subagent"}) || len(e.Evidence) != 0 {
		t.Errorf("a subagent Edit without toolUseResult: %+v %+v, want its input and no evidence", e.Edits, e.Evidence)
	}
	if m := ops["toolu_m1"]; m.Identity != "claude:toolu_m1" || m.Content == nil || *m.Content != "mirrored\n" || m.Provenance.Carrier != "subagent_tool_use" {
		t.Errorf("the mirrored Write: %+v", m)
	}

	ops = caseOps(t, "history.txtar")
	for key, want := range map[string]string{
		"/home/u/proj/src/a.py@base": "x = 1\n",
		"/home/u/proj/src/a.py@post": "x = 2\n# by hand\n",
		"/etc/hosts@base":            "127.0.0.1 localhost\n",
	} {
		if ev := ops[key].Evidence; len(ev) != 1 || ev[0].Content != want {
			t.Errorf("%s: %+v, want %q", key, ev, want)
		}
	}
	if ev := ops["/home/u/proj/docs/new.md@base"].Evidence; len(ev) != 1 || !ev[0].Absent {
		t.Errorf("a v1 record without a backup: %+v, want absent", ev)
	}
	if r := ops["toolu_h2"].Evidence; len(r) != 1 || r[0].Content != "x = 2" || !r[0].NoFinalNewline || !r[0].LFNormalized {
		t.Errorf("a whole-file Read: %+v", r)
	}

	ops = caseOps(t, "damage.txtar")
	hello := "hello\n"
	want := []manifest.ShellEffect{
		{Kind: manifest.ShellDelete, Verb: "rm -f", Paths: []string{"/repo/old.log"}},
		{Kind: manifest.ShellMove, Verb: "mv", Paths: []string{"/repo/a.txt", "/repo/b.txt"}},
		{Kind: manifest.ShellCreate, Verb: "cat <<", Paths: []string{"/repo/c.txt"}, Content: &hello},
	}
	if got := ops["toolu_d3"].Effects; len(got) != len(want) {
		t.Errorf("the glued Bash call: effects %+v", got)
	} else {
		for i := range want {
			g, w := got[i], want[i]
			if g.Kind != w.Kind || !reflect.DeepEqual(g.Paths, w.Paths) || (w.Content != nil && (g.Content == nil || *g.Content != *w.Content)) {
				t.Errorf("effect %d: %+v, want %+v", i, g, w)
			}
		}
	}
	if c := ops["toolu_d4"].Content; c == nil || *c != "caf\u00e9 \u2028 ok\n" {
		t.Errorf("raw U+2028 in content: %v", c)
	}
}
