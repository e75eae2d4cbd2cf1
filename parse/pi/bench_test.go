package pi

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

func BenchmarkParse(b *testing.B) {
	gen.ThroughputOf(b, gen.Pi, gen.Options{Size: 32 << 20, Seed: 4, Files: 300}, func(data []byte) error {
		_, err := parse(context.Background(), bytes.NewReader(data), "bench.jsonl")
		return err
	})
}

// TestGenerated checks the generated session the benchmark reads: every
// file change it made is one applied operation, in a session that ended
// cleanly without a warning.
func TestGenerated(t *testing.T) {
	golden.Generated(t, stream, gen.Pi, gen.Options{Size: 2 << 20, Seed: 9, Files: 20})
}
