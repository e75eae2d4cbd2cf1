package claude

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

// TestCorpus parses every real transcript of the shared Claude corpus and
// compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../fixtures/corpus/claude/*.jsonl")
	if len(files) < 10 {
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
			res, err := Parse(context.Background(), fh, name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, *update, golden.Summarize(res.Session, res.Ops), filepath.Join("testdata/golden", strings.TrimSuffix(name, ".jsonl")+".json"))
		})
	}
}

// TestSharedCorpusCopied checks that fixtures/ holds every transcript of the
// shared corpus byte for byte.
func TestSharedCorpusCopied(t *testing.T) {
	shared, _ := filepath.Glob("../../../shared/corpus/claude/*.jsonl")
	if len(shared) == 0 {
		t.Skip("../shared/corpus/claude is not beside the project")
	}
	for _, f := range shared {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join("../../fixtures/corpus/claude", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not copied to fixtures/corpus/claude", filepath.Base(f))
		}
	}
}

// TestCases runs the txtar cases in testdata/cases: a transcript
// ("session.jsonl") and the expected summary ("want.json").
func TestCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/cases/*.txtar")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var in []byte
			backups := map[string][]byte{}
			for _, fl := range ar.Files {
				switch {
				case fl.Name == "session.jsonl":
					in = fl.Data
				case strings.HasPrefix(fl.Name, "file-history/"):
					backups[strings.TrimPrefix(fl.Name, "file-history/")] = fl.Data
				}
			}
			opts := Options{Backup: func(sid, name string) ([]byte, bool) { b, ok := backups[sid+"/"+name]; return b, ok }}
			res, err := Parse(context.Background(), bytes.NewReader(in), "session.jsonl", opts)
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
