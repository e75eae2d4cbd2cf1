package recover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
)

// faultFS fails the changes (writes, removes, journal appends) whose
// numbers are in fail, and makes every other change: a disk that refuses
// one write and then recovers, so a rollback after it can run.
type faultFS struct {
	*OSFS
	n    int
	fail func(n int) bool
}

var errFault = errors.New("injected fault")

func (f *faultFS) step() error {
	f.n++
	if f.fail(f.n) {
		return fmt.Errorf("change %d: %w", f.n, errFault)
	}
	return nil
}

func (f *faultFS) WriteFile(t Target, b []byte, m fs.FileMode) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.OSFS.WriteFile(t, b, m)
}

func (f *faultFS) WriteFileVia(t Target, tmp string, b []byte, m fs.FileMode) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.OSFS.WriteFileVia(t, tmp, b, m)
}

func (f *faultFS) Remove(t Target) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.OSFS.Remove(t)
}

func (f *faultFS) AppendFile(t Target, b []byte) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.OSFS.AppendFile(t, b)
}

// rollbackHost is a destination with files to update, delete, move and
// create (in a new directory), and what a session made of them.
func rollbackHost(t *testing.T) (string, []*FileResult) {
	t.Helper()
	root := t.TempDir()
	for name, mode := range map[string]fs.FileMode{"a.txt": 0o644, "b.txt": 0o600, "m.txt": 0o755} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(strings.ToUpper(name[:1])+"0\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	c := func(s string) Content { return Content{Known: true, Exists: true, Text: s} }
	gone := Content{Known: true}
	return root, []*FileResult{
		{Path: "/w/a.txt", Start: c("A0\n"), Final: c("A1\n"), Confidence: Exact, Ops: 1},
		{Path: "/w/b.txt", Start: c("B0\n"), Final: gone, Confidence: Exact, Ops: 1},
		{Path: "/w/new/deep/c.txt", Start: gone, Final: c("C1\n"), Confidence: Exact, Ops: 1},
		{Path: "/w/m.txt", Start: c("M0\n"), Final: gone, Confidence: Exact, Ops: 1},
		{Path: "/w/sub/m.txt", Start: gone, Final: c("M1\n"), Confidence: Exact, Ops: 1, MovedFrom: "/w/m.txt"},
	}
}

func planRollback(t *testing.T, root string, files []*FileResult, fsys FS) []*FilePlan {
	t.Helper()
	m, err := NewMapper([]Rule{{From: "/w", To: root}})
	if err != nil {
		t.Fatal(err)
	}
	plans, err := plan(files, m, fsys, OnConflictSkip, RedactedSkip)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// TestRollbackEveryStep fails each change of an apply in turn, with and
// without journals, on a disk that works again right after: the apply
// returns the error, every change already made is rolled back (contents,
// modes, created files and their directories), and no journal is left.
func TestRollbackEveryStep(t *testing.T) {
	for _, journaled := range []bool{false, true} {
		t.Run(map[bool]string{false: "from memory", true: "from the journal"}[journaled], func(t *testing.T) {
			tried := 0
			for at := 1; ; at++ {
				root, files := rollbackHost(t)
				before := tree(t, root)
				real := NewOSFS()
				fsys := &faultFS{OSFS: real, fail: func(n int) bool { return n == at }}
				plans := planRollback(t, root, files, real)
				var journals *JournalSet
				if journaled {
					journals = newJournalSet(fsys, time.Now(), testKey)
				}
				err := apply(context.Background(), plans, fsys, journals)
				real.Close()
				if err == nil {
					if tried < 4 {
						t.Fatalf("only %d changes failed before the apply went through", tried)
					}
					return // every change has been the failing one
				}
				tried++
				var ae *ApplyError
				if !errors.As(err, &ae) || !errors.Is(err, errFault) {
					t.Fatalf("change %d: %v, want an ApplyError wrapping the fault", at, err)
				}
				if len(ae.Rollback) > 0 || !strings.Contains(err.Error(), "every change already made was rolled back") {
					t.Fatalf("change %d: rollback incomplete: %v", at, err)
				}
				if after := tree(t, root); fmt.Sprint(before) != fmt.Sprint(after) {
					t.Fatalf("change %d: the host after the rollback\n%v\nwant\n%v", at, after, before)
				}
				for _, dir := range []string{"new", "sub"} {
					if _, err := os.Stat(filepath.Join(root, dir)); err == nil {
						t.Fatalf("change %d: the directory %s the apply made is left behind", at, dir)
					}
				}
				// No journal is left for undo to find. (A before-image saved
				// for the first change, whose journal entry then failed, is
				// left in .sandbox/journal: reported under issue 19.)
				if js, _ := filepath.Glob(filepath.Join(root, JournalDir, "*", "journal.jsonl")); len(js) > 0 {
					t.Fatalf("change %d: a journal is left after a complete rollback: %v", at, js)
				}
			}
		})
	}
}

// TestRollbackThatFails: when the rollback itself cannot put a file back
// (the disk refuses every change after the first failure), the error says
// which files could not be restored instead of claiming a clean rollback.
func TestRollbackThatFails(t *testing.T) {
	for _, journaled := range []bool{false, true} {
		t.Run(map[bool]string{false: "from memory", true: "from the journal"}[journaled], func(t *testing.T) {
			root, files := rollbackHost(t)
			real := NewOSFS()
			defer real.Close()
			plans := planRollback(t, root, files, real)
			// Let the apply make some of its changes, then refuse everything.
			from := map[bool]int{false: 4, true: 6}[journaled]
			fsys := &faultFS{OSFS: real, fail: func(n int) bool { return n >= from }}
			var journals *JournalSet
			if journaled {
				journals = newJournalSet(fsys, time.Now(), testKey)
			}
			err := apply(context.Background(), plans, fsys, journals)
			var ae *ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an ApplyError", err)
			}
			if len(ae.Rollback) == 0 || !strings.Contains(err.Error(), "could not be restored") {
				t.Fatalf("a rollback that failed is reported as %q", err)
			}
			if journaled {
				// The journal stays, so that sandbox undo can finish the job.
				if names, _ := Journals(real, root); len(names) != 1 {
					t.Fatalf("journals after a failed rollback: %v", names)
				}
			}
		})
	}
}

// appliedJournal applies rollbackHost's files with a journal and returns
// the root, the journal's name and the host as the apply left it.
func appliedJournal(t *testing.T) (root, name string, before, after map[string]string) {
	t.Helper()
	root, files := rollbackHost(t)
	before = tree(t, root)
	fsys := NewOSFS()
	defer fsys.Close()
	if err := apply(context.Background(), planRollback(t, root, files, fsys), fsys, newJournalSet(fsys, time.Now(), testKey)); err != nil {
		t.Fatal(err)
	}
	name, err := LatestJournal(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	return root, name, before, tree(t, root)
}

// TestUndoRefusesBrokenBeforeImage: a before-image that is gone from the
// journal, or was edited since, is never written back. The file it belongs
// to is refused and left as the apply made it; every other file is
// restored.
func TestUndoRefusesBrokenBeforeImage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, img string)
		reason string
	}{
		{"missing", func(t *testing.T, img string) {
			if err := os.Remove(img); err != nil {
				t.Fatal(err)
			}
		}, "missing"},
		{"edited", func(t *testing.T, img string) {
			if err := os.WriteFile(img, []byte("A0 but forged\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "sha256"},
		{"truncated", func(t *testing.T, img string) {
			if err := os.Truncate(img, 1); err != nil {
				t.Fatal(err)
			}
		}, "sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, name, before, after := appliedJournal(t)
			fsys := NewOSFS()
			defer fsys.Close()
			entries, _, err := readJournal(fsys, root, name)
			if err != nil {
				t.Fatal(err)
			}
			var img string
			for _, e := range entries {
				if e.Path == "a.txt" {
					img = filepath.Join(root, JournalDir, name, filepath.FromSlash(e.Before))
				}
			}
			if img == "" {
				t.Fatalf("no before-image of a.txt in %+v", entries)
			}
			tc.damage(t, img)
			res, _ := Undo(fsys, root, name, testKey, false)
			got := map[string]UndoResult{}
			for _, r := range res {
				got[r.Path] = r
			}
			if r := got["a.txt"]; r.Action != "refused" || !strings.Contains(r.Reason, "before-image") || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("a.txt: %+v, want refused for its before-image (%s)", r, tc.reason)
			}
			for _, p := range []string{"b.txt", "m.txt", "new/deep/c.txt", "sub/m.txt"} {
				if r := got[p]; r.Action != "restored" && r.Action != "removed" {
					t.Errorf("%s: %+v, want it put back", p, r)
				}
			}
			now := tree(t, root)
			if now["a.txt"] != after["a.txt"] {
				t.Errorf("a.txt was changed by a refused undo: %s, the apply left %s", now["a.txt"], after["a.txt"])
			}
			for p, v := range before {
				if p != "a.txt" && now[p] != v {
					t.Errorf("%s: %s after undo, %s before the apply", p, now[p], v)
				}
			}
		})
	}
}

// TestNotebookReplay replays NotebookEdit operations (recover/claude.go
// notebook) through the reconstructor: a recorded updated_file is taken
// as the post-image; without it the cell edit is re-applied to the known
// content, or the notebook is unrecoverable when that content is unknown,
// absent, or not a notebook the edit applies to.
func TestNotebookReplay(t *testing.T) {
	const nb = `{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "source": "print(1)"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`
	edit := func(seq int, path string, cell manifest.NotebookCell, ev ...manifest.Evidence) manifest.Op {
		return manifest.Op{Seq: seq, Kind: manifest.KindNotebook, Tool: "NotebookEdit", Cwd: "/w", Paths: []string{path}, Notebook: &cell,
			Outcome: manifest.OutcomeApplied, Evidence: ev, Provenance: manifest.Provenance{Transcript: "s.jsonl", Line: seq + 1, CallID: fmt.Sprint("n", seq)}}
	}
	write := func(seq int, path, content string) manifest.Op {
		return manifest.Op{Seq: seq, Kind: manifest.KindWrite, Tool: "Write", Cwd: "/w", Paths: []string{path}, Content: &content,
			Outcome: manifest.OutcomeApplied, Provenance: manifest.Provenance{Transcript: "s.jsonl", Line: seq + 1, CallID: fmt.Sprint("w", seq)}}
	}
	replaced, err := editNotebook(nb, manifest.NotebookCell{CellID: "c1", NewSource: "print(2)"})
	if err != nil {
		t.Fatal(err)
	}
	both, err := editNotebook(replaced, manifest.NotebookCell{CellID: "c1", NewSource: "# end", CellType: "markdown", EditMode: "insert"})
	if err != nil {
		t.Fatal(err)
	}
	host := map[string]string{"/w/host.ipynb": nb, "/w/text.ipynb": "not json"}
	base := func(p string) ([]byte, bool, bool) {
		if s, ok := host[p]; ok {
			return []byte(s), true, true
		}
		return nil, false, true // known absent
	}
	ops := []manifest.Op{
		// The current shape: the post-image is recorded.
		edit(0, "/w/rec.ipynb", manifest.NotebookCell{CellID: "c1", NewSource: "print(2)"},
			manifest.Evidence{Path: "/w/rec.ipynb", Kind: manifest.EvidencePre, Content: nb, Source: "toolUseResult.original_file"},
			manifest.Evidence{Path: "/w/rec.ipynb", Kind: manifest.EvidencePost, Content: "recorded\n", Source: "toolUseResult.updated_file"}),
		// Re-applied on the content a Write pinned, twice in a row.
		write(1, "/w/pinned.ipynb", nb),
		edit(2, "/w/pinned.ipynb", manifest.NotebookCell{CellID: "c1", NewSource: "print(2)"}),
		edit(3, "/w/pinned.ipynb", manifest.NotebookCell{CellID: "c1", NewSource: "# end", CellType: "markdown", EditMode: "insert"}),
		// Re-applied on the host's copy.
		edit(4, "/w/host.ipynb", manifest.NotebookCell{CellID: "cell-0", NewSource: "print(2)"}),
		// No copy anywhere.
		edit(5, "/w/absent.ipynb", manifest.NotebookCell{CellID: "c1", NewSource: "x"}),
		// A copy that is not a notebook, and a cell that is not there.
		edit(6, "/w/text.ipynb", manifest.NotebookCell{CellID: "c1", NewSource: "x"}),
		write(7, "/w/other.ipynb", nb),
		edit(8, "/w/other.ipynb", manifest.NotebookCell{CellID: "zz", EditMode: "delete"}),
		// A failed edit is not replayed.
		func() manifest.Op {
			op := edit(9, "/w/host.ipynb", manifest.NotebookCell{CellID: "c1", NewSource: "never"})
			op.Outcome = manifest.OutcomeFailed
			return op
		}(),
	}
	files, _ := reconstruct(ops, base, ReconstructOptions{})
	got := map[string]*FileResult{}
	for _, f := range files {
		got[f.Path] = f
	}
	for _, tc := range []struct {
		path, final string
		grade       Confidence
		reason      string
	}{
		{"/w/rec.ipynb", "recorded\n", Exact, ""},
		{"/w/pinned.ipynb", both, Exact, ""},
		{"/w/host.ipynb", replaced, HostBased, ""},
		{"/w/absent.ipynb", "", Unrecoverable, "content before the edit is unknown"},
		{"/w/text.ipynb", "", Unrecoverable, "notebook is not JSON"},
		{"/w/other.ipynb", "", Unrecoverable, `cell "zz" not found`},
	} {
		f := got[tc.path]
		if f == nil {
			t.Errorf("%s: not reconstructed", tc.path)
			continue
		}
		if f.Confidence != tc.grade || f.Final.Text != tc.final || !strings.Contains(f.Reason, tc.reason) {
			t.Errorf("%s: %s %q (%s), want %s %q (%s)", tc.path, f.Confidence, f.Final.Text, f.Reason, tc.grade, tc.final, tc.reason)
		}
		if tc.grade == Unrecoverable && f.Final.Known {
			t.Errorf("%s: unrecoverable, yet its final content is known", tc.path)
		}
	}
	if f := got["/w/pinned.ipynb"]; f != nil && (len(f.Notes) != 2 || !strings.Contains(f.Notes[0], "re-applied")) {
		t.Errorf("a re-applied edit must say so: %q", f.Notes)
	}
}

// TestUndoJournalStates: a journal can be undone once; a last entry cut
// short by a crash is a change that was never made, and is passed over; a
// damaged entry before the last is an error, not a guess.
func TestUndoJournalStates(t *testing.T) {
	t.Run("twice", func(t *testing.T) {
		root, name, before, _ := appliedJournal(t)
		fsys := NewOSFS()
		defer fsys.Close()
		if _, err := Undo(fsys, root, name, testKey, false); err != nil {
			t.Fatal(err)
		}
		// A journal whose every file is back is removed with .sandbox:
		// the project is as it was.
		if _, err := Undo(fsys, root, name, testKey, false); err == nil || !strings.Contains(err.Error(), "no journal named") {
			t.Fatalf("a second undo: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(root, ".sandbox")); !os.IsNotExist(err) {
			t.Errorf(".sandbox left after a whole undo: %v", err)
		}
		if _, err := LatestJournal(fsys, root); err == nil {
			t.Fatal("an undone journal is still offered to undo")
		}
		if now := tree(t, root); fmt.Sprint(now) != fmt.Sprint(before) {
			t.Fatalf("after undo\n%v\nwant\n%v", now, before)
		}
	})
	t.Run("last entry cut short", func(t *testing.T) {
		root, name, before, _ := appliedJournal(t)
		j := filepath.Join(root, JournalDir, name, "journal.jsonl")
		f, err := os.OpenFile(j, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"seq":99,"path":"never.txt","exis`)
		f.Close()
		fsys := NewOSFS()
		defer fsys.Close()
		res, err := Undo(fsys, root, name, testKey, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Path == "never.txt" || r.Action == "refused" || r.Action == "failed" {
				t.Errorf("%+v", r)
			}
		}
		if now := tree(t, root); fmt.Sprint(now) != fmt.Sprint(before) {
			t.Fatalf("after undo\n%v\nwant\n%v", now, before)
		}
	})
	t.Run("damaged entry", func(t *testing.T) {
		root, name, _, after := appliedJournal(t)
		j := filepath.Join(root, JournalDir, name, "journal.jsonl")
		data, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(j, append([]byte("{not json\n"), data...), 0o600); err != nil {
			t.Fatal(err)
		}
		fsys := NewOSFS()
		defer fsys.Close()
		if _, err := Undo(fsys, root, name, testKey, false); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Fatalf("undo of a damaged journal: %v", err)
		}
		if now := tree(t, root); fmt.Sprint(now) != fmt.Sprint(after) {
			t.Fatal("a journal that cannot be read changed the host")
		}
	})
}

// lyingFS reads back other bytes than were written to one file: a disk
// that corrupts a write.
type lyingFS struct {
	*OSFS
	rel string
}

func (l *lyingFS) ReadFile(t Target) ([]byte, fs.FileMode, bool, error) {
	data, mode, exists, err := l.OSFS.ReadFile(t)
	if t.Rel == l.rel && exists && string(data) == "A1\n" {
		data = []byte("A1 but not quite\n")
	}
	return data, mode, exists, err
}

// TestReadBackMismatch: a write whose read-back differs from what was
// written fails the apply, which is rolled back. From memory, the file gets
// its before-image back. From the journal, undo's own check sees a file
// that is not what the apply wrote and leaves it as it is: the error must
// then say that it could not be restored, never claim a clean rollback.
func TestReadBackMismatch(t *testing.T) {
	for _, journaled := range []bool{false, true} {
		root, files := rollbackHost(t)
		before := tree(t, root)
		real := NewOSFS()
		fsys := &lyingFS{OSFS: real, rel: "a.txt"}
		plans := planRollback(t, root, files, real)
		var journals *JournalSet
		if journaled {
			journals = newJournalSet(fsys, time.Now(), testKey)
		}
		err := apply(context.Background(), plans, fsys, journals)
		real.Close()
		if err == nil || !strings.Contains(err.Error(), "read back a different sha256") {
			t.Fatalf("journaled %v: %v", journaled, err)
		}
		now := tree(t, root)
		if journaled && strings.Contains(err.Error(), "could not be restored: a.txt: ") {
			delete(now, "a.txt") // reported as not restored: the rest must be
			delete(before, "a.txt")
		}
		if fmt.Sprint(now) != fmt.Sprint(before) {
			t.Fatalf("journaled %v: %v\nafter the rollback\n%v\nwant\n%v", journaled, err, now, before)
		}
	}
}

// TestEditNotebookRefuses: what EditNotebook cannot apply is an error
// with the reason, never a guess.
func TestEditNotebookRefuses(t *testing.T) {
	const nb = `{"cells": [{"cell_type": "code", "id": "c1", "source": "x"}]}`
	for _, tc := range []struct {
		nb   string
		cell manifest.NotebookCell
		err  string
	}{
		{`{"cells": [`, manifest.NotebookCell{CellID: "c1"}, "not JSON"},
		{nb + ` {}`, manifest.NotebookCell{CellID: "c1"}, "trailing data"},
		{`{"cells": {}}`, manifest.NotebookCell{CellID: "c1"}, "no cells"},
		{`[]`, manifest.NotebookCell{CellID: "c1"}, "no cells"},
		{nb, manifest.NotebookCell{CellID: "c1", EditMode: "move"}, `unknown edit_mode "move"`},
		{nb, manifest.NotebookCell{NewSource: "y"}, "replace needs a cell id"},
		{nb, manifest.NotebookCell{EditMode: "delete"}, "delete needs a cell id"},
		{nb, manifest.NotebookCell{CellID: "cell-1", EditMode: "delete"}, `cell "cell-1" not found`},
	} {
		if _, err := editNotebook(tc.nb, tc.cell); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s %+v: %v, want %q", tc.nb, tc.cell, err, tc.err)
		}
	}
	// An insert without a type is a code cell, with no outputs yet.
	out, err := editNotebook(nb, manifest.NotebookCell{NewSource: "first", EditMode: "insert"})
	if err != nil || !strings.Contains(out, "\"cell_type\": \"code\",\n   \"metadata\": {},\n   \"source\": \"first\",\n   \"execution_count\": null,\n   \"outputs\": []") {
		t.Errorf("insert first: %v\n%s", err, out)
	}
}

// TestEditReplayFailures: an Edit replayed where its file's content is
// absent, or where it does not apply, makes the file unrecoverable with
// the reason; on pinned content that is drift.
func TestEditReplayFailures(t *testing.T) {
	edit := func(seq int, path, old, new string, ev ...manifest.Evidence) manifest.Op {
		return manifest.Op{Seq: seq, Kind: manifest.KindEdit, Tool: "Edit", Cwd: "/w", Paths: []string{path}, Edits: []manifest.Edit{{Old: old, New: new}},
			Outcome: manifest.OutcomeApplied, Evidence: ev, Provenance: manifest.Provenance{Transcript: "s.jsonl", Line: seq + 1, CallID: fmt.Sprint("e", seq)}}
	}
	absent := func(p string) ([]byte, bool, bool) {
		if p == "/w/unknown.txt" {
			return nil, false, false // no host copy to ask (no --base, no destination)
		}
		return nil, false, true
	}
	ops := []manifest.Op{
		edit(0, "/w/gone.txt", "a", "b"),
		edit(2, "/w/unknown.txt", "a", "b"),
		edit(1, "/w/pinned.txt", "zzz", "y", manifest.Evidence{Path: "/w/pinned.txt", Kind: manifest.EvidencePre, Content: "abc\n", Source: "toolUseResult.originalFile"}),
	}
	files, _ := reconstruct(ops, absent, ReconstructOptions{})
	got := map[string]*FileResult{}
	for _, f := range files {
		got[f.Path] = f
	}
	if f := got["/w/gone.txt"]; f == nil || f.Confidence != Unrecoverable || !strings.Contains(f.Reason, "the host has no copy to start from") {
		t.Errorf("an edit of a file nowhere: %+v", f)
	}
	if f := got["/w/unknown.txt"]; f == nil || f.Confidence != Unrecoverable || !strings.Contains(f.Reason, "content before the edit is unknown") {
		t.Errorf("an edit of a file whose content is unknown: %+v", f)
	}
	if f := got["/w/pinned.txt"]; f == nil || f.Confidence != Unrecoverable || len(f.Drift) != 1 || !strings.Contains(f.Reason, "would not apply") {
		t.Errorf("an edit that does not apply to pinned content: %+v", f)
	}
}
