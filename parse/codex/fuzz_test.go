package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no rollout, however damaged, makes the parser panic
// or lose its line numbers.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../fixtures/corpus/codex/*.jsonl")
	files = append(files, "../../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
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
		res, err := Parse(context.Background(), bytes.NewReader(data), "f.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range res.Ops {
			if op.Provenance.Line < 1 {
				t.Fatalf("op without a line: %+v", op)
			}
		}
	})
}
