package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

func BenchmarkReader(b *testing.B) {
	gen.Throughput(b, gen.Options{Size: 32 << 20, Seed: 3}, func(data []byte) error {
		rd := NewReader(bytes.NewReader(data), "bench.jsonl")
		for {
			if _, err := rd.Next(); errors.Is(err, io.EOF) {
				return nil
			}
		}
	})
}

// BenchmarkEach is BenchmarkReader through Each, which reads ahead on a
// goroutine of its own and copies each record into a batch.
func BenchmarkEach(b *testing.B) {
	gen.Throughput(b, gen.Options{Size: 32 << 20, Seed: 3}, func(data []byte) error {
		rd := NewReader(bytes.NewReader(data), "bench.jsonl")
		defer rd.Close()
		n := 0
		if err := rd.Each(context.Background(), func(Record) { n++ }); err != nil || n == 0 {
			return fmt.Errorf("%d records: %v", n, err)
		}
		return nil
	})
}

// BenchmarkReaderClaude is BenchmarkReader on a generated Claude Code
// session, whose records hold many short strings (ids, paths, flags).
func BenchmarkReaderClaude(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Claude(&buf, gen.Options{Size: 32 << 20, Seed: 3}); err != nil {
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
