package jsonl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func seedCorpus(f *testing.F, glob string, max int) {
	files, _ := filepath.Glob(glob)
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > max {
			data = data[:max]
		}
		f.Add(data)
	}
}

// FuzzReader checks that any input is read without a panic, that every
// record returned is one of the line's bytes, and that line numbers only grow.
func FuzzReader(f *testing.F) {
	seedCorpus(f, "../../fixtures/corpus/codex/*.jsonl", 64<<10)
	f.Add([]byte("{\"a\":1}\n\n\x00\x00{\"b\":\"}{\"}{}\n{\"c\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(strings.NewReader(string(data)), "f")
		last := 0
		nextAll(t, rd, func(rec Record) {
			if rec.Line < last || len(rec.Data) == 0 || rec.Data[0] != '{' || rec.Data[len(rec.Data)-1] != '}' {
				t.Fatalf("bad record at line %d: %q", rec.Line, rec.Data)
			}
			last = rec.Line
		})
		sameAsNext(t, data)
	})
}
