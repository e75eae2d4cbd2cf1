package droid

import (
	"bytes"
	"context"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus parses the real Droid sessions of fixtures/corpus/droid
// against their goldens, once there are some.
func TestCorpus(t *testing.T) {
	if files, _ := filepath.Glob("../../fixtures/corpus/droid/*.jsonl"); len(files) == 0 {
		t.Skip("no real Droid transcript is public yet (fixtures/incoming/droid/SOURCES.md): the crafted cases of testdata/cases stand in")
	}
	golden.Corpus(t, *update, "droid", 1, func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
		res, err := parse(context.Background(), r, name)
		if err != nil {
			return manifest.Session{}, nil, err
		}
		return res.Session, res.Ops, nil
	})
}

// TestCases runs the txtar cases in testdata/cases.
func TestCases(t *testing.T) {
	golden.Cases(t, *update, func(t *testing.T, files map[string][]byte) *golden.Session {
		res, err := parse(context.Background(), bytes.NewReader(files["session.jsonl"]), "session.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		return golden.Summarize(res.Session, res.Ops)
	})
}

// FuzzParse checks that no session, however damaged, makes the Droid
// parser panic, lose a line number, or make an operation without a file.
func FuzzParse(f *testing.F) {
	golden.Fuzz(f, "f.jsonl", stream, "../../fixtures/corpus/droid/*.jsonl", "testdata/cases/*.txtar")
}
