package recover

import (
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// A merge is never exact: the host's own lines were never in the
// transcript. The plan grades it merged, and names those lines.
func TestMergeGradedMerged(t *testing.T) {
	start := "a\nb\nc\nd\ne\n"
	fin := "a\nb\nC\nd\ne\n"     // the session changed c
	host := "A\nb\nc\nd\nE\nF\n" // the host changed a and e, and added F
	f := &FileResult{Path: "/w/x.txt", Start: Content{Known: true, Exists: true, Text: start},
		Final: Content{Known: true, Exists: true, Text: fin}, Confidence: Exact, Ops: 1}
	p := &FilePlan{File: f}
	if got := p.Grade(); got != Exact {
		t.Fatalf("before planning: %s", got)
	}
	p.Action = ActMerge
	if got := p.Grade(); got != Merged {
		t.Errorf("a merge of an exact file is graded %s, want merged", got)
	}
	f.Confidence = Stale
	if got := p.Grade(); got != Stale {
		t.Errorf("a merge of a stale file is graded %s, want stale (never raised)", got)
	}
	merged, n := Merge3(start, host, fin, "host", "recovered")
	if n != 0 || merged != "A\nb\nC\nd\nE\nF\n" {
		t.Fatalf("merge = %q, %d conflicts", merged, n)
	}
	if got := hostLines(fin, merged); got != "1, 5-6" {
		t.Errorf("host lines = %q, want \"1, 5-6\"", got)
	}
	if got := hostLines(fin, fin); got != "" {
		t.Errorf("host lines of the recovered content itself = %q", got)
	}
}

// A partial Read that disagrees with the replay is drift, and the file it
// names cannot stay exact; one that agrees confirms it.
func TestPartialReadEvidence(t *testing.T) {
	write := func(line int, content string) manifest.Op {
		c := content
		return manifest.Op{Session: "s", Kind: manifest.KindWrite, Paths: []string{"/w/a.go"}, Content: &c,
			Outcome: manifest.OutcomeApplied, Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: line}}
	}
	read := func(line, start, total int, content string) manifest.Op {
		return manifest.Op{Session: "s", Kind: manifest.KindObserve, Paths: []string{"/w/a.go"}, Outcome: manifest.OutcomeApplied,
			Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: line},
			Evidence:   []manifest.Evidence{{Path: "/w/a.go", Kind: manifest.EvidencePartial, Content: content, StartLine: start, TotalLines: total}}}
	}
	text := "package a\n\nfunc F() {} //nolint:all\n\nfunc G() {}\n"
	for _, tc := range []struct {
		name  string
		read  manifest.Op
		grade Confidence
		drift string
		final string
	}{
		{"agrees", read(2, 3, 6, "func F() {} //nolint:all\n"), Exact, "", text},
		{"long line read shortened", read(2, 1, 6, "package a"), Exact, "", text},
		{"a line differs", read(2, 3, 6, "func F() {}"), Stale, `t.jsonl:2: the agent read line 3 as "func F() {}", the replay has "func F() {} //nolint:all"`,
			"package a\n\nfunc F() {}\n\nfunc G() {}\n"},
		{"the file has other lines", read(2, 1, 4, "package a"), Stale, "the agent read a file of 4 lines, the replay has 6 lines", text},
		{"past the end", read(2, 6, 7, "\nextra"), Stale, `the agent read line 7 as "extra", the replay has 6 lines`, text},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, st := reconstruct([]manifest.Op{write(1, text), tc.read}, nil, ReconstructOptions{})
			if len(files) != 1 {
				t.Fatalf("%d files", len(files))
			}
			f := files[0]
			if f.Confidence != tc.grade {
				t.Errorf("grade %s, want %s (%s)", f.Confidence, tc.grade, f.Reason)
			}
			if tc.drift == "" && (len(f.Drift) > 0 || st.Mismatches > 0) {
				t.Errorf("drift %q", f.Drift)
			}
			if tc.drift != "" && (len(f.Drift) != 1 || !strings.Contains(f.Drift[0], tc.drift)) {
				t.Errorf("drift %q, want one holding %q", f.Drift, tc.drift)
			}
			if st.Checks < 1 {
				t.Errorf("no check counted")
			}
			if f.Final.Text != tc.final {
				t.Errorf("final %q, want %q", f.Final.Text, tc.final)
			}
		})
	}
	// A later Write pins the whole file again.
	files, _ := reconstruct([]manifest.Op{write(1, text), read(2, 3, 6, "func F() {}"), write(3, "package a\n")}, nil, ReconstructOptions{})
	if files[0].Confidence != Exact {
		t.Errorf("after a later Write: %s", files[0].Confidence)
	}
}

