package recover

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/lines"

	"github.com/agentsandbox/sandbox/manifest"
)

// TestApplyChosen writes what a review took, and only that: a file whole,
// a file's first hunk, nothing of a file left or of a move left (its
// source stays); the report says what was left, and undo gives the tree
// back.
func TestApplyChosen(t *testing.T) {
	dir := t.TempDir()
	host := map[string]string{"c.txt": lines.Numbered(40, nil), "d.txt": "dee\n"}
	for name, text := range host {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit := func(seq int, path, old, new string) manifest.Op {
		return manifest.Op{Seq: seq, Kind: manifest.KindEdit, Tool: "Edit", Cwd: "/w", Paths: []string{path}, Edits: []manifest.Edit{{Old: old, New: new}},
			Outcome: manifest.OutcomeApplied, Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: seq + 1}}
	}
	sess := manifest.Session{ID: "s1", Agent: manifest.AgentClaude, Cwd: "/w"}
	ops := []manifest.Op{writeOp(1, "/w/a.txt", "alpha\n"), writeOp(2, "/w/b.txt", "beta\n"),
		edit(3, "/w/c.txt", "line 2\n", "two\n"), edit(4, "/w/c.txt", "line 35\n", "thirty-five\n"), shellOp(5, "mv d.txt e.txt")}
	for i := range ops {
		ops[i].Session = sess.ID
	}
	fsys := NewOSFS()
	defer fsys.Close()
	p, err := Prepare(context.Background(), []Source{&SliceSource{S: sess, Ops: ops}}, fsys, Options{JournalKey: testKey, Dest: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	preview := p.Preview(context.Background())
	byPath := map[string]*FilePlan{}
	for _, pl := range preview.Plans {
		byPath[pl.Path()] = pl
	}
	if pl := byPath["e.txt"]; pl == nil || pl.Action != ActMove {
		t.Fatalf("plans %v: want e.txt moved from d.txt", byPath)
	}
	if h := byPath["c.txt"].Hunks(); len(h) != 2 || !byPath["c.txt"].Hunkable() || byPath["e.txt"].Hunkable() {
		c := byPath["c.txt"]
		t.Fatalf("c.txt (%s, host %+v, write known %v) has %d hunks; a move hunkable: %v", c.Action, c.Host.Known, c.Write.Known, len(h), byPath["e.txt"].Hunkable())
	}
	res, err := p.ApplyChosen(context.Background(), map[*FilePlan]Choice{
		byPath["a.txt"]: {Take: true},
		byPath["c.txt"]: {Take: true, Hunks: []bool{true, false}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "alpha\n", "c.txt": lines.Numbered(40, map[int]string{2: "two\n"}), "d.txt": "dee\n"}
	for name, text := range want {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != text {
			t.Errorf("%s = %q (%v), want %q", name, got, err, text)
		}
	}
	for _, name := range []string{"b.txt", "e.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s was written, though left", name)
		}
	}
	s := res.Report.Summary
	if s.Written != 2 || s.Left != 2 || res.Partial() {
		t.Errorf("summary %+v (partial %v): want 2 written, 2 left, not partial", s, res.Partial())
	}
	for _, f := range res.Report.Files {
		if f.Path == "c.txt" && (f.Action != ActUpdate || !strings.Contains(f.Reason, "1 of 2 hunks")) {
			t.Errorf("c.txt reported %s: %s", f.Action, f.Reason)
		}
	}
	// The preview's plans are the prepared ones, untouched by the choice.
	if byPath["b.txt"].Action != ActCreate {
		t.Errorf("the choice changed the prepared plan: %s", byPath["b.txt"].Action)
	}
	if len(res.Report.Journals) != 1 {
		t.Fatalf("journals %v", res.Report.Journals)
	}
	if _, err := Undo(fsys, dir, filepath.Base(res.Report.Journals[0]), testKey, false); err != nil {
		t.Fatal(err)
	}
	for name, text := range host {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != text {
			t.Errorf("after undo %s = %q", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("undo left a.txt")
	}
}
