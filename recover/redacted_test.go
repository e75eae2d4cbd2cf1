package recover

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// A placeholder the session wrote grades the file redacted, with the line
// and the placeholder; one the file held before does not; a placeholder in
// the path does whatever the content.
func TestRedactedGrade(t *testing.T) {
	host := map[string]string{
		"/w/keep.go": "package keep\n\n// Mark is what a secret becomes.\nconst Mark = \"[REDACTED]\"\n",
		"/w/cfg.env": "A=1\n",
	}
	base := func(p string) ([]byte, bool, bool) {
		s, ok := host[p]
		return []byte(s), ok, true
	}
	upd := func(seq int, file, text string, old, new []string) manifest.Op {
		return patchOp(seq, "/w", text, []manifest.Hunk{{Kind: manifest.HunkUpdate, Path: file, Chunks: []manifest.Chunk{{OldLines: old, NewLines: new}}}})
	}
	ops := []manifest.Op{
		writeOp(0, "/w/new.env", "DEBUG=true\nAPI_KEY=REDACTED\n"),
		// The host's copy already names the placeholder: the session's
		// change elsewhere is not a redaction.
		upd(1, "keep.go", "u1", []string{"package keep"}, []string{"package keep // the marker"}),
		// The session's own line brings one in, onto a host copy.
		upd(2, "cfg.env", "u2", []string{"A=1"}, []string{"A=1", "TOKEN=<REDACTED>"}),
		writeOp(3, "/w/.REDACTED.txt", "plain\n"),
		writeOp(4, "/w/prose.md", "the redacted values were unredacted; isRedacted()\n"),
		// A later shell write makes it stale; the placeholder still wins, and
		// the stale reason stays in the notes.
		writeOp(5, "/w/late.txt", "k=[REDACTED:github-token]\n"),
		shellOp(6, "some-tool late.txt > late.txt"),
	}
	files, _ := reconstruct(ops, base, ReconstructOptions{})
	got := map[string]*FileResult{}
	for _, f := range files {
		got[f.Path] = f
	}
	for _, c := range []struct {
		path   string
		grade  Confidence
		reason string
	}{
		{"/w/new.env", Redacted, "line 2 holds the redaction placeholder REDACTED: the transcript was redacted, the secret is not in it"},
		{"/w/keep.go", HostBased, ""},
		{"/w/cfg.env", Redacted, "line 2 holds the redaction placeholder <REDACTED>: the transcript was redacted, the secret is not in it"},
		{"/w/.REDACTED.txt", Redacted, "the path holds the redaction placeholder REDACTED: the transcript was redacted, the file's real name is not in it"},
		{"/w/prose.md", Exact, ""},
		{"/w/late.txt", Redacted, "line 1 holds the redaction placeholder [REDACTED:github-token]"},
	} {
		f := got[c.path]
		if f == nil {
			t.Errorf("%s: not reconstructed", c.path)
			continue
		}
		if f.Confidence != c.grade || !strings.HasPrefix(f.Reason, c.reason) || (c.reason == "" && f.Reason != "") {
			t.Errorf("%s: %s (%q), want %s (%q)", c.path, f.Confidence, f.Reason, c.grade, c.reason)
		}
	}
	if late := got["/w/late.txt"]; late == nil || len(late.Notes) == 0 || !strings.HasPrefix(late.Notes[len(late.Notes)-1], "stale: ") {
		t.Errorf("late.txt's stale reason is not in its notes: %+v", late)
	}
	if !(Redacted.rank() < UnknownOutcome.rank() && Redacted.rank() > Unrecoverable.rank()) {
		t.Error("redacted ranks outside unknown-outcome and unrecoverable")
	}
}

// A call of unknown outcome that was not replayed leaves no content to hold
// a placeholder: the file stays unknown-outcome, and is skipped for that.
func TestRedactedUnknownOutcome(t *testing.T) {
	op := writeOp(0, "/w/a.env", "K=[REDACTED]\n")
	op.Outcome = manifest.OutcomeUnknown
	files, _ := reconstruct([]manifest.Op{op}, noBase, ReconstructOptions{})
	if len(files) != 1 || files[0].Confidence != UnknownOutcome {
		t.Fatalf("files %+v", files)
	}
	files, _ = reconstruct([]manifest.Op{op}, noBase, ReconstructOptions{IncludeUnknown: true})
	if len(files) != 1 || files[0].Confidence != Redacted || len(files[0].Notes) != 1 || !strings.HasPrefix(files[0].Notes[0], "unknown-outcome: ") {
		t.Fatalf("replayed: %+v", files)
	}
}

