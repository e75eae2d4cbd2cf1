package jsonl

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

func BenchmarkReader(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Rollout(&buf, gen.Options{Size: 32 << 20, Seed: 3}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd := NewReader(bytes.NewReader(data), "bench.jsonl")
		for {
			if _, err := rd.Next(); errors.Is(err, io.EOF) {
				break
			}
		}
	}
}
