package codex

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus parses every real and sample rollout of the shared corpus and
// compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	golden.Corpus(t, *update, "codex", 7, func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
		res, err := Parse(context.Background(), r, name)
		if err != nil {
			return manifest.Session{}, nil, err
		}
		return res.Session, res.Ops, nil
	})
}

// TestCases runs the txtar cases in testdata/cases: each holds a rollout
// ("rollout.jsonl") and the expected summary ("want.json").
func TestCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/cases/*.txtar")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var in []byte
			for _, fl := range ar.Files {
				if fl.Name == "rollout.jsonl" || fl.Name == "rollout.json" {
					in = fl.Data
				}
			}
			res, err := Parse(context.Background(), bytes.NewReader(in), "rollout.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			got := golden.Summarize(res.Session, res.Ops).Bytes()
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "want.json" {
						ar.Files[i].Data = got
					}
				}
				if err := os.WriteFile(f, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, fl := range ar.Files {
				if fl.Name == "want.json" && !bytes.Equal(fl.Data, got) {
					t.Errorf("got:\n%s\nwant:\n%s", got, fl.Data)
				}
			}
		})
	}
}

// TestSharedCorpusCopied checks that every rollout of the shared corpus is
// in fixtures/ byte for byte, so each has a golden. It skips when the shared
// folder is not beside the project.
func TestSharedCorpusCopied(t *testing.T) { golden.SharedCopied(t, "codex") }
