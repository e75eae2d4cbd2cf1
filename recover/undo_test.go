package recover

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	entries, _, err := ReadJournal(fsys, root, name)
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
	res, err := Undo(fsys, root, name, false)
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

	res, err = Undo(fsys, root, name, false)
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

// withKey makes the journals written and undone from here sealed with a
// key of the test's own.
func withKey(t *testing.T) {
	t.Helper()
	key, err := LoadKey(filepath.Join(t.TempDir(), "journal.key"))
	if err != nil {
		t.Fatal(err)
	}
	old := JournalKey
	JournalKey = func() ([]byte, error) { return key, nil }
	t.Cleanup(func() { JournalKey = old })
}

// TestUndoSealed: with a journal key, undo checks every entry's seal before
// it changes anything. A key that cannot be read, a journal written without
// a seal (planted in the destination, or by another user), and an entry
// edited after it was sealed each stop undo with the host exactly as the
// apply left it and the journal pending; --unsealed undoes a journal the
// user vouches for.
func TestUndoSealed(t *testing.T) {
	t.Run("key unreadable", func(t *testing.T) {
		withKey(t)
		root, name, before, after := appliedJournal(t)
		good := JournalKey
		JournalKey = func() ([]byte, error) { return nil, fs.ErrPermission }
		fsys := NewOSFS()
		defer fsys.Close()
		if _, err := Undo(fsys, root, name, false); err == nil || !strings.Contains(err.Error(), "journal key") {
			t.Fatalf("undo without its key: %v", err)
		}
		sameTree(t, root, after, "undo without its key")
		if got, _ := LatestJournal(fsys, root); got != name {
			t.Fatalf("the journal to undo next is %q, want %s still pending", got, name)
		}
		JournalKey = good
		if _, err := Undo(fsys, root, name, false); err != nil {
			t.Fatal(err)
		}
		sameTree(t, root, before, "undo once the key is back")
	})
	t.Run("planted", func(t *testing.T) {
		root, name, before, after := appliedJournal(t) // no key: unsealed
		withKey(t)
		fsys := NewOSFS()
		defer fsys.Close()
		if _, err := Undo(fsys, root, name, false); !errors.Is(err, ErrUnsealed) || !strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("undo of an unsealed journal: %v", err)
		}
		sameTree(t, root, after, "a refused unsealed journal")
		if _, err := Undo(fsys, root, name, true); err != nil {
			t.Fatal(err)
		}
		sameTree(t, root, before, "undo --unsealed")
	})
	t.Run("entry edited", func(t *testing.T) {
		withKey(t)
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
		if _, err := Undo(fsys, root, name, false); !errors.Is(err, ErrUnsealed) {
			t.Fatalf("undo of an edited entry: %v", err)
		}
		sameTree(t, root, after, "a refused edited journal")
	})
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
	entries, _, err := ReadJournal(fsys, root, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Dirs != nil {
			t.Fatalf("entry %d still names its directories: %v", e.Seq, e.Dirs)
		}
	}
	if _, err := Undo(fsys, root, name, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, root, before, "undo of a journal without directories")
}
