package codex

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

func BenchmarkParse(b *testing.B) {
	gen.Throughput(b, gen.Options{Size: 32 << 20, Seed: 2, PatchEvery: 20}, func(data []byte) error {
		_, err := parse(context.Background(), bytes.NewReader(data), "bench.jsonl")
		return err
	})
}
