package claude

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Claude(&buf, gen.Options{Size: 32 << 20, Seed: 4, Files: 300}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(context.Background(), bytes.NewReader(data), "bench.jsonl", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
