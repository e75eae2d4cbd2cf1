package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/internal/osenv"
	recov "github.com/agentsandbox/sandbox/recover"
)

// TestApplyEqualsRecover checks that export then apply plans exactly like
// recover — the same action, grade and bytes for every file — on every kind
// of destination: empty, holding the files as the session started, holding
// them after the session (already recovered), and drifted by hand since. It
// runs over generated sessions of both agents and over the real corpus.
func TestApplyEqualsRecover(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	for agent, write := range map[string]func(io.Writer, gen.Options) (gen.Stats, error){"codex": gen.Rollout, "claude": gen.Claude} {
		t.Run(agent, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "session.jsonl")
			st := writeSession(t, name, write, gen.Options{Size: 1 << 20, Seed: 5, Files: 24, PatchEvery: 4, HostFiles: true})
			hosts := map[string]map[string]string{
				"empty":   {},
				"start":   st.Initial,
				"final":   st.Final,
				"drifted": drift(st.Initial),
			}
			for hname, tree := range hosts {
				t.Run(hname, func(t *testing.T) { compareApplyRecover(t, env, name, tree) })
			}
		})
	}
	for _, f := range corpusTranscripts(t) {
		if st, err := os.Stat(f); raceEnabled && err == nil && st.Size() > 600<<10 {
			continue // the large ones run without -race (.ci/run)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			// The corpus's files, as recovered, are the host: once as they
			// are, once changed by hand at their top.
			done := filepath.Join(t.TempDir(), "done")
			if _, stderr, code := runApp(t, env, "recover", "-t", f, "--dest", done); code != ExitOK && code != ExitPartial {
				t.Fatalf("recover: exit %d: %s", code, stderr)
			}
			tree := dirContents(t, done)
			if len(tree) == 0 {
				t.Skip("the session recovers no file")
			}
			compareApplyRecover(t, env, f, tree)
			compareApplyRecover(t, env, f, drift(tree))
		})
	}
}

// drift changes every third file of a tree at its top, as a person editing
// the checkout after the session would.
func drift(tree map[string]string) map[string]string {
	names := make([]string, 0, len(tree))
	for n := range tree {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]string{}
	for i, n := range names {
		out[n] = tree[n]
		if i%3 == 0 {
			out[n] = "edited on the host\n" + tree[n]
		}
	}
	return out
}

// compareApplyRecover recovers transcript onto one copy of tree and applies
// its export onto another, and requires the same plan and the same bytes.
func compareApplyRecover(t *testing.T, env osenv.Env, transcript string, tree map[string]string) {
	t.Helper()
	dir := t.TempDir()
	a, b, m := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "m.json")
	for _, root := range []string{a, b} {
		writeTree(t, root, tree)
	}
	rec, stderr, code := runApp(t, env, "recover", "-t", transcript, "--dest", a, "--json")
	if code != ExitOK && code != ExitPartial {
		t.Fatalf("recover: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runApp(t, env, "export", "-t", transcript, "-o", m); code != ExitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	app, stderr, code2 := runApp(t, env, "apply", m, "--dest", b, "--json")
	if code2 != ExitOK && code2 != ExitPartial {
		t.Fatalf("apply: exit %d: %s", code2, stderr)
	}
	if code != code2 {
		t.Errorf("recover exits %d, apply %d", code, code2)
	}
	pa, pb := plans(t, rec), plans(t, app)
	if pa != pb {
		t.Errorf("plans differ:\nrecover:\n%s\napply:\n%s", pa, pb)
	}
	ta, tb := dirContents(t, a), dirContents(t, b)
	if fmt.Sprint(ta) != fmt.Sprint(tb) {
		t.Errorf("trees differ:\nrecover %v\napply   %v", keys(ta), keys(tb))
	}
}

// plans lists a report's files as "path action grade sha256", sorted.
func plans(t *testing.T, report string) string {
	t.Helper()
	var r recov.Report
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("%v: %s", err, report)
	}
	var lines []string
	for _, f := range r.Files {
		lines = append(lines, fmt.Sprintf("%s %s %s %s", f.Path, f.Action, f.Confidence, f.SHA256))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func writeTree(t *testing.T, root string, tree map[string]string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range tree {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
