package recover

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// The replacers are tried in opencode's order; each case names the one
// that must decide it (docs/formats/opencode.md §4).
func TestOpencodeReplace(t *testing.T) {
	for _, tc := range []struct {
		name, content, old, new string
		all                     bool
		want, how               string
		err                     error
	}{
		{"exact", "a := 1\nb := 2\n", "b := 2", "b := 3", false, "a := 1\nb := 3\n", "simple", nil},
		{"exact twice is refused", "a\nb\na\n", "a", "c", false, "", "", ErrOpencodeAmbiguous},
		{"exact twice with replaceAll", "a\nb\na\n", "a", "c", true, "c\nb\nc\n", "simple", nil},
		{"lines equal once trimmed", "  foo()  \nbar\n", "foo()\nbar", "baz()", false, "baz()\n", "line-trimmed", nil},
		{"final newline of oldString dropped", "x\n  y\nz\n", "x\ny\n", "w", false, "w\nz\n", "line-trimmed", nil},
		{"block by its anchors", "func a() {\n  x := 1\n  y := 2\n}\n", "func a() {\n  x := 100\n  y := 2\n}", "func a() {}", false, "func a() {}\n", "block-anchor", nil},
		{"the most alike of several blocks", "if a {\n  one()\n}\nif a {\n  two()\n}\n", "if a {\n  twoo()\n}", "if b {\n}", false, "if a {\n  one()\n}\nif b {\n}\n", "block-anchor", nil},
		{"whitespace runs collapsed", "if (a  &&  b) {\n", "if (a && b) {", "if (a || b) {", false, "if (a || b) {\n", "whitespace-normalized", nil},
		{"part of a line, whitespace collapsed", "abc def ghi\n", "  def  ", "DEF", false, "abc DEF ghi\n", "whitespace-normalized", nil},
		{"escapes undone", "say \"hi\"\n", `say \"hi\"`, "say 'hi'", false, "say 'hi'\n", "escape-normalized", nil},
		{"not there", "abc\n", "xyz", "q", false, "", "", ErrOpencodeNotFound},
		{"replaceAll expands $& like JavaScript", "x x", "x", "[$&$$]", true, "[x$] [x$]", "simple", nil},
		{"a single replacement takes $ literally", "x y", "x", "[$&]", false, "[$&] y", "simple", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, how, err := opencodeReplace(tc.content, tc.old, tc.new, tc.all)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v (got %q by %s)", err, tc.err, got, how)
				}
				return
			}
			if err != nil || got != tc.want || how != tc.how {
				t.Fatalf("got %q by %s (%v), want %q by %s", got, how, err, tc.want, tc.how)
			}
		})
	}
	if _, _, err := opencodeReplace("a", "a", "a", false); err == nil {
		t.Fatal("an edit that changes nothing was accepted; opencode refuses it")
	}
}

func TestApplyOpencodeDiff(t *testing.T) {
	for _, tc := range []struct {
		name, pre, diff, want string
		ok                    bool
	}{
		{"whole lines", "def greet():\n    print('hi')\n",
			"Index: f\n====\n--- f\n+++ f\n@@ -1,2 +1,2 @@\n def greet():\n-    print('hi')\n+    print(\"hello\")\n",
			"def greet():\n    print(\"hello\")\n", true},
		{"indentation trimmed by trimDiff is put back", "class A:\n    def f(self):\n        return 1\n",
			"--- f\n+++ f\n@@ -2,2 +2,2 @@\n def f(self):\n-    return 1\n+    return 2\n",
			"class A:\n    def f(self):\n        return 2\n", true},
		{"a line added at the end without newline", "a\n", "@@ -1,1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n", "a\nb", true},
		{"a diff that does not fit", "x\ny\n", "@@ -1,2 +1,2 @@\n x\n-z\n+w\n", "", false},
		{"no old line to tell the indentation by", "", "@@ -0,0 +1,1 @@\n+a\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ApplyOpencodeDiff(tc.pre, tc.diff)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Fatalf("got %q %v, want %q %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// An opencode edit whose recorded after-image differs from the replay (its
// formatter ran) keeps the recorded content, exact, with a note and no
// drift; one with only inputs on a host copy is host-based, its fuzzy match
// reported; a failed one is never replayed.
func TestOpencodeEditReplay(t *testing.T) {
	oc := func(old, new string, ev ...manifest.Evidence) manifest.Op {
		return manifest.Op{Kind: manifest.KindEdit, Tool: "edit", Paths: []string{"/w/a.py"}, Outcome: manifest.OutcomeApplied,
			Edits: []manifest.Edit{{Old: old, New: new}}, Evidence: ev, Provenance: manifest.Provenance{Transcript: "db#s", Line: 3, Carrier: manifest.CarrierOpencode}}
	}
	pre := manifest.Evidence{Path: "/w/a.py", Kind: manifest.EvidencePre, Content: "x = 1\n"}
	post := manifest.Evidence{Path: "/w/a.py", Kind: manifest.EvidencePost, Content: "x = 2  # formatted\n"}
	res, _ := reconstruct([]manifest.Op{oc("x = 1", "x = 2", pre, post)}, nil, ReconstructOptions{})
	f := res[0]
	if f.Final.Text != "x = 2  # formatted\n" || f.Confidence != Exact || len(f.Drift) != 0 || len(f.Notes) != 1 {
		t.Fatalf("formatted edit: %+v", f)
	}
	// A newer version's diff, taken after the formatter, is followed; its
	// trimmed indentation put back is a guess, so the file is not exact.
	prePy := manifest.Evidence{Path: "/w/a.py", Kind: manifest.EvidencePre, Content: "class A:\n    def f(self):\n        return 1\n"}
	trimmed := manifest.Evidence{Path: "/w/a.py", Kind: manifest.EvidenceDiff, Content: "@@ -2,2 +2,2 @@\n def f(self):\n-    return 1\n+    return (2)\n"}
	res, _ = reconstruct([]manifest.Op{oc("return 1", "return 2", prePy, trimmed)}, nil, ReconstructOptions{})
	f = res[0]
	if f.Final.Text != "class A:\n    def f(self):\n        return (2)\n" || f.Confidence == Exact || len(f.Notes) != 2 {
		t.Fatalf("trimmed diff: %+v", f)
	}
	host := func(string) ([]byte, bool, bool) { return []byte("  x = 1  \ny = 2\n"), true, true }
	failed := oc("y = 2", "y = 9")
	failed.Outcome = manifest.OutcomeFailed
	res, _ = reconstruct([]manifest.Op{oc("x = 1\ny = 2", "x = 3\ny = 2"), failed}, host, ReconstructOptions{})
	f = res[0]
	if f.Final.Text != "x = 3\ny = 2\n" || f.Confidence != HostBased || len(f.Fuzz) != 1 || !strings.Contains(f.Fuzz[0], "line-trimmed") {
		t.Fatalf("host replay: %+v", f)
	}
}
