package applypatch

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that any text parses or fails cleanly, and that hunks
// point at their lines.
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
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text)
		if err != nil {
			return
		}
		for _, h := range p.Hunks {
			if h.Line < 2 {
				t.Fatalf("hunk line %d", h.Line)
			}
		}
		_, _ = FromScript(text)
	})
}
