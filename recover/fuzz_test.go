package recover

import (
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// FuzzApplyChunks checks the applier on arbitrary content and chunks: no
// panic, and a success always ends with a newline, as codex's does (or is
// empty, when every line was removed).
func FuzzApplyChunks(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", "", false, true)
	f.Add("x\r\ny\r\n", "y", "Y", "x", true, false)
	f.Add("", "", "new", "", false, true)
	f.Add("dup\ndup\n", "dup", "", "", false, false)
	f.Fuzz(func(t *testing.T, content, old, new, ctx string, eof, faithful bool) {
		c := manifest.Chunk{OldLines: splitOrEmpty(old), NewLines: splitOrEmpty(new), EOF: eof}
		if ctx != "" {
			c.Context = &ctx
		}
		mode := Strict
		if faithful {
			mode = Faithful
		}
		out, _, err := ApplyChunks(content, "f", []manifest.Chunk{c}, mode)
		if err == nil && out != "" && !strings.HasSuffix(out, "\n") {
			t.Fatalf("result %q does not end with a newline", out)
		}
	})
}

// FuzzMerge3 checks that a merge of a text with itself changes nothing and
// that merging never panics.
func FuzzMerge3(f *testing.F) {
	f.Add("a\nb\n", "a\nB\n", "A\nb\n")
	f.Add("", "x", "y\n")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		if got, n := Merge3(base, ours, ours, "o", "t"); n != 0 || got != ours {
			t.Fatalf("merging %q with itself gave %q (%d conflicts)", ours, got, n)
		}
		Merge3(base, ours, theirs, "o", "t")
		_ = UnifiedDiff("a", "b", ours, theirs)
	})
}

func splitOrEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// FuzzApplyEdit checks Claude Code's replacement rules: no panic; a
// successful single replacement removes one occurrence of old (or old plus
// the newline it eats) and inserts new.
func FuzzApplyEdit(f *testing.F) {
	f.Add("a\nb\nc\n", "b\n", "", false)
	f.Add("x x x", "x", "y", true)
	f.Add("", "", "new", false)
	f.Add("dup dup", "dup", "one", false)
	f.Fuzz(func(t *testing.T, orig, old, new string, all bool) {
		out, err := ApplyEdit(orig, manifest.Edit{Old: old, New: new, ReplaceAll: all})
		if err != nil || old == "" || all {
			return
		}
		eaten := old
		if new == "" && !strings.HasSuffix(old, "\n") && strings.Contains(orig, old+"\n") {
			eaten = old + "\n"
		}
		if len(out) != len(orig)-len(eaten)+len(new) {
			t.Fatalf("ApplyEdit(%q, %q→%q) = %q", orig, old, new, out)
		}
	})
}

// FuzzEditNotebook checks that cell edits on any JSON never panic.
func FuzzEditNotebook(f *testing.F) {
	f.Add(`{"cells":[{"cell_type":"code","id":"a","source":"x","outputs":[1]}],"nbformat":4}`, "a", "y", "replace")
	f.Add(`{"cells":[]}`, "", "first", "insert")
	f.Fuzz(func(t *testing.T, nb, id, src, mode string) {
		_, _ = EditNotebook(nb, manifest.NotebookCell{CellID: id, NewSource: src, EditMode: mode})
	})
}
