package codex

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus parses every real and sample rollout of the shared corpus and
// compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../fixtures/corpus/codex/*.jsonl")
	if len(files) < 7 {
		t.Fatalf("found %d corpus files", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			res, err := Parse(context.Background(), fh, name)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, *update, golden.Summarize(res.Session, res.Ops), filepath.Join("testdata/golden", strings.TrimSuffix(name, ".jsonl")+".json"))
		})
	}
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
func TestSharedCorpusCopied(t *testing.T) {
	shared, _ := filepath.Glob("../../../shared/corpus/codex/*.jsonl")
	if len(shared) == 0 {
		t.Skip("../shared/corpus/codex is not beside the project")
	}
	for _, f := range shared {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("../../fixtures/corpus/codex", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not copied to fixtures/corpus/codex (copy it and run go test ./parse/codex -update)", filepath.Base(f))
		}
	}
}
