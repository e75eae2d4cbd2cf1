package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/inspect"
	"github.com/agentsandbox/sandbox/internal/osenv"
	recov "github.com/agentsandbox/sandbox/recover"
)

// corpusTranscripts lists every transcript the project keeps as test data:
// the real corpus copies and the sample.
func corpusTranscripts(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../fixtures/corpus/*/*.jsonl")
	if len(files) < 40 {
		t.Fatalf("found %d corpus transcripts", len(files))
	}
	return append(files, "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
}

// TestOneCountEverywhere checks that sessions, recover, export+apply and
// inspect agree, for every corpus transcript, on its operations (applied,
// failed, rejected, unknown; each call once however often it is copied), its
// files and its drift.
func TestOneCountEverywhere(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	for _, f := range corpusTranscripts(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir := t.TempDir()
			empty := filepath.Join(dir, "empty")
			if err := os.Mkdir(empty, 0o755); err != nil {
				t.Fatal(err)
			}
			rec := decode[recov.Report](t, env, "recover", "-t", f, "--dest", empty, "--dry-run", "--json")
			m := filepath.Join(dir, "m.json")
			if _, stderr, code := runApp(t, env, "export", "-t", f, "-o", m); code != ExitOK {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			app := decode[recov.Report](t, env, "apply", m, "--dest", empty, "--dry-run", "--json")
			ins := decode[inspect.Inspection](t, env, "inspect", f, "--base", empty, "--json")
			ses := decode[sessionsReport](t, env, "sessions", "-t", f, "--json")

			r, a := rec.Summary, app.Summary
			if r.Ops != a.Ops || r.OpsApplied != a.OpsApplied || r.OpsFailedInSession != a.OpsFailedInSession ||
				r.OpsRejected != a.OpsRejected || r.OpsUnknown != a.OpsUnknown || r.Files != a.Files || r.Drift != a.Drift ||
				r.EvidenceMismatches != a.EvidenceMismatches {
				t.Errorf("recover and apply disagree:\nrecover %+v\napply   %+v", r, a)
			}
			if ins.Counts.FileOps != r.Ops || ins.Counts.OpsApplied != r.OpsApplied || ins.Counts.Files != r.Files || ins.Counts.Drift != r.Drift {
				t.Errorf("inspect says %d ops (%d applied), %d files, %d drift; recover %d (%d), %d, %d",
					ins.Counts.FileOps, ins.Counts.OpsApplied, ins.Counts.Files, ins.Counts.Drift, r.Ops, r.OpsApplied, r.Files, r.Drift)
			}
			var applied, failed, other int
			for _, s := range ses.Sessions {
				applied, failed, other = applied+s.OpsApplied, failed+s.OpsFailed, other+s.OpsOther
			}
			if applied != r.OpsApplied || failed != r.OpsFailedInSession || other != r.OpsRejected+r.OpsUnknown {
				t.Errorf("sessions says %d applied, %d failed, %d other; recover %d, %d, %d",
					applied, failed, other, r.OpsApplied, r.OpsFailedInSession, r.OpsRejected+r.OpsUnknown)
			}
		})
	}
}

// TestCountsOfCopies checks that a session found in several copies (a
// resumed or backed-up transcript) counts each call once in sessions, as
// recover replays it once.
func TestCountsOfCopies(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	dir := t.TempDir()
	for _, f := range []string{"../fixtures/corpus/claude/ccviewer_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
		"../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, copyName := range []string{"a", "b", "c"} {
			if err := os.WriteFile(filepath.Join(dir, copyName+"-"+filepath.Base(f)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ses := decode[sessionsReport](t, env, "sessions", "--from", dir, "--json")
	if len(ses.Sessions) != 2 {
		t.Fatalf("%d sessions listed, want 2", len(ses.Sessions))
	}
	for _, s := range ses.Sessions {
		rec := decode[recov.Report](t, env, "recover", "--from", dir, "--session", s.ID, "--dest", t.TempDir(), "--dry-run", "--json")
		r := rec.Summary
		if s.OpsApplied != r.OpsApplied || s.OpsFailed != r.OpsFailedInSession || s.OpsOther != r.OpsRejected+r.OpsUnknown {
			t.Errorf("%s: sessions says %d/%d/%d, recover %d/%d/%d (%d duplicates)", s.ID, s.OpsApplied, s.OpsFailed, s.OpsOther,
				r.OpsApplied, r.OpsFailedInSession, r.OpsRejected+r.OpsUnknown, r.OpsDuplicate)
		}
		if r.OpsDuplicate == 0 {
			t.Errorf("%s: recover saw no duplicate in three copies", s.ID)
		}
		if len(s.Transcripts) != 3 {
			t.Errorf("%s: %d transcripts, want 3", s.ID, len(s.Transcripts))
		}
	}
}

// decode runs sandbox and decodes its --json document; exit 0 and 3 are
// both a finished run.
func decode[T any](t *testing.T, env osenv.Env, args ...string) T {
	t.Helper()
	out, stderr, code := runApp(t, env, args...)
	if code != ExitOK && code != ExitPartial {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %v: %s", args, err, out)
	}
	return v
}
