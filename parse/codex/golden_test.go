package codex

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

// TestCorpus parses every real and sample rollout of the shared corpus and
// compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	golden.Corpus(t, *update, "codex", 7, func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
		res, err := parse(context.Background(), r, name)
		if err != nil {
			return manifest.Session{}, nil, err
		}
		return res.Session, res.Ops, nil
	})
}

// TestCases runs the txtar cases in testdata/cases: each holds a rollout
// ("rollout.jsonl") and the expected summary ("want.json").
func TestCases(t *testing.T) {
	golden.Cases(t, *update, func(t *testing.T, files map[string][]byte) *golden.Session {
		in, ok := files["rollout.jsonl"]
		if !ok {
			in = files["rollout.json"]
		}
		res, err := parse(context.Background(), bytes.NewReader(in), "rollout.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		return golden.Summarize(res.Session, res.Ops)
	})
}

// TestSharedCorpusCopied checks that every rollout of the shared corpus is
// in fixtures/ byte for byte, so each has a golden. It skips when the shared
// folder is not beside the project.
func TestSharedCorpusCopied(t *testing.T) { golden.SharedCopied(t, "codex") }
