package recover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallDisk mounts a tmpfs of size bytes for the test, or skips saying why.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root and mount rights): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

func fill(t *testing.T, root string, files map[string]int, seed byte) {
	t.Helper()
	for name, n := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(string(rune('a'+seed)), n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// exactFiles is what a session left for each file: its start (the host's
// current bytes, or absent) and its final content of the given size.
func exactFiles(t *testing.T, root string, final map[string]int) []*FileResult {
	t.Helper()
	var out []*FileResult
	for name, n := range final {
		start := Content{Known: true}
		if b, err := os.ReadFile(filepath.Join(root, name)); err == nil {
			start = Content{Known: true, Exists: true, Text: string(b)}
		}
		out = append(out, &FileResult{Path: "/w/" + name, Start: start, Confidence: Exact,
			Final: Content{Known: true, Exists: true, Text: strings.Repeat("z", n)}})
	}
	return out
}

func applyAll(t *testing.T, root string, files []*FileResult) error {
	t.Helper()
	m, _ := NewMapper([]Rule{{From: "/w", To: root}})
	fsys := NewOSFS()
	defer fsys.Close()
	plans, err := plan(files, m, fsys, OnConflictSkip, RedactedSkip)
	if err != nil {
		t.Fatal(err)
	}
	// The report orders plans by path, and the apply follows that order.
	buildReport(nil, nil, plans, Stats{}, false)
	return apply(context.Background(), plans, fsys, newJournalSet(fsys, time.Now(), testKey))
}

// TestFullDiskRollback fills a small disk part way through an apply: the
// rollback must remove the big file it created before it writes any
// before-image back, and leave every file as it was.
func TestFullDiskRollback(t *testing.T) {
	root := smallDisk(t, 1<<20)
	existing := map[string]int{}
	for i := 0; i < 8; i++ {
		existing[fmt.Sprintf("b%02d.txt", i)] = 40 << 10
	}
	fill(t, root, existing, 0)
	before := tree(t, root)
	final := map[string]int{"a-big.bin": 400 << 10}
	for name := range existing {
		final[name] = 40 << 10
	}
	err := applyAll(t, root, exactFiles(t, root, final))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("apply: %v, want no space left", err)
	}
	var ae *ApplyError
	if !errors.As(err, &ae) || len(ae.Rollback) > 0 {
		t.Fatalf("rollback incomplete: %v", err)
	}
	if after := tree(t, root); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("the host differs after the rollback:\n%v\nwant\n%v", after, before)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	if names, _ := Journals(fsys, root); len(names) != 0 {
		t.Errorf("journals left after a complete rollback: %v", names)
	}
}

// TestFullDiskUndo undoes an apply on a disk that is full: what cannot be
// written back is reported, the journal stays pending, and undo finishes
// once space is back.
func TestFullDiskUndo(t *testing.T) {
	root := smallDisk(t, 1<<20)
	existing := map[string]int{}
	for i := 0; i < 4; i++ {
		existing[fmt.Sprintf("f%d.txt", i)] = 100 << 10
	}
	fill(t, root, existing, 1)
	before := tree(t, root)
	final := map[string]int{"new/deep/n.bin": 50 << 10}
	for name := range existing {
		final[name] = 100 << 10
	}
	if err := applyAll(t, root, exactFiles(t, root, final)); err != nil {
		t.Fatal(err)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	name, err := LatestJournal(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the disk but for a few KiB.
	filler := filepath.Join(root, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	_, err = Undo(fsys, root, name, testKey, false)
	var ie *IncompleteError
	if !errors.As(err, &ie) {
		t.Fatalf("undo on a full disk: %v, want an incomplete undo", err)
	}
	if _, done, _ := readJournal(fsys, root, name); done != "" {
		t.Fatalf("journal marked %s after an incomplete undo", done)
	}
	if again, _ := LatestJournal(fsys, root); again != name {
		t.Fatalf("the pending journal is not the one to undo next: %q", again)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	res, err := Undo(fsys, root, name, testKey, false)
	if err != nil {
		t.Fatalf("undo once space is back: %v", err)
	}
	for _, r := range res {
		if r.Action == "refused" || r.Action == "failed" {
			t.Errorf("%s: %s %s", r.Path, r.Action, r.Reason)
		}
	}
	if after := tree(t, root); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("the host differs after undo:\n%v\nwant\n%v", after, before)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("the directory the apply created is still there: %v", err)
	}
}

// TestUndoKeepsWhatWasThere checks that an apply keeps a file's setgid and
// sticky bits, and that undo restores them and removes only the directories
// the apply created: an empty directory that was there before stays.
func TestUndoKeepsWhatWasThere(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	fill(t, root, map[string]int{"s.sh": 10}, 2)
	if err := os.Chmod(filepath.Join(root, "s.sh"), 0o755|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)
	if err := applyAll(t, root, exactFiles(t, root, map[string]int{"keep/new.txt": 5, "made/deep/n.txt": 5, "s.sh": 20})); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, "s.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&(os.ModeSetgid|os.ModeSticky) != os.ModeSetgid|os.ModeSticky {
		t.Errorf("the apply dropped mode bits: %v", st.Mode())
	}
	fsys := NewOSFS()
	defer fsys.Close()
	name, err := LatestJournal(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Undo(fsys, root, name, testKey, false); err != nil {
		t.Fatal(err)
	}
	if after := tree(t, root); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("the host differs after undo:\n%v\nwant\n%v", after, before)
	}
	if st, err := os.Stat(filepath.Join(root, "keep")); err != nil || !st.IsDir() {
		t.Errorf("undo removed the directory that was there before: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); !os.IsNotExist(err) {
		t.Errorf("undo left the directory the apply made: %v", err)
	}
}

// TestApplyErrorNamesTheFile: an apply that fails on the temporary file it
// writes through names the file it was writing, and the cause, never the
// temporary file's name.
func TestApplyErrorNamesTheFile(t *testing.T) {
	for _, inner := range []error{
		&fs.PathError{Op: "write", Path: "/d/src/.a.go.sandbox-20261125T224020Z-240", Err: syscall.ENOSPC},
		&os.LinkError{Op: "rename", Old: "/d/src/.a.go.sandbox-1", New: "/d/src/a.go", Err: syscall.EACCES},
	} {
		msg := (&ApplyError{Path: "/d/src/a.go", Err: fmt.Errorf("wrapped: %w", inner)}).Error()
		if strings.Contains(msg, ".sandbox-") || !strings.HasPrefix(msg, "writing /d/src/a.go: ") {
			t.Errorf("%q", msg)
		}
		if !errors.Is(&ApplyError{Path: "/d/src/a.go", Err: inner}, inner.(interface{ Unwrap() error }).Unwrap()) {
			t.Errorf("%v does not unwrap to its cause", inner)
		}
	}
}