// The plan skips a redacted file unless told to write it, and then writes
// the recovered content, placeholders and all.
func TestPlanRedacted(t *testing.T) {
	root := t.TempDir()
	m, err := NewMapper([]Rule{{From: "/w", To: root}})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := reconstruct([]manifest.Op{writeOp(0, "/w/a.env", "K=[REDACTED]\n"), writeOp(1, "/w/b.txt", "b\n")}, noBase, ReconstructOptions{})
	fsys := NewOSFS()
	defer fsys.Close()
	for _, c := range []struct {
		policy RedactedPolicy
		action Action
	}{{"", ActSkipped}, {RedactedSkip, ActSkipped}, {RedactedApply, ActCreate}} {
		plans, err := plan(files, m, fsys, OnConflictSkip, c.policy)
		if err != nil || len(plans) != 2 {
			t.Fatalf("%q: %v %d plans", c.policy, err, len(plans))
		}
		a, b := plans[0], plans[1]
		if a.Action != c.action || a.File.Confidence != Redacted || b.Action != ActCreate {
			t.Errorf("%q: a %s (%s), b %s", c.policy, a.Action, a.Reason, b.Action)
		}
		if c.action == ActSkipped && (a.Written() || !strings.Contains(a.Reason, "not written (--redacted apply writes it)")) {
			t.Errorf("%q: a skipped is written, or says nothing: %q", c.policy, a.Reason)
		}
		if c.action == ActCreate && a.Write.Text != "K=[REDACTED]\n" {
			t.Errorf("%q: a writes %q", c.policy, a.Write.Text)
		}
	}
}

// A manifest file --redact changed is graded redacted, its content read
// whatever its sha256 says (the original's), and its placeholder named.
func TestFileFromManifestRedacted(t *testing.T) {
	red := "k = '[REDACTED:github-token]'\n"
	mf := manifest.File{Path: "/w/s.py", Confidence: "exact", Ops: 1, Redacted: true,
		Start: manifest.State{State: manifest.StateAbsent},
		Final: manifest.State{State: manifest.StateContent, SHA256: strings.Repeat("0", 64), Encoding: "utf-8", Content: &red}}
	f, err := fileFromManifest(mf)
	if err != nil {
		t.Fatal(err)
	}
	if f.Confidence != Redacted || !f.Final.Known || f.Final.Text != red || !isRedacted(f) ||
		f.Reason != "line 1 holds the redaction placeholder [REDACTED:github-token]: the manifest was redacted (export --redact), the secret is not in it" {
		t.Errorf("%+v", f)
	}
	// A manifest whose files section already says redacted (an export of a
	// redacted transcript) keeps it.
	mf.Redacted, mf.Confidence, mf.Final.SHA256 = false, "redacted", sum(red)
	if f, err := fileFromManifest(mf); err != nil || f.Confidence != Redacted {
		t.Errorf("%+v %v", f, err)
	}
}

// A manifest whose files section says exact (exported before the grade
// existed) does not lift a replay that found a placeholder the session
// wrote: apply grades it redacted and skips it, as recover does.
func TestApplyManifestKeepsRedacted(t *testing.T) {
	var buf bytes.Buffer
	w := manifest.NewWriter(&buf)
	op := writeOp(0, "/w/a.env", "K=[REDACTED]\n")
	op.Session = "s1"
	if err := w.Op(op); err != nil {
		t.Fatal(err)
	}
	text := "K=[REDACTED]\n"
	files := []manifest.File{{Path: "/w/a.env", Sessions: []string{"s1"}, Confidence: "exact", Ops: 1, Base: BaseTranscript,
		Start: manifest.State{State: manifest.StateAbsent},
		Final: manifest.State{State: manifest.StateContent, SHA256: sum(text), Encoding: "utf-8", Content: &text}}}
	if err := w.Close([]manifest.Session{{ID: "s1", Agent: manifest.AgentClaude, Cwd: "/w"}}, files, nil); err != nil {
		t.Fatal(err)
	}
	fsys := NewOSFS()
	defer fsys.Close()
	res, err := ApplyManifest(context.Background(), &buf, &DryRunFS{Read: fsys}, Options{JournalKey: testKey, Dest: t.TempDir(), DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.Files) != 1 || res.Report.Files[0].Confidence != string(Redacted) || res.Report.Files[0].Action != ActSkipped {
		t.Errorf("files %+v", res.Report.Files)
	}
}
