package applypatch

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// FuzzParse checks the apply_patch grammar on any text: it parses or fails
// cleanly; hunks point at their lines; and a parsed patch, printed in the
// grammar's canonical form (format) and parsed again, is the same patch,
// whose printing is the same text. So nothing Parse accepts is read in a
// way the grammar cannot write back, and no two spellings of one patch
// read differently once printed.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../fixtures/conformance/codex-apply-patch/scenarios/*/patch.txt")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("<<'EOF'\n*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@ x\n-a\n+b\n*** End of File\n*** End Patch\nEOF")
	f.Add("*** Begin Patch\r\n*** Update File:  spaced \r\n\r\n-a\r\r\n\r\n \r\n+b\t\r\n@@ \r\n x\r\n*** Add File: e\r\n*** Delete File: d\r\n*** End Patch\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text)
		_, _ = FromScript(text)
		if err != nil {
			return
		}
		for _, h := range p.Hunks {
			if h.Line < 2 {
				t.Fatalf("hunk line %d", h.Line)
			}
		}
		printed := format(p)
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("the printed patch does not parse: %v\n%q\nfrom %q", err, printed, text)
		}
		if !samePatch(p, again) {
			t.Fatalf("printed and parsed again, the patch differs:\n%+v\n%+v\nprinted %q", p.Hunks, again.Hunks, printed)
		}
		if twice := format(again); twice != printed {
			t.Fatalf("printing is not stable:\n%q\n%q", printed, twice)
		}
	})
}

// format prints a patch in the grammar's canonical form (formats/codex.md
// §4.2): every chunk under its own @@ header, its removed lines before its
// added ones (a context line is both), End of File after the chunk it
// ends. Lines end in CRLF: the parser drops one CR before each LF, so a
// line that itself ends in CR keeps it.
func format(p *manifest.Patch) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s); b.WriteString("\r\n") }
	line(beginMarker)
	for _, h := range p.Hunks {
		switch h.Kind {
		case manifest.HunkAdd:
			line(addMarker + h.Path)
			for _, l := range strings.SplitAfter(h.Contents, "\n") {
				if l != "" {
					line("+" + strings.TrimSuffix(l, "\n"))
				}
			}
		case manifest.HunkDelete:
			line(deleteMarker + h.Path)
		case manifest.HunkUpdate:
			line(updateMarker + h.Path)
			if h.MovePath != "" {
				line(moveMarker + h.MovePath)
			}
			for _, c := range h.Chunks {
				if c.Context != nil {
					line("@@ " + *c.Context)
				} else {
					line("@@")
				}
				for _, l := range c.OldLines {
					line("-" + l)
				}
				for _, l := range c.NewLines {
					line("+" + l)
				}
				if c.EOF {
					line(eofMarker)
				}
			}
		}
	}
	line(endMarker)
	return b.String()
}

// samePatch compares two patches but for where their hunks were.
func samePatch(a, b *manifest.Patch) bool {
	if len(a.Hunks) != len(b.Hunks) {
		return false
	}
	for i := range a.Hunks {
		x, y := a.Hunks[i], b.Hunks[i]
		x.Line, y.Line = 0, 0
		if len(x.Chunks) == 0 && len(y.Chunks) == 0 {
			x.Chunks, y.Chunks = nil, nil
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
