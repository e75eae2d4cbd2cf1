package crush

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

// BenchmarkParse reads a generated 32 MiB Crush session (the record stream
// a database's session is read as): prompts, long assistant texts, views
// and bash calls with long output, and every twentieth call a write or an
// edit with the whole file before and after in its metadata.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Crush(&buf, gen.Options{Size: 32 << 20, Seed: 3}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := parse(context.Background(), bytes.NewReader(data), "crush.db#s"); err != nil {
			b.Fatal(err)
		}
	}
}
