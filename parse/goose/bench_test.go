package goose

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

// BenchmarkParse reads a generated 32 MiB legacy Goose session: prompts,
// long assistant texts, whole-file views and shell calls with long output,
// and every twentieth call a text_editor write or str_replace.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Goose(&buf, gen.Options{Size: 32 << 20, Seed: 3}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := parse(context.Background(), bytes.NewReader(data), "20261120_091203.jsonl"); err != nil {
			b.Fatal(err)
		}
	}
}

// The generated session parses to one operation per file change, all
// applied, with the final content of every file reproducible.
func TestGenerated(t *testing.T) {
	golden.Generated(t, stream, gen.Goose, gen.Options{Size: 1 << 20, Seed: 5, PatchEvery: 3})
}
