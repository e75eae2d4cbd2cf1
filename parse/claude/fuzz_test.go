package claude

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// FuzzParse checks that no transcript, however damaged, makes the Claude
// parser panic, lose a line number, or make an op without a file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../fixtures/corpus/claude/*.jsonl")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 32<<10 {
			data = data[:32<<10]
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse(context.Background(), bytes.NewReader(data), "f.jsonl", Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range res.Ops {
			if op.Provenance.Line < 1 || (op.Kind != manifest.KindShell && len(op.Paths) == 0) {
				t.Fatalf("bad op %+v", op)
			}
		}
	})
}
