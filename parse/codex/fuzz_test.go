package codex

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

// FuzzParse checks that no rollout, however damaged, makes the parser panic
// or lose its line numbers.
func FuzzParse(f *testing.F) {
	golden.Seeds(f, "../../fixtures/corpus/codex/*.jsonl", "../../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
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
