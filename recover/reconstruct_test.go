package recover

import (
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

func ctxp(s string) *string { return &s }

func TestSeekModes(t *testing.T) {
	content := "a\nblock\nb\nblock\nc\n"
	chunks := []manifest.Chunk{{OldLines: []string{"block"}, NewLines: []string{"BLOCK"}}}
	got, _, err := ApplyChunks(content, "f", chunks, Faithful)
	if err != nil || got != "a\nBLOCK\nb\nblock\nc\n" {
		t.Errorf("faithful: %q %v", got, err)
	}
	if _, _, err := ApplyChunks(content, "f", chunks, Strict); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("strict: want an ambiguity error, got %v", err)
	}
	// Strict still finds a unique match that differs only in whitespace,
	// and reports it as fuzz.
	got, fuzz, err := ApplyChunks("x\n  y  \nz\n", "f", []manifest.Chunk{{OldLines: []string{"y"}, NewLines: []string{"Y"}}}, Strict)
	if err != nil || fuzz != 1 || got != "x\nY\nz\n" {
		t.Errorf("strict fuzz: %q %d %v", got, fuzz, err)
	}
	// Unicode punctuation is normalised in the last pass.
	got, _, err = ApplyChunks("say \u201chi\u201d \u2014 ok\n", "f", []manifest.Chunk{{OldLines: []string{`say "hi" - ok`}, NewLines: []string{"bye"}}}, Faithful)
	if err != nil || got != "bye\n" {
		t.Errorf("unicode: %q %v", got, err)
	}
	// CRLF files keep CRLF.
	got, _, err = ApplyChunks("a\r\nb\r\n", "f", []manifest.Chunk{{Context: ctxp("a"), OldLines: []string{"b"}, NewLines: []string{"B"}}}, Strict)
	if err != nil || got != "a\r\nB\r\n" {
		t.Errorf("crlf: %q %v", got, err)
	}
}

func patchOp(seq int, cwd, text string, hunks []manifest.Hunk, ev ...manifest.Evidence) manifest.Op {
	for i := range hunks {
		hunks[i].Target = cwd + "/" + hunks[i].Path
	}
	return manifest.Op{Seq: seq, Kind: manifest.KindPatch, Cwd: cwd, PatchText: text, Patch: &manifest.Patch{Hunks: hunks},
		Outcome: manifest.OutcomeApplied, Evidence: ev, Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: seq + 1, CallID: text}}
}

func noBase(string) ([]byte, bool, bool) { return nil, false, false }

func TestReconstructEvidence(t *testing.T) {
	ops := []manifest.Op{
		patchOp(0, "/w", "add", []manifest.Hunk{{Kind: manifest.HunkAdd, Path: "a.txt", Contents: "1\n2\n3\n"}}),
		// The file changed outside the tools before this update: its recorded
		// pre-image (a delete's content) disagrees with the replay.
		patchOp(1, "/w", "upd", []manifest.Hunk{{Kind: manifest.HunkUpdate, Path: "a.txt", Chunks: []manifest.Chunk{{OldLines: []string{"2"}, NewLines: []string{"two"}}}}}),
		patchOp(2, "/w", "del", []manifest.Hunk{{Kind: manifest.HunkDelete, Path: "a.txt"}},
			manifest.Evidence{Path: "/w/a.txt", Kind: manifest.EvidencePre, Content: "1\ntwo\nthree\n"}),
		patchOp(3, "/w", "upd-unknown", []manifest.Hunk{{Kind: manifest.HunkUpdate, Path: "b.txt", Chunks: []manifest.Chunk{{OldLines: []string{"x"}, NewLines: []string{"y"}}}}}),
	}
	files, st := reconstruct(ops, noBase, ReconstructOptions{})
	if st.Applied != 4 || len(files) != 2 {
		t.Fatalf("stats %+v, files %d", st, len(files))
	}
	a, b := files[0], files[1]
	if a.Confidence != Exact || a.Final.Exists || len(a.Drift) != 1 || !strings.Contains(a.Drift[0], "t.jsonl:3: the recorded pre-image differs") {
		t.Errorf("a = %+v", a)
	}
	if !a.Start.Known || a.Start.Exists {
		t.Errorf("a's start should be absent: %+v", a.Start)
	}
	if b.Confidence != Unrecoverable || !strings.Contains(b.Reason, "content before the update is unknown") {
		t.Errorf("b = %+v", b)
	}
}

func TestReconstructHostBaseAndDedup(t *testing.T) {
	up := patchOp(0, "/w", "u1", []manifest.Hunk{{Kind: manifest.HunkUpdate, Path: "c.txt", MovePath: "d.txt",
		Chunks: []manifest.Chunk{{OldLines: []string{"old"}, NewLines: []string{"new"}}}}})
	up.Patch.Hunks[0].MoveTarget = "/w/d.txt"
	dup := up // the same call copied into a forked transcript
	base := func(p string) ([]byte, bool, bool) {
		if p == "/w/c.txt" {
			return []byte("keep\nold\n"), true, true
		}
		return nil, false, true
	}
	files, st := reconstruct([]manifest.Op{up, dup}, base, ReconstructOptions{})
	if st.Duplicates != 1 {
		t.Errorf("duplicates = %d", st.Duplicates)
	}
	var c, d *FileResult
	for _, f := range files {
		switch f.Path {
		case "/w/c.txt":
			c = f
		case "/w/d.txt":
			d = f
		}
	}
	if c == nil || d == nil || c.Final.Exists || d.Final.Text != "keep\nnew\n" || d.MovedFrom != "/w/c.txt" || d.Confidence != HostBased {
		t.Errorf("c=%+v d=%+v", c, d)
	}
}
