package claude

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus parses every real transcript of the shared Claude corpus and
// compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	golden.Corpus(t, *update, "claude", 10, func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
		res, err := parse(context.Background(), r, name, Options{})
		if err != nil {
			return manifest.Session{}, nil, err
		}
		return res.Session, res.Ops, nil
	})
}

// TestSharedCorpusCopied checks that fixtures/ holds every transcript of the
// shared corpus byte for byte.
func TestSharedCorpusCopied(t *testing.T) { golden.SharedCopied(t, "claude") }

// TestCorpusEntire parses the 29 sessions of the claude-entire corpus (real
// transcript slices of many Claude Code versions) against their goldens in
// testdata/golden/claude-entire.
func TestCorpusEntire(t *testing.T) {
	golden.CorpusIn(t, *update, "claude-entire", 29, "testdata/golden/claude-entire", func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
		res, err := parse(context.Background(), r, name, Options{})
		if err != nil {
			return manifest.Session{}, nil, err
		}
		return res.Session, res.Ops, nil
	})
}

// TestSharedCorpusEntireCopied checks that fixtures/ holds every
// transcript of the shared claude-entire corpus byte for byte.
func TestSharedCorpusEntireCopied(t *testing.T) { golden.SharedCopied(t, "claude-entire") }

// TestCases runs the txtar cases in testdata/cases: a transcript
// ("session.jsonl") and the expected summary ("want.json").
func TestCases(t *testing.T) {
	golden.Cases(t, *update, func(t *testing.T, files map[string][]byte) *golden.Session {
		backups := map[string][]byte{}
		for name, data := range files {
			if rest, ok := strings.CutPrefix(name, "file-history/"); ok {
				backups[rest] = data
			}
		}
		opts := Options{Backup: func(sid, name string) ([]byte, bool) { b, ok := backups[sid+"/"+name]; return b, ok }}
		res, err := parse(context.Background(), bytes.NewReader(files["session.jsonl"]), "session.jsonl", opts)
		if err != nil {
			t.Fatal(err)
		}
		return golden.Summarize(res.Session, res.Ops)
	})
}
