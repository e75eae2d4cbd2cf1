package recover

import (
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

func gooseLine(n int) *int { return &n }

// Goose's str_replace, insert and exact edit, on their own
// (docs/formats/goose.md, "Edit semantics").
func TestGooseApply(t *testing.T) {
	for _, tc := range []struct {
		name, tool, file string
		edit             manifest.Edit
		want, err        string
		fuzzy            bool
	}{
		{"replace exact", gooseReplace, "a\nb\nc\n", manifest.Edit{Old: "b", New: "B"}, "a\nB\nc\n", "", false},
		{"replace ensures the final newline", gooseReplace, "a\nb", manifest.Edit{Old: "b", New: "B"}, "a\nB\n", "", false},
		{"replace makes CRLF and CR LF", gooseReplace, "a\r\nb\r\nc\rd\r\n", manifest.Edit{Old: "b\r\nc", New: "B\r\nC"}, "a\nB\nC\nd\n", "", false},
		{"replace drops the BOM", gooseReplace, "\uFEFFa\nb\n", manifest.Edit{Old: "a", New: "A"}, "A\nb\n", "", false},
		{"replace refuses two", gooseReplace, "x\nx\n", manifest.Edit{Old: "x", New: "y"}, "", "occurs 2 times", false},
		{"replace not found", gooseReplace, "x\n", manifest.Edit{Old: "zz", New: "y"}, "", "not found", false},
		{"fuzzy drops old_str's final newline", gooseReplace, "a  \nb\n", manifest.Edit{Old: "a\n", New: "A"}, "A\nb\n", "", true},
		{"exact keeps trailing blank lines", gooseReplace, "a \n\n\n", manifest.Edit{Old: "a", New: "b"}, "b \n\n\n", "", false},
		{"fuzzy file ending in blank lines", gooseReplace, "a \n\n\n", manifest.Edit{Old: "a\n\n", New: "b"}, "b\n", "", true},
		{"replace fuzzy normalises the whole file", gooseReplace, "say \u201chi\u201d  \nkeep \u2014 this \t\nend\n",
			manifest.Edit{Old: "say \"hi\"\nkeep - this", New: "say 'hi'\nkeep - that"}, "say 'hi'\nkeep - that\nend\n", "", true},
		{"fuzzy straightens lines it does not touch", gooseReplace, "a \u2018q\u2019\nb  \n",
			manifest.Edit{Old: "b", New: "B"}, "a \u2018q\u2019\nB  \n", "", false},
		{"fuzzy unique required", gooseReplace, "x  \ny\nx\t\ny\n", manifest.Edit{Old: "x \ny", New: "z"}, "", "occurs 2 times", true},
		{"insert at the top", gooseInsert, "a\nb\n", manifest.Edit{New: "x", InsertLine: gooseLine(0)}, "x\na\nb\n", "", false},
		{"insert after line 1", gooseInsert, "a\nb\n", manifest.Edit{New: "x\ny", InsertLine: gooseLine(1)}, "a\nx\ny\nb\n", "", false},
		{"insert keeps new_str's final newline as an empty line", gooseInsert, "a\nb\n", manifest.Edit{New: "x\n", InsertLine: gooseLine(1)}, "a\nx\n\nb\n", "", false},
		{"insert into an empty file", gooseInsert, "", manifest.Edit{New: "x", InsertLine: gooseLine(0)}, "x\n", "", false},
		{"insert at the end (-1)", gooseInsert, "a\nb", manifest.Edit{New: "x", InsertLine: gooseLine(-1)}, "a\nb\nx\n", "", false},
		{"insert before the last line (-2)", gooseInsert, "a\nb\n", manifest.Edit{New: "x", InsertLine: gooseLine(-2)}, "a\nx\nb\n", "", false},
		{"insert at N = the line count", gooseInsert, "a\nb\n", manifest.Edit{New: "x", InsertLine: gooseLine(2)}, "a\nb\nx\n", "", false},
		{"insert past the end", gooseInsert, "a\n", manifest.Edit{New: "x", InsertLine: gooseLine(5)}, "", "outside the file", false},
		{"insert too far back", gooseInsert, "a\n", manifest.Edit{New: "x", InsertLine: gooseLine(-3)}, "", "outside the file", false},
		{"insert in CRLF", gooseInsert, "a\r\nb\r\n", manifest.Edit{New: "x", InsertLine: gooseLine(1)}, "a\nx\nb\n", "", false},
		{"exact edit", gooseExact, "a b\r\nc", manifest.Edit{Old: "b\r\nc", New: "B"}, "a B", "", false},
		{"exact edit does not normalise", gooseExact, "a  \nb\n", manifest.Edit{Old: "a\nb", New: "B"}, "", "not found", false},
		{"exact edit unique", gooseExact, "a a", manifest.Edit{Old: "a", New: "B"}, "", "occurs 2 times", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			var fuzzy bool
			var err error
			switch {
			case tc.tool == gooseExact:
				got, err = applyGooseExact(tc.file, tc.edit)
			case tc.tool == gooseInsert:
				got, err = applyGooseInsert(tc.file, *tc.edit.InsertLine, tc.edit.New)
			default:
				got, fuzzy, err = applyGooseReplace(tc.file, tc.edit)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q (got %q)", err, tc.err, got)
				}
				return
			}
			if err != nil || got != tc.want || fuzzy != tc.fuzzy {
				t.Fatalf("got %q fuzzy %v (%v), want %q fuzzy %v", got, fuzzy, err, tc.want, tc.fuzzy)
			}
		})
	}
}

