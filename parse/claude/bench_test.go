package claude

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

func BenchmarkParse(b *testing.B) {
	gen.ThroughputOf(b, gen.Claude, gen.Options{Size: 32 << 20, Seed: 4, Files: 300}, func(data []byte) error {
		_, err := parse(context.Background(), bytes.NewReader(data), "bench.jsonl", Options{})
		return err
	})
}
