package recover

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestMerge3GitHistory holds Merge3 to git merge-file on real files: 598
// triples of versions of entireio/cli's files (testdata/merges), 184 of them
// the two sides of a real merge commit. Two things are checked on each:
//
//   - given git's own line diffs, the merge is git's to the byte, conflicts
//     and all: the merge itself (ranges, refinement, folding, markers, line
//     ends) is git's;
//   - with sergi/go-diff's diffs it is git's too, except on the triples
//     listed in differ.txt. On each of those, each side's diff is exactly as
//     short as git's: the two engines chose differently between diffs of
//     the same length (an LCS tie), and only that.
//
// A listed triple that now agrees with git, or one that newly differs, fails
// the test and prints the line to add or remove.
func TestMerge3GitHistory(t *testing.T) {
	git := needGit(t)
	if testing.Short() {
		t.Skip("-short: the real-history merges spawn git about 2,000 times")
	}
	blobs := readBundleBlobs(t, git, filepath.Join("testdata", "merges", "entireio-cli.bundle"))
	triples := readLines(t, filepath.Join("testdata", "merges", "triples.txt"))
	expected := map[string]string{}
	for _, l := range readLines(t, filepath.Join("testdata", "merges", "differ.txt")) {
		key, why, _ := strings.Cut(l, ": ")
		expected[key] = why
	}
	viaGit := func(x, y []string) []change { return gitDiff(t, git, strings.Join(x, ""), strings.Join(y, "")) }
	var same, ties, merges int
	var news []string
	for _, l := range triples {
		f := strings.Fields(l)
		if len(f) < 5 {
			t.Fatalf("triples.txt: %q: want base ours theirs kind path", l)
		}
		key := strings.Join(f[:3], " ")
		base, ours, theirs := blobs[f[0]], blobs[f[1]], blobs[f[2]]
		if f[3] == "merge" {
			merges++
		}
		want, wn := gitMerge(t, git, base, ours, theirs)
		if got, n := merge3(base, ours, theirs, "ours", "theirs", viaGit); got != want || min(n, 127) != wn {
			t.Errorf("%s (%s): on git's diffs Merge3 gave %d conflicts, git merge-file %d, and other bytes", f[4], key, n, wn)
			continue
		}
		got, n := Merge3(base, ours, theirs, "ours", "theirs")
		why, listed := expected[key]
		delete(expected, key)
		if got == want && min(n, 127) == wn {
			same++
			if listed {
				t.Errorf("%s now merges as git does: remove from differ.txt: %s: %s", f[4], key, why)
			}
			continue
		}
		for _, side := range []string{ours, theirs} {
			if mine, gits := diffLines(splitLinesKeep(base), splitLinesKeep(side)), gitDiff(t, git, base, side); diffSize(mine) != diffSize(gits) {
				t.Errorf("%s (%s): a diff %d lines long where git's is %d", f[4], key, diffSize(mine), diffSize(gits))
			}
		}
		ties++
		if line := fmt.Sprintf("%s: %d conflicts, git %d", key, n, wn); !listed {
			news = append(news, line)
		} else if why != line[len(key)+2:] {
			t.Errorf("%s: differ.txt says %q, now %q", f[4], why, line[len(key)+2:])
		}
	}
	if len(news) > 0 {
		sort.Strings(news)
		t.Errorf("%d triples newly merge otherwise than git; if only because of diff ties, add to differ.txt:\n%s", len(news), strings.Join(news, "\n"))
	}
	for key := range expected {
		t.Errorf("differ.txt lists %s, which is not in triples.txt", key)
	}
	t.Logf("%d triples (%d from merge commits): %d merge as git does to the byte, %d differ by a diff tie", len(triples), merges, same, ties)
}

// readLines is a file's lines, without blank ones and # comments.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// readBundleBlobs is every blob of a git bundle, by id: the bundle is
// fetched into an empty repository and read with one cat-file.
func readBundleBlobs(t *testing.T, git, bundle string) map[string]string {
	t.Helper()
	abs, err := filepath.Abs(bundle)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(stdin io.Reader, args ...string) []byte {
		cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		cmd.Stdin = stdin
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	run(nil, "init", "-q", "--bare")
	run(nil, "fetch", "-q", abs, "+refs/heads/*:refs/heads/*")
	out := run(strings.NewReader("--all\n"), "cat-file", "--batch-all-objects", "--batch")
	blobs := map[string]string{}
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		header, err := r.ReadString('\n')
		if err == io.EOF {
			return blobs
		}
		f := strings.Fields(header)
		if err != nil || len(f) != 3 {
			t.Fatalf("git cat-file: header %q: %v", header, err)
		}
		size, _ := strconv.Atoi(f[2])
		body := make([]byte, size+1)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatalf("git cat-file: %s: %v", f[0], err)
		}
		if f[1] == "blob" {
			blobs[f[0]] = string(body[:size])
		}
	}
}
