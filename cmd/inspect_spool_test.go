package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/inspect"
)

// spoolCorpus is every transcript here that inspect reads: the fixtures'
// corpus, the real sessions of ../shared/corpus (Claude Code's with their
// subagents' transcripts beside them), and the sample.
func spoolCorpus(t *testing.T) []string {
	var files []string
	for _, glob := range []string{"../fixtures/corpus/*/*.json*", "../fixtures/sample/*.jsonl", "../../shared/corpus/*/*.json*", "../../shared/corpus/*/*/*.jsonl"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 60 {
		if _, err := os.Stat("../../shared/corpus"); err != nil && os.Getenv("CI") != "true" {
			t.Skip("../shared/corpus is not beside the project (a clone elsewhere): only CI must have it")
		}
		t.Fatalf("%d transcripts: the corpus was not found", len(files))
	}
	return files
}

// TestInspectSpooled requires the same reports, byte for byte, from the
// timeline spooled to a file as from the timeline in memory: text and
// JSON, for every transcript here.
func TestInspectSpooled(t *testing.T) {
	env := hermetic(t)
	// Local times are printed: not UTC. (Not through TZ, which the time
	// package reads once for the whole test binary.)
	local := time.Local
	time.Local = time.FixedZone("EST", -5*3600)
	above := inspect.SpoolAbove
	inspect.PoisonSpool = true
	defer func() { inspect.SpoolAbove, inspect.PoisonSpool, time.Local = above, false, local }()
	n := 0
	for _, f := range spoolCorpus(t) {
		for _, args := range [][]string{{"inspect", f}, {"inspect", f, "--json"}} {
			inspect.SpoolAbove = above
			want, wantErr, wantCode := runApp(t, env, args...)
			inspect.SpoolAbove = 0
			got, gotErr, gotCode := runApp(t, env, args...)
			if got != want || gotErr != wantErr || gotCode != wantCode {
				t.Errorf("%s: spooled, exit %d:\n%.2000s\n%s\nin memory, exit %d:\n%.2000s\n%s", strings.Join(args, " "), gotCode, got, gotErr, wantCode, want, wantErr)
			}
			if wantCode == ExitOK {
				n++
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d reports", n)
	}
}
