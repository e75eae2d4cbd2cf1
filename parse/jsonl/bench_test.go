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
	gen.ThroughputOf(b, gen.Claude, gen.Options{Size: 32 << 20, Seed: 3}, func(data []byte) error {
		rd := NewReader(bytes.NewReader(data), "bench.jsonl")
		defer rd.Close()
		for {
			if _, err := rd.Next(); errors.Is(err, io.EOF) {
				return nil
			}
		}
	})
}
