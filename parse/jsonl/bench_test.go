package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

func BenchmarkReader(b *testing.B) {
	data, err := gen.Bytes(gen.Options{Size: 32 << 20, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
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

// BenchmarkEach is BenchmarkReader through Each, which reads ahead on a
// goroutine of its own and copies each record into a batch.
func BenchmarkEach(b *testing.B) {
	data, err := gen.Bytes(gen.Options{Size: 32 << 20, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd := NewReader(bytes.NewReader(data), "bench.jsonl")
		n := 0
		if err := rd.Each(context.Background(), func(Record) { n++ }); err != nil || n == 0 {
			b.Fatal(err, n)
		}
		rd.Close()
	}
}