func TestEditApplied(t *testing.T) {
	ins := manifest.Edit{Old: "}\n", New: "}\n\nfunc G() {}\n"}
	for _, tc := range []struct {
		name string
		text string
		e    manifest.Edit
		want applied
	}{
		{"insertion not made", "func F() {\n}\n", ins, appliedNo},
		{"insertion made", "func F() {\n}\n\nfunc G() {}\n", ins, appliedYes},
		{"insertion made, anchor also elsewhere", "func F() {\n}\n\nfunc G() {}\n\nfunc H() {\n}\n", ins, appliedBoth},
		{"replacement made", "b\n", manifest.Edit{Old: "a\n", New: "b\n"}, appliedYes},
		{"replacement not made", "a\nb\n", manifest.Edit{Old: "a\n", New: "b\n"}, appliedNo},
		{"neither there", "c\n", manifest.Edit{Old: "a\n", New: "b\n"}, appliedNo},
		{"deletion: nothing to find", "c\n", manifest.Edit{Old: "a\n", New: ""}, appliedNo},
		{"a write whole", "x", manifest.Edit{Old: "", New: "x"}, appliedNo},
		{"no change", "a", manifest.Edit{Old: "a", New: "a"}, appliedNo},
	} {
		if got := editApplied(tc.text, tc.e); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// An insertion with no recorded result that would put a block the host
// held a second time is not guessed at (insertedAgain); evidence of the
// whole content after it settles the file again.
func TestInsertedAgain(t *testing.T) {
	fn := "func Sum(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}\n"
	host := "package a\n\nfunc Once() int {\n\treturn 1\n}\n\n// Sum adds, zero for none.\n" + fn
	insert := manifest.Op{Session: "s", Kind: manifest.KindEdit, Paths: []string{"/w/a.go"}, Outcome: manifest.OutcomeApplied,
		Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: 1},
		Edits:      []manifest.Edit{{Old: "\treturn 1\n}\n", New: "\treturn 1\n}\n\n// Sum adds.\n" + fn}}}
	base := func(string) ([]byte, bool, bool) { return []byte(host), true, true }
	files, _ := reconstruct([]manifest.Op{insert}, base, ReconstructOptions{})
	if len(files) != 1 || files[0].Confidence != Unrecoverable || !strings.Contains(files[0].Reason, `inserted a block the file already held ("func Sum(xs []int) int {")`) {
		t.Fatalf("an insertion of what the host holds in a later form: %s: %s", files[0].Confidence, files[0].Reason)
	}
	// Onto a host without the function, the insertion is made once.
	bare := func(string) ([]byte, bool, bool) {
		return []byte("package a\n\nfunc Once() int {\n\treturn 1\n}\n"), true, true
	}
	if files, _ := reconstruct([]manifest.Op{insert}, bare, ReconstructOptions{}); files[0].Confidence == Unrecoverable {
		t.Fatalf("an insertion onto a host without it: %s", files[0].Reason)
	}
	// A Write of the whole file after it settles what it holds, twice or not.
	both := host + "\n// Sum again.\n" + fn
	write := manifest.Op{Session: "s", Kind: manifest.KindWrite, Paths: []string{"/w/a.go"}, Content: &both, Outcome: manifest.OutcomeApplied,
		Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: 2}}
	if files, _ := reconstruct([]manifest.Op{insert, write}, base, ReconstructOptions{}); files[0].Confidence != Exact || files[0].Final.Text != both {
		t.Fatalf("after a Write of the whole file: %s: %s", files[0].Confidence, files[0].Reason)
	}
}
