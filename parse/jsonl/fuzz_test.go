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
// record returned is one of the line's bytes, that line numbers only grow,
// and that what the Reader noted of a record (keys, escapes, marks) is what
// a fresh read finds.
func FuzzReader(f *testing.F) {
	seedCorpus(f, "../../fixtures/corpus/codex/*.jsonl", 64<<10)
	f.Add([]byte(`{"t\u0079pe":1,"type":2,"typ\u0065":3}` + "\n" + `{"type":"x","\u0061":{"type":1}}`))
	f.Add([]byte("{\"a\":1}\n\n\x00\x00{\"b\":\"}{\"}{}\n{\"c\":"))
	f.Add([]byte(`{"type":"user","message":{"content":[{"tool_use_id":"t1","type":"tool_result"}]}}{"x":"tool_use"}` + "\n" + `{"a":"tool_use_id","b":"tool_u"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(strings.NewReader(string(data)), "f")
		last := 0
		nextAll(t, rd, func(rec Record) {
			if rec.Line < last || len(rec.Data) == 0 || rec.Data[0] != '{' || rec.Data[len(rec.Data)-1] != '}' {
				t.Fatalf("bad record at line %d: %q", rec.Line, rec.Data)
			}
			last = rec.Line
			// The key offsets and the escape flag the Reader kept must find
			// what a record read afresh finds.
			for _, name := range fuzzNames {
				if got, want := rec.Field(name), (Record{Data: rec.Data}).Field(name); string(got) != string(want) {
					t.Fatalf("line %d: Field(%q) = %q, read afresh %q", rec.Line, name, got, want)
				}
			}
			// So must its marks: the strings that start with MarkWord.
			first, n, ok := rec.Marks()
			if _, _, _, _, m := refScan(rec.Data); !ok || first != m.first || n != m.n {
				t.Fatalf("line %d: Marks() = %d, %d, %v; a byte scan says %d, %d", rec.Line, first, n, ok, m.first, m.n)
			}
		})
		sameAsNext(t, data)
	})
}

var fuzzNames = []string{"type", "payload", "a", "b", "timestamp", "a/b", "t\"x"}