func gooseOp(line int, tool string, e ...manifest.Edit) manifest.Op {
	return manifest.Op{Kind: manifest.KindEdit, Tool: tool, Paths: []string{"/w/a.txt"}, Outcome: manifest.OutcomeApplied, Edits: e,
		Provenance: manifest.Provenance{Transcript: "s.jsonl", Line: line, Carrier: manifest.CarrierGoose}}
}

func gooseWrite(line int, content string) manifest.Op {
	return manifest.Op{Kind: manifest.KindWrite, Tool: "write", Paths: []string{"/w/a.txt"}, Outcome: manifest.OutcomeApplied, Content: &content,
		Provenance: manifest.Provenance{Transcript: "s.jsonl", Line: line, Carrier: manifest.CarrierGoose}}
}

// A replay through the reconstructor: undo_edit goes back through the
// file's edits one at a time, a write is not undone, a fuzzy match is
// reported, a failed edit is not replayed, an undo with no edit to undo
// leaves the content unknown.
func TestGooseReplay(t *testing.T) {
	failed := gooseOp(5, gooseReplace, manifest.Edit{Old: "one", New: "nope"})
	failed.Outcome = manifest.OutcomeFailed
	ops := []manifest.Op{
		gooseWrite(1, "one\ntwo\n"),
		gooseOp(2, gooseReplace, manifest.Edit{Old: "two", New: "TWO"}),
		gooseOp(3, gooseInsert, manifest.Edit{New: "zero", InsertLine: gooseLine(0)}),
		gooseOp(4, gooseUndo),
		failed,
		gooseOp(6, gooseReplace, manifest.Edit{Old: "one", New: "ONE"}),
		gooseOp(7, gooseUndo),
		gooseOp(8, gooseUndo),
	}
	res, _ := reconstruct(ops, noBase, ReconstructOptions{})
	f := res[0]
	if f.Final.Text != "one\ntwo\n" || f.Confidence != Exact || len(f.Fuzz) != 0 {
		t.Fatalf("undo twice: %q %s %+v", f.Final.Text, f.Confidence, f)
	}
	// One undo more than there were edits: the first write is not undone.
	res, _ = reconstruct(append(ops, gooseOp(9, gooseUndo)), noBase, ReconstructOptions{})
	if f := res[0]; f.Confidence != Unrecoverable || !strings.Contains(f.Reason, "s.jsonl:9: undo_edit") {
		t.Fatalf("undo past the history: %+v", f)
	}
	host := func(string) ([]byte, bool, bool) { return []byte("\uFEFFx \u201cq\u201d  \r\ny\r\n"), true, true }
	res, _ = reconstruct([]manifest.Op{gooseOp(2, gooseReplace, manifest.Edit{Old: "x \"q\"\ny", New: "X"})}, host, ReconstructOptions{})
	if f := res[0]; f.Final.Text != "X\n" || f.Confidence != HostBased || len(f.Fuzz) != 1 || !strings.Contains(f.Fuzz[0], "fuzzy") {
		t.Fatalf("fuzzy on a CRLF host copy: %q %+v", f.Final.Text, f)
	}
	res, _ = reconstruct([]manifest.Op{gooseWrite(1, "a\n"), gooseOp(2, gooseExact, manifest.Edit{Old: "b", New: "c"})}, noBase, ReconstructOptions{})
	if f := res[0]; f.Confidence != Unrecoverable || !strings.Contains(f.Reason, "before not found") {
		t.Fatalf("exact edit that does not apply: %+v", f)
	}
}

// FuzzGooseApply checks that no file or edit makes Goose's rules panic,
// and that what str_replace and insert write ends with a newline, in LF.
func FuzzGooseApply(f *testing.F) {
	f.Add("a\r\nb\n", "b", "c", 0)
	f.Add("\uFEFFx \u201cq\u201d  \ny\n", "x \"q\"", "z", -1)
	f.Fuzz(func(t *testing.T, text, old, neu string, line int) {
		if out, _, err := applyGooseReplace(text, manifest.Edit{Old: old, New: neu}); err == nil && (!strings.HasSuffix(out, "\n") || strings.Contains(out, "\r")) {
			t.Fatalf("str_replace wrote %q", out)
		}
		if out, err := applyGooseInsert(text, line, neu); err == nil && !strings.HasSuffix(out, "\n") {
			t.Fatalf("insert wrote %q", out)
		}
		_, _ = applyGooseExact(text, manifest.Edit{Old: old, New: neu})
	})
}

// The newer edit matches a CRLF file's bytes, and leaves its line endings
// as they were; str_replace makes the file LF.
func TestGooseCRLF(t *testing.T) {
	host := func(string) ([]byte, bool, bool) { return []byte("a\r\nb\r\nc\r\n"), true, true }
	res, _ := reconstruct([]manifest.Op{gooseOp(1, gooseExact, manifest.Edit{Old: "a\r\nb", New: "A\r\nB"})}, host, ReconstructOptions{})
	if f := res[0]; f.Final.Text != "A\r\nB\r\nc\r\n" || f.Confidence != HostBased {
		t.Fatalf("exact edit on CRLF: %q %+v", f.Final.Text, f)
	}
	res, _ = reconstruct([]manifest.Op{gooseOp(1, gooseReplace, manifest.Edit{Old: "a\r\nb", New: "A\nB"})}, host, ReconstructOptions{})
	if f := res[0]; f.Final.Text != "A\nB\nc\n" {
		t.Fatalf("str_replace on CRLF: %q %+v", f.Final.Text, f)
	}
}
