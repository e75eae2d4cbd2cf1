package recover

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dyingFS fails its Nth change (write, remove, journal append) and every
// change after it, as if the process had died there: no rollback can run.
type dyingFS struct {
	*OSFS
	n, at int
}

var errDied = errors.New("process died")

func (d *dyingFS) step() error {
	d.n++
	if d.n >= d.at {
		return errDied
	}
	return nil
}

func (d *dyingFS) WriteFile(t Target, b []byte, m fs.FileMode) error {
	if err := d.step(); err != nil {
		return err
	}
	return d.OSFS.WriteFile(t, b, m)
}

// WriteFileVia dies the way kill -9 mid-write does: the temporary file
// (and the directories made for it) exist, half written, and the target is
// untouched.
func (d *dyingFS) WriteFileVia(t Target, tmp string, b []byte, m fs.FileMode) error {
	if err := d.step(); err != nil {
		p := filepath.Join(t.Root, filepath.FromSlash(tmp))
		if mkErr := os.MkdirAll(filepath.Dir(p), 0o755); mkErr == nil {
			_ = os.WriteFile(p, b[:len(b)/2], 0o600)
		}
		return err
	}
	return d.OSFS.WriteFileVia(t, tmp, b, m)
}

func (d *dyingFS) Remove(t Target) error {
	if err := d.step(); err != nil {
		return err
	}
	return d.OSFS.Remove(t)
}

func (d *dyingFS) AppendFile(t Target, b []byte) error {
	if err := d.step(); err != nil {
		return err
	}
	return d.OSFS.AppendFile(t, b)
}

func (d *dyingFS) RemoveEmptyDirs(Target) {}

// tree snapshots a directory (skipping the journal): path -> mode and sha256.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, _ := d.Info()
		if d.IsDir() {
			if d.Name() == ".sandbox" {
				return filepath.SkipDir
			}
			if rel != "." {
				out[rel] = fmt.Sprintf("dir %v", info.Mode()) // kept, or removed, as it was
			}
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = fmt.Sprintf("%v %x", info.Mode(), sha256.Sum256(b))
		return nil
	})
	return out
}

func TestCrashMidApply(t *testing.T) {
	build := func(t *testing.T) (string, []*FileResult) {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, "a.txt"), []byte("A0\n"), 0o644)
		os.WriteFile(filepath.Join(root, "b.txt"), []byte("B0\n"), 0o600)
		os.WriteFile(filepath.Join(root, "m.txt"), []byte("M0\n"), 0o755)
		c := func(s string) Content { return Content{Known: true, Exists: true, Text: s} }
		gone := Content{Known: true}
		files := []*FileResult{
			{Path: "/w/a.txt", Start: c("A0\n"), Final: c("A1\n"), Confidence: Exact, Ops: 1},
			{Path: "/w/b.txt", Start: c("B0\n"), Final: gone, Confidence: Exact, Ops: 1},
			{Path: "/w/new/deep/c.txt", Start: gone, Final: c("C1\n"), Confidence: Exact, Ops: 1},
			{Path: "/w/m.txt", Start: c("M0\n"), Final: gone, Confidence: Exact, Ops: 1},
			{Path: "/w/sub/m.txt", Start: gone, Final: c("M1\n"), Confidence: Exact, Ops: 1, MovedFrom: "/w/m.txt"},
		}
		return root, files
	}
	newOrOld := map[string][2]string{"a.txt": {"A0\n", "A1\n"}, "b.txt": {"B0\n", ""}, "new/deep/c.txt": {"", "C1\n"},
		"m.txt": {"M0\n", ""}, "sub/m.txt": {"", "M1\n"}}
	for at := 1; ; at++ {
		root, files := build(t)
		before := tree(t, root)
		m, _ := NewMapper([]Rule{{From: "/w", To: root}})
		real := NewOSFS()
		plans, err := plan(files, m, real, OnConflictSkip, RedactedSkip)
		if err != nil {
			t.Fatal(err)
		}
		fsys := &dyingFS{OSFS: real, at: at}
		journals := newJournalSet(fsys, time.Now(), testKey)
		err = apply(context.Background(), plans, fsys, journals)
		if err == nil {
			if at < 3 {
				t.Fatal("the apply never reached a change")
			}
			real.Close()
			return // every step survived: all crash points were tried
		}
		// Every file is either as it was or as recovered, never partial.
		for rel, want := range newOrOld {
			b, rerr := os.ReadFile(filepath.Join(root, rel))
			got := string(b)
			if rerr != nil {
				got = ""
			}
			if got != want[0] && got != want[1] {
				t.Fatalf("crash at step %d: %s is %q", at, rel, got)
			}
		}
		entries, _ := filepath.Glob(filepath.Join(root, ".sandbox/journal/*/journal.jsonl"))
		if len(entries) > 0 {
			name := filepath.Base(filepath.Dir(entries[0]))
			res, err := Undo(real, root, name, testKey, false)
			if err != nil {
				t.Fatalf("crash at step %d: undo: %v", at, err)
			}
			for _, r := range res {
				if r.Action == "refused" {
					t.Fatalf("crash at step %d: undo refused %s: %s", at, r.Path, r.Reason)
				}
			}
		}
		after := tree(t, root)
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Fatalf("crash at step %d: undo left\n%v\nwant\n%v", at, after, before)
		}
		for _, leftover := range []string{"new", "sub"} {
			if _, err := os.Stat(filepath.Join(root, leftover)); err == nil && !strings.HasPrefix(leftover, ".") {
				// Directories a crashed apply created are left only when not empty.
				if ents, _ := os.ReadDir(filepath.Join(root, leftover)); len(ents) == 0 {
					t.Errorf("crash at step %d: empty %s left behind", at, leftover)
				}
			}
		}
		real.Close()
	}
}
