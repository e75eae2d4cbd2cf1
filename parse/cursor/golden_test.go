package cursor

import (
	"bytes"
	"context"
	"flag"
	"io"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus parses the real Cursor CLI transcripts of fixtures/corpus/cursor against
// their goldens.
func TestCorpus(t *testing.T) {
	golden.Corpus(t, *update, "cursor", 2, func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
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
		const name = "projects/w-my-app-2/agent-transcripts/5b1d3b43-0000-4000-8000-000000000001.jsonl"
		res, err := parse(context.Background(), bytes.NewReader(files[name]), "/home/u/.cursor/"+name)
		if err != nil {
			t.Fatal(err)
		}
		return golden.Summarize(res.Session, res.Ops)
	})
}

// FuzzParse checks that no session, however damaged, makes the pi parser
// panic, lose a line number, or make an operation without a file.
func FuzzParse(f *testing.F) {
	golden.Fuzz(f, "f.jsonl", stream, "../../fixtures/corpus/cursor/*.jsonl", "testdata/cases/*.txtar")
}
