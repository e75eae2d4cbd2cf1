package gemini

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
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus parses every real Gemini CLI session of fixtures/corpus/gemini
// and compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../fixtures/corpus/gemini/*.json*")
	if len(files) < 3 {
		t.Fatalf("found %d Gemini sessions in fixtures/corpus/gemini, want at least 3", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := parse(context.Background(), bytes.NewReader(data), name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(strings.TrimSuffix(name, ".jsonl"), ".json")
			golden.Check(t, *update, golden.Summarize(res.Session, res.Ops), filepath.Join("testdata/golden", base+".json"))
		})
	}
}

// TestCases runs the txtar cases in testdata/cases: a session
// ("session.jsonl" or "session.json") and the expected summary.
func TestCases(t *testing.T) {
	golden.Cases(t, *update, func(t *testing.T, files map[string][]byte) *golden.Session {
		name := "session.jsonl"
		data, ok := files[name]
		if !ok {
			name = "session.json"
			data = files[name]
		}
		res, err := parse(context.Background(), bytes.NewReader(data), name, Options{Cwd: strings.TrimSpace(string(files["project_root"]))})
		if err != nil {
			t.Fatal(err)
		}
		return golden.Summarize(res.Session, res.Ops)
	})
}

// FuzzParse checks that no session, however damaged, makes the Gemini
// parser panic, lose a line number, or make an operation without a file.
func FuzzParse(f *testing.F) {
	golden.Fuzz(f, "f.jsonl", func(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
		return stream(ctx, r, file, Options{}, h)
	}, "../../fixtures/corpus/gemini/*.json", "testdata/cases/*.txtar")
}
