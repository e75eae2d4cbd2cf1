package cmd

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoldenReports freezes what the command says about every transcript of
// the fixtures (the real sessions of fixtures/corpus, which hold all of
// ../shared/corpus, and the sample): the JSON of sessions, of a dry-run
// recover onto an empty destination, of export, and of inspect, byte for
// byte, with only the paths of this checkout and of the test's temporary
// folder written as $REPO and $TMP. A change of any report shows here as a
// diff to read; go test ./cmd -run TestGoldenReports -update accepts it.
//
// It holds the redesign of issue 37 (and any later change) to the
// behaviour users see: the same input, the same reports. The respelled
// forms of each transcript (key order, escapes, CRLF, BOM, compression)
// are held to the original's reports by fixtures/corpus's
// TestReserialized, and so to these.
func TestGoldenReports(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("-race: the reports are the same with it, and .ci/run runs this test without it")
	}
	var files []string
	for _, glob := range []string{"../fixtures/corpus/*/*.jsonl", "../fixtures/corpus/gemini/*.json", "../fixtures/corpus/crush/*.db", "../fixtures/sample/*.jsonl"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 50 {
		t.Fatalf("found %d transcripts in the fixtures", len(files))
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel("../fixtures", f)
		name := filepath.Join("testdata", "reports", strings.TrimSuffix(rel, filepath.Ext(rel))+".txt")
		seen[name] = true
		t.Run(rel, func(t *testing.T) {
			env := hermetic(t)
			tmp := t.TempDir()
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			for _, args := range [][]string{
				{"sessions", "-t", abs, "--json"},
				{"recover", "-t", abs, "--dest", filepath.Join(tmp, "dest"), "--dry-run", "--json"},
				{"export", "-t", abs},
				{"inspect", abs, "--json"},
			} {
				out, _, code := runApp(t, env, args...)
				fmt.Fprintf(&got, "$ sandbox %s\n%s", strings.Join(args, " "), condense(normalizePaths(out, repo, tmp)))
				if !strings.HasSuffix(out, "\n") {
					got.WriteString("\n")
				}
				fmt.Fprintf(&got, "exit %d\n\n", code)
			}
			text := normalizePaths(got.String(), repo, tmp)
			if *update {
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatalf("%v (run with -update to record it)", err)
			}
			if text != string(want) {
				t.Errorf("the reports differ from %s (run with -update to accept):\n%s", name, firstDifference(string(want), text))
			}
		})
	}
	// A golden file whose transcript is gone is a stale golden file.
	_ = filepath.WalkDir(filepath.Join("testdata", "reports"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !seen[p] {
			if *update {
				return os.Remove(p)
			}
			t.Errorf("%s has no transcript in the fixtures (run with -update to remove it)", p)
		}
		return nil
	})
}

// condense keeps a long report small enough to keep in the repository and
// still read in a diff: its sha256 and size first (so that it is held byte
// for byte all the same), then the report with each JSON string of more than
// 200 characters (a file's content, a command's output) written as its own
// sha256 and size. A report of 64 KiB or less is kept whole.
func condense(out string) string {
	if len(out) <= 64<<10 {
		return out
	}
	sum := sha256.Sum256([]byte(out))
	short := longString.ReplaceAllStringFunc(out, func(q string) string {
		h := sha256.Sum256([]byte(q))
		return fmt.Sprintf(`"<sha256:%x, %d bytes>"`, h[:8], len(q))
	})
	return fmt.Sprintf("sha256 %x, %d bytes:\n%s", sum, len(out), short)
}

// longString is a JSON string of more than 200 characters.
var longString = regexp.MustCompile(`"(?:[^"\\]|\\.){200,}"`)

// normalizePaths writes the checkout's path as $REPO and the temporary
// folder's as $TMP, however a report spells them (in JSON, a path with
// separators escaped is not expected on Linux, so plain text does).
func normalizePaths(s, repo, tmp string) string {
	s = strings.ReplaceAll(s, tmp, "$TMP")
	s = strings.ReplaceAll(s, repo, "$REPO")
	return tempRun.ReplaceAllString(s, "$$TMP")
}

// tempRun is a temporary folder the test did not make itself (t.TempDir of
// hermetic), named by the testing package.
var tempRun = regexp.MustCompile(`/tmp/TestGoldenReports[^/"\s]*/[0-9]+`)

// firstDifference shows the first line where two texts part, with a few
// lines around it.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(0, i-3)
	var b strings.Builder
	fmt.Fprintf(&b, "at line %d\n", i+1)
	for k := from; k < i+3; k++ {
		if k < len(w) && (k >= len(g) || w[k] != g[k]) {
			fmt.Fprintf(&b, "- %s\n", w[k])
		}
		if k < len(g) && (k >= len(w) || w[k] != g[k]) {
			fmt.Fprintf(&b, "+ %s\n", g[k])
		}
		if k < len(w) && k < len(g) && w[k] == g[k] {
			fmt.Fprintf(&b, "  %s\n", w[k])
		}
	}
	return b.String()
}
