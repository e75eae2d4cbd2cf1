package recover

import (
	"bytes"
	"context"
	"encoding/json"
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

// The failure paths of Undo, each caused on a real host (a journal written
// by a real apply of rollbackHost's files: a.txt updated, b.txt deleted,
// new/deep/c.txt created, m.txt moved to sub/m.txt), each checked by what
// the host holds afterwards.

// undoResults indexes undo's results by path.
func undoResults(res []UndoResult) map[string]UndoResult {
	got := map[string]UndoResult{}
	for _, r := range res {
		got[r.Path] = r
	}
	return got
}

// sameTree fails the test unless the host (the journal aside) is want.
func sameTree(t *testing.T, root string, want map[string]string, what string) {
	t.Helper()
	if now := tree(t, root); fmt.Sprint(now) != fmt.Sprint(want) {
		t.Fatalf("%s: the host is\n%v\nwant\n%v", what, now, want)
	}
}

// beforeImage is the host path of rel's before-image in the journal.
func beforeImage(t *testing.T, root, name, rel string) string {
	t.Helper()
	fsys := NewOSFS()
	defer fsys.Close()
	entries, _, err := readJournal(fsys, root, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Path == rel && e.Before != "" {
			return filepath.Join(root, JournalDir, name, filepath.FromSlash(e.Before))
		}
	}
	t.Fatalf("no before-image of %s in %+v", rel, entries)
	return ""
}

// journalState is the journal's state as undo --list gives it, or "gone".
func journalState(t *testing.T, root, name string) string {
	t.Helper()
	fsys := NewOSFS()
	defer fsys.Close()
	infos, err := ListJournals(fsys, root)
	if errors.Is(err, fs.ErrNotExist) {
		return "gone"
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Name == name {
			return in.State
		}
	}
	return "gone"
}

// TestUndoAlreadyUndone: an undo that refused a file (changed since the
// apply) marks the journal undone and keeps it, for the before-image is the
// user's only copy of what the file was. Asked to undo it again, undo says
// so and changes nothing: the user's edit stays, the image too.
func TestUndoAlreadyUndone(t *testing.T) {
	root, name, before, _ := appliedJournal(t)
	img := beforeImage(t, root, name, "a.txt")
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("mine now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	res, err := Undo(fsys, root, name, testKey, false)
	if err != nil {
		t.Fatal(err)
	}
	if r := undoResults(res)["a.txt"]; r.Action != "refused" || !strings.Contains(r.Reason, "changed since the apply") {
		t.Fatalf("a.txt edited after the apply: %+v", r)
	}
	edited := tree(t, root)
	if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != "mine now\n" {
		t.Fatalf("the edited a.txt after undo: %q, %v", b, err)
	}
	others := map[string]string{}
	for p, v := range edited {
		others[p] = v
	}
	others["a.txt"] = before["a.txt"]
	if fmt.Sprint(others) != fmt.Sprint(before) {
		t.Fatalf("after undo, a.txt aside\n%v\nwant\n%v", others, before)
	}
	if got := journalState(t, root, name); got != "undone" {
		t.Fatalf("journal %s after an undo with a refusal, want undone and kept", got)
	}

	res, err = Undo(fsys, root, name, testKey, false)
	if err == nil || !strings.Contains(err.Error(), "journal "+name+" was already undone") || res != nil {
		t.Fatalf("undo of an undone journal: %v, %+v", err, res)
	}
	sameTree(t, root, edited, "a second undo")
	if b, err := os.ReadFile(img); err != nil || string(b) != "A0\n" {
		t.Fatalf("the before-image of the refused file: %q, %v", b, err)
	}
	if _, err := LatestJournal(fsys, root); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("an undone journal is offered to undo: %v", err)
	}
}

// TestUndoSealed: undo checks every entry's seal before it changes
// anything. No key, a key that cannot be read, a journal sealed by another
// key (planted in the destination, or written by another user), and an
// entry edited after it was sealed each stop undo with the host exactly as
// the apply left it and the journal pending; --unsealed undoes a journal
// the user vouches for, with or without a key.
func TestUndoSealed(t *testing.T) {
	refused := func(t *testing.T, key KeyFunc, want func(error) bool, what string) (root, name string, before map[string]string) {
		t.Helper()
		root, name, before, after := appliedJournal(t)
		fsys := NewOSFS()
		defer fsys.Close()
		if _, err := Undo(fsys, root, name, key, false); !want(err) {
			t.Fatalf("undo %s: %v", what, err)
		}
		sameTree(t, root, after, "undo "+what)
		if got, _ := LatestJournal(fsys, root); got != name {
			t.Fatalf("the journal to undo next is %q, want %s still pending", got, name)
		}
		return root, name, before
	}
	undone := func(t *testing.T, root, name string, key KeyFunc, unsealed bool, before map[string]string, what string) {
		t.Helper()
		fsys := NewOSFS()
		defer fsys.Close()
		if _, err := Undo(fsys, root, name, key, unsealed); err != nil {
			t.Fatalf("undo %s: %v", what, err)
		}
		sameTree(t, root, before, "undo "+what)
	}
	t.Run("key unreadable", func(t *testing.T) {
		unreadable := func() ([]byte, error) { return nil, fs.ErrPermission }
		root, name, before := refused(t, unreadable, func(err error) bool { return err != nil && strings.Contains(err.Error(), "journal key") }, "without its key")
		undone(t, root, name, testKey, false, before, "once the key is back")
	})
	t.Run("no key", func(t *testing.T) {
		root, name, before := refused(t, nil, func(err error) bool { return errors.Is(err, ErrNoKey) }, "with no key")
		undone(t, root, name, nil, true, before, "--unsealed with no key")
	})
	t.Run("planted", func(t *testing.T) {
		other := func() ([]byte, error) { return []byte("another sandbox's key"), nil }
		root, name, before := refused(t, other, func(err error) bool {
			return errors.Is(err, ErrUnsealed) && strings.Contains(err.Error(), "nothing was changed")
		}, "of a journal sealed by another key")
		undone(t, root, name, other, true, before, "--unsealed")
	})
	t.Run("entry edited", func(t *testing.T) {
		root, name, _, after := appliedJournal(t)
		// Steer a.txt's entry at b.txt: undo would write A0 over it.
		j := filepath.Join(root, JournalDir, name, "journal.jsonl")
		data, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		forged := bytes.Replace(data, []byte(`"path":"a.txt"`), []byte(`"path":"b.txt"`), 1)
		if bytes.Equal(forged, data) {
			t.Fatalf("no a.txt entry in\n%s", data)
		}
		if err := os.WriteFile(j, forged, 0o600); err != nil {
			t.Fatal(err)
		}
		fsys := NewOSFS()
		defer fsys.Close()
		if _, err := Undo(fsys, root, name, testKey, false); !errors.Is(err, ErrUnsealed) {
			t.Fatalf("undo of an edited entry: %v", err)
		}
		sameTree(t, root, after, "a refused edited journal")
	})
}

// TestNoKeyNoApply: an apply with no journal key writes nothing: a journal
// must be sealed, and the host is left exactly as it was.
func TestNoKeyNoApply(t *testing.T) {
	root, files := rollbackHost(t)
	before := tree(t, root)
	fsys := NewOSFS()
	defer fsys.Close()
	if err := apply(context.Background(), planRollback(t, root, files, fsys), fsys, newJournalSet(fsys, time.Now(), nil)); !errors.Is(err, ErrNoKey) {
		t.Fatalf("apply with no key: %v", err)
	}
	sameTree(t, root, before, "an apply with no key")
}

// TestUndoJournalWithoutDirs: a journal written before entries named the
// directories they create. Undo removes a created file's directories while
// they are empty, and the host is as it was.
func TestUndoJournalWithoutDirs(t *testing.T) {
	root, name, before, _ := appliedJournal(t)
	j := filepath.Join(root, JournalDir, name, "journal.jsonl")
	data, err := os.ReadFile(j)
	if err != nil {
		t.Fatal(err)
	}
	var old bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		delete(e, "dirs")
		b, _ := json.Marshal(e)
		old.Write(append(b, '\n'))
	}
	if err := os.WriteFile(j, old.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	entries, _, err := readJournal(fsys, root, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Dirs != nil {
			t.Fatalf("entry %d still names its directories: %v", e.Seq, e.Dirs)
		}
	}
	// Such a journal predates seals too: the user vouches for it.
	if _, err := Undo(fsys, root, name, testKey, true); err != nil {
		t.Fatal(err)
	}
	sameTree(t, root, before, "undo of a journal without directories")
}

// appendFaultFS refuses every append to a journal: a disk that takes the
// files back but not the journal's last line.
type appendFaultFS struct{ *OSFS }

func (appendFaultFS) AppendFile(t Target, _ []byte) error {
	return &fs.PathError{Op: "write", Path: t.Path(), Err: syscall.ENOSPC}
}

// TestUndoCannotMarkUndone: every file is put back but the journal cannot
// be marked undone. Undo says so, and how to finish; the journal stays
// pending, and undo run again finds every file as it was and closes it.
func TestUndoCannotMarkUndone(t *testing.T) {
	root, name, before, _ := appliedJournal(t)
	real := NewOSFS()
	defer real.Close()
	_, err := Undo(appendFaultFS{real}, root, name, testKey, false)
	if err == nil || !strings.Contains(err.Error(), "could not be marked undone") || !errors.Is(err, syscall.ENOSPC) ||
		!strings.Contains(err.Error(), "run sandbox undo again") {
		t.Fatalf("undo that cannot mark its journal: %v", err)
	}
	sameTree(t, root, before, "undo that cannot mark its journal")
	if got, _ := LatestJournal(real, root); got != name {
		t.Fatalf("the journal to undo next is %q, want %s still pending", got, name)
	}
	res, err := Undo(real, root, name, testKey, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Action != "unchanged" {
			t.Errorf("undo again: %+v, want unchanged", r)
		}
	}
	sameTree(t, root, before, "undo again")
	if _, err := os.Lstat(filepath.Join(root, ".sandbox")); !os.IsNotExist(err) {
		t.Fatalf(".sandbox left after a whole undo: %v", err)
	}
}

// TestUndoWhereAFileIsNoLongerOne: after the apply, the user put a
// directory where a.txt was and a symbolic link where the apply created
// sub/m.txt. Both are the user's now: refused and left exactly as they
// are, with the journal (and a.txt's before-image) kept; every other file
// is put back.
func TestUndoWhereAFileIsNoLongerOne(t *testing.T) {
	root, name, before, _ := appliedJournal(t)
	a := filepath.Join(root, "a.txt")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(a, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, "inner", "notes"), []byte("user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "sub", "m.txt")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../b.txt", link); err != nil {
		t.Fatal(err)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	res, err := Undo(fsys, root, name, testKey, false)
	if err != nil {
		t.Fatal(err)
	}
	got := undoResults(res)
	if r := got["a.txt"]; r.Action != "refused" || !strings.Contains(r.Reason, "changed since the apply") || !strings.Contains(r.Reason, "is a directory") {
		t.Errorf("a directory where a.txt was: %+v", r)
	}
	if r := got["sub/m.txt"]; r.Action != "refused" || !strings.Contains(r.Reason, "symbolic link") {
		t.Errorf("a link where sub/m.txt was: %+v", r)
	}
	want := map[string]string{}
	for p, v := range before {
		if p != "a.txt" {
			want[p] = v
		}
	}
	now := tree(t, root)
	for _, p := range []string{"a.txt", "a.txt/inner", "a.txt/inner/notes", "sub", "sub/m.txt"} {
		if now[p] == "" {
			t.Errorf("%s is gone", p)
		}
		delete(now, p)
	}
	if fmt.Sprint(now) != fmt.Sprint(want) {
		t.Fatalf("after undo\n%v\nwant\n%v", now, want)
	}
	if b, err := os.ReadFile(filepath.Join(a, "inner", "notes")); err != nil || string(b) != "user's\n" {
		t.Errorf("the user's file in the directory: %q, %v", b, err)
	}
	if dest, err := os.Readlink(link); err != nil || dest != "../b.txt" {
		t.Errorf("the user's link: %q, %v", dest, err)
	}
	if b, err := os.ReadFile(beforeImage(t, root, name, "a.txt")); err != nil || string(b) != "A0\n" {
		t.Errorf("a.txt's before-image: %q, %v", b, err)
	}
}

// TestUndoBeforeImageNotAFile: a.txt's before-image in the journal was
// replaced by a directory, and m.txt's by a link to b.txt's (the journal is
// damaged, or steered). Neither is written back: both files are refused
// and left as the apply made them; the others are put back.
func TestUndoBeforeImageNotAFile(t *testing.T) {
	root, name, before, after := appliedJournal(t)
	img := beforeImage(t, root, name, "a.txt")
	if err := os.Remove(img); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(img, 0o700); err != nil {
		t.Fatal(err)
	}
	mimg := beforeImage(t, root, name, "m.txt")
	if err := os.Remove(mimg); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(beforeImage(t, root, name, "b.txt"), mimg); err != nil {
		t.Fatal(err)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	res, err := Undo(fsys, root, name, testKey, false)
	if err != nil {
		t.Fatal(err)
	}
	got := undoResults(res)
	for _, p := range []string{"a.txt", "m.txt"} {
		if r := got[p]; r.Action != "refused" || !strings.Contains(r.Reason, "before-image in the journal is not a file") {
			t.Errorf("%s: %+v", p, r)
		}
	}
	want := leftAsApplied(before, after["a.txt"])
	sameTree(t, root, want, "undo with broken before-images")
}

// undoAsNobody runs Undo in a copy of the test binary as uid and gid 65534,
// so that file modes bind it as they bind a user (root reads everything).
// It skips when this process cannot change user.
func undoAsNobody(t *testing.T, root, name string) helperReport {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("not root: cannot undo as another user to meet a file it may not read")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "recover.test")
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = "/"
	cmd.Env = []string{envUndoAs + "=" + root + "\n" + name, "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("undo as uid 65534: %v\n%s", err, errb.String())
	}
	var rep helperReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	return rep
}

// giveTo makes the tree under root (and the directories above it) usable
// by uid and gid 65534, as a user's own project is.
func giveTo(t *testing.T, root string) {
	t.Helper()
	for d := filepath.Dir(root); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUndoPermissionDenied: run by its owner, undo meets a.txt, which it may
// not read now, and m.txt's before-image, likewise. Neither is a change the
// user made to the file, and both may pass: each fails (not refused), a.txt
// is left as the apply made it, m.txt is not written, every other file is
// put back, and the journal stays pending. Once the modes are fixed, undo
// run again finishes, and the host is as it was before the apply.
func TestUndoPermissionDenied(t *testing.T) {
	root, name, before, after := appliedJournal(t)
	giveTo(t, root)
	a := filepath.Join(root, "a.txt")
	mimg := beforeImage(t, root, name, "m.txt")
	for _, p := range []string{a, mimg} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	rep := undoAsNobody(t, root, name)
	if !rep.Incomplete || !strings.Contains(rep.Error, "permission denied") {
		t.Fatalf("undo of files it may not read: %+v", rep)
	}
	got := undoResults(rep.Results)
	for _, p := range []string{"a.txt", "m.txt"} {
		if r := got[p]; r.Action != "failed" || !strings.Contains(r.Reason, "permission denied") {
			t.Errorf("%s: %+v, want failed: permission denied", p, r)
		}
	}
	for _, p := range []string{"b.txt", "new/deep/c.txt", "sub/m.txt"} {
		if r := got[p]; r.Action != "restored" && r.Action != "removed" {
			t.Errorf("%s: %+v, want it put back", p, r)
		}
	}
	want := leftAsApplied(before, "---------- "+strings.Fields(after["a.txt"])[1]) // what the apply wrote, mode 0
	sameTree(t, root, want, "an undo that may not read two files")
	fsys := NewOSFS()
	defer fsys.Close()
	if got, _ := LatestJournal(fsys, root); got != name {
		t.Fatalf("the journal to undo next is %q, want %s still pending", got, name)
	}

	if err := os.Chmod(a, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(mimg, 0o600); err != nil {
		t.Fatal(err)
	}
	rep = undoAsNobody(t, root, name)
	if rep.Error != "" {
		t.Fatalf("undo once the modes are fixed: %+v", rep)
	}
	sameTree(t, root, before, "undo once the modes are fixed")
}

// TestUndoKeepsAFileWhereADirectoryWas: the apply created new/deep/c.txt,
// and with it new/ and new/deep/; the user then removed new/ and made a
// file of that name. The file is the user's: undo keeps it, byte for byte.
func TestUndoKeepsAFileWhereADirectoryWas(t *testing.T) {
	root, name, before, _ := appliedJournal(t)
	if err := os.RemoveAll(filepath.Join(root, "new")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "new"), []byte("important\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	if _, err := Undo(fsys, root, name, testKey, false); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "new")); err != nil || string(b) != "important\n" {
		t.Fatalf("the user's file where the apply made a directory: %q, %v", b, err)
	}
	now := tree(t, root)
	delete(now, "new")
	if fmt.Sprint(now) != fmt.Sprint(before) {
		t.Fatalf("after undo, new aside\n%v\nwant\n%v", now, before)
	}
}

// TestUndoDirectoryNotRemovable: run by its owner, undo removes
// new/deep/c.txt but may not remove new/deep, since new/ was made read-only
// after the apply. That may pass: undo fails, naming the directory, with
// every file put back and the journal pending; once new/ is writable again,
// undo run again removes both directories, and the host is as it was.
func TestUndoDirectoryNotRemovable(t *testing.T) {
	root, name, before, _ := appliedJournal(t)
	giveTo(t, root)
	dir := filepath.Join(root, "new")
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	rep := undoAsNobody(t, root, name)
	if !rep.Incomplete || !strings.Contains(rep.Error, "new/deep: ") || !strings.Contains(rep.Error, "permission denied") {
		t.Fatalf("undo that may not remove a directory: %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Action != "restored" && r.Action != "removed" {
			t.Errorf("%+v, want every file put back", r)
		}
	}
	want := map[string]string{"new": "dir dr-xr-xr-x", "new/deep": "dir drwxr-xr-x"}
	for p, v := range before {
		want[p] = v
	}
	sameTree(t, root, want, "an undo that may not remove new/deep")
	fsys := NewOSFS()
	defer fsys.Close()
	if got, _ := LatestJournal(fsys, root); got != name {
		t.Fatalf("the journal to undo next is %q, want %s still pending", got, name)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if rep = undoAsNobody(t, root, name); rep.Error != "" {
		t.Fatalf("undo once new/ is writable: %+v", rep)
	}
	sameTree(t, root, before, "undo once new/ is writable")
}

// TestUndoEveryStepFails fails each change undo makes in turn (a file
// written back or removed, a temporary file or directory removed, the
// journal's last line, its cleanup), on a disk that works again right
// after. Whatever failed, every file is either as the apply left it or as
// it was before, never anything else; and undo run again (when the first
// one did not finish) leaves the host exactly as it was before the apply,
// with no journal left.
func TestUndoEveryStepFails(t *testing.T) {
	tried := 0
	for at := 1; ; at++ {
		root, name, before, after := appliedJournal(t)
		real := NewOSFS()
		ffs := &faultFS{OSFS: real, fail: func(n int) bool { return n == at }}
		_, err := Undo(ffs, root, name, testKey, false)
		if ffs.n < at {
			real.Close()
			break // undo made fewer changes than at: every one was failed
		}
		tried++
		now := tree(t, root)
		for p, v := range now {
			if v != before[p] && v != after[p] {
				t.Errorf("change %d failed: %s is %s, neither %s before nor %s after the apply", at, p, v, before[p], after[p])
			}
		}
		if err != nil {
			if got, _ := LatestJournal(real, root); got != name {
				t.Fatalf("change %d failed (%v): the journal to undo next is %q, want %s", at, err, got, name)
			}
			if _, err := Undo(real, root, name, testKey, false); err != nil {
				t.Fatalf("change %d failed, then undo again: %v", at, err)
			}
		}
		sameTree(t, root, before, fmt.Sprintf("change %d failed, then undo again", at))
		// Only the cleanup after the journal was marked undone may leave
		// it (a before-image or the journal not removed), and then as a
		// journal undone, never damaged or still to undo.
		infos, _ := ListJournals(real, root)
		for _, in := range infos {
			if in.State != "undone" {
				t.Errorf("change %d failed: journal %s left %s", at, in.Name, in.State)
			}
		}
		real.Close()
	}
	if tried < 10 {
		t.Fatalf("only %d changes tried", tried)
	}
	t.Logf("%d changes failed in turn", tried)
}

// readFaultFS fails every read of the paths in eio with an I/O error: a
// disk with a bad sector under those files.
type readFaultFS struct {
	*OSFS
	eio map[string]bool
}

func (f readFaultFS) ReadFile(t Target) ([]byte, fs.FileMode, bool, error) {
	if f.eio[t.Rel] {
		return nil, 0, true, &fs.PathError{Op: "read", Path: t.Path(), Err: syscall.EIO}
	}
	return f.OSFS.ReadFile(t)
}

// TestUndoReadError: reading a.txt, and m.txt's before-image, fails with
// an I/O error, which may pass (TestUndoPermissionDenied meets the same
// with modes, as another user). Both fail, neither file is written, the
// rest is put back and the journal stays pending; once the disk reads
// again, undo run again finishes.
func TestUndoReadError(t *testing.T) {
	root, name, before, after := appliedJournal(t)
	img, err := filepath.Rel(root, beforeImage(t, root, name, "m.txt"))
	if err != nil {
		t.Fatal(err)
	}
	real := NewOSFS()
	defer real.Close()
	res, err := Undo(readFaultFS{real, map[string]bool{"a.txt": true, filepath.ToSlash(img): true}}, root, name, testKey, false)
	var ie *IncompleteError
	if !errors.As(err, &ie) || len(ie.Failed) != 2 || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("undo on a disk that fails two reads: %v", err)
	}
	got := undoResults(res)
	for _, p := range []string{"a.txt", "m.txt"} {
		if r := got[p]; r.Action != "failed" || !strings.Contains(r.Reason, "input/output error") {
			t.Errorf("%s: %+v, want failed: input/output error", p, r)
		}
	}
	want := leftAsApplied(before, after["a.txt"])
	sameTree(t, root, want, "an undo that cannot read two files")
	if got, _ := LatestJournal(real, root); got != name {
		t.Fatalf("the journal to undo next is %q, want %s still pending", got, name)
	}
	if _, err := Undo(real, root, name, testKey, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, root, before, "undo once the disk reads again")
}

// leftAsApplied is the tree before the apply with a.txt as the apply left
// it (an undo that refused or failed it) and m.txt still moved away (the
// apply moved it, and the undo could not put it back).
func leftAsApplied(before map[string]string, a string) map[string]string {
	want := map[string]string{}
	for p, v := range before {
		want[p] = v
	}
	want["a.txt"] = a
	delete(want, "m.txt")
	return want
}
