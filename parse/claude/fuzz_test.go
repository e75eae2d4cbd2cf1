package claude

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

// FuzzParse checks that no transcript, however damaged, makes the Claude
// parser panic, lose a line number, or make an op without a file.
func FuzzParse(f *testing.F) {
	golden.Seeds(f, "../../fixtures/corpus/claude/*.jsonl")
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
