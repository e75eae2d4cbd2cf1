package crush

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// corpusStreams reads every session of the real databases of
// fixtures/corpus/crush as the record streams their parse reads, by
// golden name (<database>__<session>).
func corpusStreams(t testing.TB) map[string][]byte {
	dbs, _ := filepath.Glob("../../fixtures/corpus/crush/*.db")
	if len(dbs) < 5 {
		t.Fatalf("found %d Crush databases in fixtures/corpus/crush, want 5", len(dbs))
	}
	out := map[string][]byte{}
	for _, db := range dbs {
		cands, err := dbSessions(db, filepath.Base(db), time.Time{}, "", "")
		if err != nil {
			t.Fatalf("%s: %v", db, err)
		}
		for _, c := range cands {
			rc, err := c.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			out[strings.TrimSuffix(filepath.Base(db), ".db")+"__"+c.ID] = data
		}
	}
	return out
}

// TestCorpus parses every session of the real Crush databases against its
// golden.
func TestCorpus(t *testing.T) {
	streams := corpusStreams(t)
	goldens, _ := filepath.Glob("testdata/golden/*.json")
	for _, g := range goldens {
		if _, ok := streams[strings.TrimSuffix(filepath.Base(g), ".json")]; !ok {
			t.Errorf("%s: no such session in fixtures/corpus/crush (remove the golden)", g)
		}
	}
	if *update {
		if err := os.MkdirAll("testdata/golden", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range streams {
		t.Run(name, func(t *testing.T) {
			db, id, _ := strings.Cut(name, "__")
			res, err := parse(context.Background(), bytes.NewReader(data), db+".db#"+id)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, *update, golden.Summarize(res.Session, res.Ops), filepath.Join("testdata/golden", name+".json"))
		})
	}
}

// FuzzParse checks that no record stream, however damaged, makes the
// parser panic, lose a line number, or make an operation without a file;
// and that what it emits as it reads is what a timeline read emits.
func FuzzParse(f *testing.F) {
	for _, data := range corpusStreams(f) {
		f.Add(data[:min(len(data), 32<<10)])
	}
	golden.Fuzz(f, "f.db#s", stream)
}

// FuzzDB checks that a damaged Crush database (the real ones of
// fixtures/corpus/crush with bytes overwritten) lists as an error, or as
// sessions that open as an error or parse: never a crash.
func FuzzDB(f *testing.F) {
	dbs, _ := filepath.Glob("../../fixtures/corpus/crush/*.db")
	var seeds [][]byte
	for _, db := range dbs {
		data, err := os.ReadFile(db)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	golden.FuzzDB(f, Agent{}, stores.Forget, stream, seeds...)
}
