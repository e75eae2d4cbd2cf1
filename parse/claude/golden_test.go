package claude

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus parses every real transcript of the shared Claude corpus and
// compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	golden.Corpus(t, *update, "claude", 10, func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
		res, err := Parse(context.Background(), r, name, Options{})
		if err != nil {
			return manifest.Session{}, nil, err
		}
		return res.Session, res.Ops, nil
	})
}

// TestSharedCorpusCopied checks that fixtures/ holds every transcript of the
// shared corpus byte for byte.
func TestSharedCorpusCopied(t *testing.T) { golden.SharedCopied(t, "claude") }

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
