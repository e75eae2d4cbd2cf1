package droid

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

func BenchmarkParse(b *testing.B) {
	gen.ThroughputOf(b, gen.Droid, gen.Options{Size: 32 << 20, Seed: 4, Files: 300}, func(data []byte) error {
		_, err := parse(context.Background(), bytes.NewReader(data), "bench.jsonl")
		return err
	})
}

// TestGenerated checks the generated session the benchmark reads: every
// file change it made is one applied operation, in a session that ended
// cleanly without a warning, and the whole-file Reads are views of their
// lines.
func TestGenerated(t *testing.T) {
	res := golden.Generated(t, stream, gen.Droid, gen.Options{Size: 2 << 20, Seed: 9, Files: 20})
	views := 0
	for _, op := range res.Ops {
		switch op.Kind {
		case manifest.KindWrite, manifest.KindEdit:
		case manifest.KindObserve:
			views++
			if len(op.Evidence) != 1 || op.Evidence[0].Kind != manifest.EvidencePartial {
				t.Errorf("view %+v", op)
			}
		default:
			t.Errorf("unexpected op %+v", op)
		}
	}
	if views == 0 {
		t.Error("no view of a changed file")
	}
}
