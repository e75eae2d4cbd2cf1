package recover

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/manifest"
)

// TestApplyQwenEdit holds applyQwenEdit to Qwen Code's edit rules
// (docs/formats/qwen.md §5), one rule a case.
func TestApplyQwenEdit(t *testing.T) {
	for _, c := range []struct {
		name, text string
		e          manifest.Edit
		want       string // "" with err: an error whose text holds err
		loose      bool
		err        string
	}{
		{name: "literal", text: "a\nb\nc\n", e: manifest.Edit{Old: "b", New: "B"}, want: "a\nB\nc\n"},
		{name: "unique", text: "x x\n", e: manifest.Edit{Old: "x", New: "y"}, err: "occurs 2 times"},
		{name: "replace all", text: "x x\n", e: manifest.Edit{Old: "x", New: "y", ReplaceAll: true}, want: "y y\n"},
		{name: "not found", text: "a\n", e: manifest.Edit{Old: "z", New: "y"}, err: "not found"},
		{name: "identical", text: "a\n", e: manifest.Edit{Old: "a", New: "a"}, err: "identical"},
		{name: "empty old", text: "a\n", e: manifest.Edit{Old: "", New: "a"}, err: "empty old_string"},
		{name: "dollar is literal", text: "v = 1\n", e: manifest.Edit{Old: "1", New: "$&$1"}, want: "v = $&$1\n"},
		// The file's curly quotes and en dash stand for the model's ASCII; the
		// slice taken is the file's own, multibyte characters and all.
		{name: "unicode map", text: "say “hi” – now\nnext\n", e: manifest.Edit{Old: `say "hi" - now`, New: "say hello"}, want: "say hello\nnext\n", loose: true},
		{name: "unicode map after multibyte", text: "é “a”\n“a” b\n", e: manifest.Edit{Old: `"a" b`, New: "c"}, want: "é “a”\nc\n", loose: true},
		// Trailing whitespace in the file, none in old_string: whole lines match.
		{name: "trailing whitespace", text: "f() {  \n  x\t\n}\n", e: manifest.Edit{Old: "f() {\n  x\n}", New: "g()"}, want: "g()\n", loose: true},
		// Indentation must match: a line-based match never re-indents.
		{name: "indentation matters", text: "  a\n", e: manifest.Edit{Old: "a \n", New: "b"}, err: "not found"},
		// old_string ends with an empty line the file does not have there:
		// matched without it, and new_string loses its final newline.
		{name: "trailing empty line", text: "a  \n", e: manifest.Edit{Old: "a\n\n", New: "c\n"}, want: "c", loose: true},
		// Deleting text eats the newline after it.
		{name: "deletion eats newline", text: "keep\ndrop\nkeep2\n", e: manifest.Edit{Old: "drop", New: ""}, want: "keep\nkeep2\n"},
		{name: "bom kept", text: "\uFEFFa\n", e: manifest.Edit{Old: "a", New: "b"}, want: "\uFEFFb\n"},
		// Every occurrence of the slice is counted: a loose match found
		// twice is refused.
		{name: "loose twice", text: "“q”\n“q”\n", e: manifest.Edit{Old: `"q"`, New: "r"}, err: "occurs 2 times"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, loose, err := applyQwenEdit(c.text, c.e)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %q, %v; want an error with %q", out, err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case out != c.want || loose != c.loose:
				t.Fatalf("got %q (loose %v), want %q (loose %v)", out, loose, c.want, c.loose)
			}
		})
	}
}

// TestQwenReplay replays a Qwen Code session's edits and writes onto a
// CRLF file with a BOM, from the host's copy: both are kept, as Qwen Code
// keeps them; a new file is written as sent.
func TestQwenReplay(t *testing.T) {
	op := func(seq int, kind manifest.OpKind, p string) manifest.Op {
		return manifest.Op{Seq: seq, Kind: kind, Paths: []string{p}, Outcome: manifest.OutcomeApplied,
			Provenance: manifest.Provenance{Transcript: "s.jsonl", Line: seq + 1, Carrier: manifest.CarrierQwen}}
	}
	content := func(s string) *string { return &s }
	e1 := op(0, manifest.KindEdit, "/w/a.txt")
	e1.Edits = []manifest.Edit{{Old: "two", New: "TWO"}}
	w1 := op(1, manifest.KindWrite, "/w/b.txt")
	w1.Content = content("new\n")
	w2 := op(2, manifest.KindWrite, "/w/a.txt")
	w2.Content = content("x\ny\n")
	e2 := op(3, manifest.KindEdit, "/w/a.txt")
	e2.Edits = []manifest.Edit{{Old: "y\n", New: "z\n"}}
	base := func(p string) ([]byte, bool, bool) {
		if p == "/w/a.txt" {
			return []byte("\uFEFFone\r\ntwo\r\n"), true, true
		}
		return nil, false, true
	}
	files, _ := reconstruct([]manifest.Op{e1, w1, w2, e2}, base, ReconstructOptions{})
	got := map[string]string{}
	for _, f := range files {
		got[f.Path] = f.Final.Text
	}
	if got["/w/a.txt"] != "\uFEFFx\r\nz\r\n" || got["/w/b.txt"] != "new\n" {
		t.Fatalf("got %q", got)
	}
}

// FuzzApplyQwenEdit checks that no input makes Qwen Code's edit replay
// panic, accept an edit that changes nothing, lose a BOM, or, for a
// literal match of a unique old_string, do anything but replace it once.
func FuzzApplyQwenEdit(f *testing.F) {
	f.Add("say \u201chi\u201d  \nx\n", `say "hi"`, "y", false)
	f.Add("\uFEFFa\nb\n", "b", "", false)
	f.Add("a  \n", "a\n\n", "c\n", true)
	f.Fuzz(func(t *testing.T, in, old, repl string, all bool) {
		out, loose, err := applyQwenEdit(in, manifest.Edit{Old: old, New: repl, ReplaceAll: all})
		if err != nil {
			return
		}
		if out == in {
			t.Fatalf("an edit that changes nothing was accepted")
		}
		// A BOM is lost only if old_string itself named one. One appears
		// only from text that held a U+FEFF (a deletion can bring a
		// zero-width no-break space in the text to the front) or, in text
		// that is not UTF-8, from bytes a deletion joins.
		inBOM, outBOM := strings.HasPrefix(in, "\uFEFF"), strings.HasPrefix(out, "\uFEFF")
		if inBOM && !outBOM && !strings.HasPrefix(old, "\uFEFF") {
			t.Fatalf("the BOM was not kept: %q -> %q", in, out)
		}
		utf8In := utf8.ValidString(in) && utf8.ValidString(old) && utf8.ValidString(repl)
		if !inBOM && outBOM && utf8In && !strings.Contains(in, "\uFEFF") && !strings.Contains(repl, "\uFEFF") {
			t.Fatalf("a BOM was added: %q -> %q", in, out)
		}
		if !loose && repl != "" && strings.Count(in, old) == 1 && out != strings.Replace(in, old, repl, 1) {
			t.Fatalf("a literal unique match was not replaced once: %q", out)
		}
	})
}
