package recover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockDests checks that a destination has one writer at a time: a
// second lock is refused, naming the holder, until the first is released.
func TestLockDests(t *testing.T) {
	state, dest := t.TempDir(), t.TempDir()
	unlock, err := LockDests(state, []string{dest, filepath.Join(dest, ".")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDests(state, []string{t.TempDir(), dest})
	var be *BusyError
	if !errors.As(err, &be) || be.Root != dest || !strings.Contains(be.Holder, "pid ") {
		t.Fatalf("second lock: %v, want busy naming the holder", err)
	}
	unlock()
	again, err := LockDests(state, []string{dest})
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again()
	if _, err := os.Stat(filepath.Join(dest, ".sandbox")); !os.IsNotExist(err) {
		t.Errorf("the lock wrote into the destination: %v", err)
	}
}

// TestRecheckBeforeWrite changes a host file between the plan and the
// write: it becomes a conflict and is left as the other program left it,
// while the other files are written.
func TestRecheckBeforeWrite(t *testing.T) {
	root := t.TempDir()
	fill(t, root, map[string]int{"a.txt": 3, "b.txt": 3}, 0)
	files := exactFiles(t, root, map[string]int{"a.txt": 5, "b.txt": 5})
	m, _ := NewMapper([]Rule{{From: "/w", To: root}})
	fsys := NewOSFS()
	defer fsys.Close()
	plans, err := plan(files, m, fsys, OnConflictSkip, RedactedSkip)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "b.txt"), []byte("edited meanwhile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := apply(context.Background(), plans, fsys, newJournalSet(fsys, time.Now(), testKey)); err != nil {
		t.Fatal(err)
	}
	r := buildReport(nil, nil, plans, Stats{}, false)
	if got, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(got) != "edited meanwhile\n" {
		t.Errorf("b.txt overwritten: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "zzzzz" {
		t.Errorf("a.txt not written: %q", got)
	}
	if r.Summary.Conflicts != 1 || r.Summary.Written != 1 {
		t.Errorf("summary %+v, want 1 conflict and 1 written", r.Summary)
	}
	for _, f := range r.Files {
		if f.Path == "b.txt" && (f.Action != ActConflict || !strings.Contains(f.Reason, "changed on the host after the plan")) {
			t.Errorf("b.txt: %s %q", f.Action, f.Reason)
		}
	}
}
