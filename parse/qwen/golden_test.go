package qwen

import (
	"bytes"
	"context"
	"flag"
	"testing"

	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// No real Qwen Code session is public yet (fixtures/incoming/qwen/SOURCES.md):
// the crafted cases stand for it.

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

// FuzzParse checks that no session, however damaged, makes the parser
// panic, lose a line number, or make an operation without a file.
func FuzzParse(f *testing.F) {
	golden.Fuzz(f, "f.jsonl", stream, "testdata/cases/*.txtar")
}
