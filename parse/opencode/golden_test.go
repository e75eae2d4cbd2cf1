package opencode_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/ocdb"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"github.com/agentsandbox/sandbox/parse/opencode"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sessions lists the sessions of a database or legacy store as --from
// does, and parses each.
func sessions(t *testing.T, from string) map[string]*golden.Session {
	t.Helper()
	var f discover.Finder
	cands, skipped, err := f.From(from, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		t.Logf("skipped %s: %s", s.Name, s.Why)
	}
	out := map[string]*golden.Session{}
	for i := range cands {
		c := &cands[i]
		if c.Agent != manifest.AgentOpencode {
			continue
		}
		rc, err := c.Open()
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(c.Name)
		res, err := opencode.Parse(context.Background(), rc, name)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[c.ID] = golden.Summarize(res.Session, res.Ops)
	}
	return out
}

// TestFixtures parses every session of fixtures/opencode (a database built
// from sessions.sql with opencode's schema, and a legacy file store) and
// compares each with its golden.
func TestFixtures(t *testing.T) {
	script, err := os.ReadFile("../../fixtures/opencode/sessions.sql")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "opencode.db")
	if err := ocdb.Build(db, string(script)); err != nil {
		t.Fatal(err)
	}
	got := sessions(t, db)
	for id, g := range sessions(t, "../../fixtures/opencode") {
		got[id] = g
	}
	if len(got) != 3 {
		t.Fatalf("found %d sessions, want 3", len(got))
	}
	for id, g := range got {
		t.Run(id, func(t *testing.T) { golden.Check(t, *update, g, filepath.Join("testdata/golden", id+".json")) })
	}
	// The JSON of opencode export holds the same session: it reads the same.
	const id = "ses_7a1c2f0e3ffeQk2Lr8mN4pVw6x"
	fh, err := os.Open("../../fixtures/opencode/export-" + id + ".json")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	res, err := opencode.Parse(context.Background(), fh, "export.json")
	if err != nil {
		t.Fatal(err)
	}
	if exp, db := golden.Summarize(res.Session, res.Ops).Bytes(), got[id].Bytes(); string(exp) != string(db) {
		t.Errorf("the export reads differently from the database:\n%s\nwant\n%s", exp, db)
	}
}

// TestCases runs the txtar cases in testdata/cases: each holds a database
// ("db.sql", run after opencode's schema) or a legacy store (files under
// "storage/"), and the expected summary of its one session ("want.json").
func TestCases(t *testing.T) {
	golden.Cases(t, *update, func(t *testing.T, files map[string][]byte) *golden.Session {
		dir := t.TempDir()
		from := dir
		for name, data := range files {
			switch {
			case name == "db.sql":
				from = filepath.Join(dir, "opencode.db")
				if err := ocdb.Build(from, string(data)); err != nil {
					t.Fatal(err)
				}
			case strings.HasPrefix(name, "storage/"):
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		got := sessions(t, from)
		if len(got) != 1 {
			t.Fatalf("found %d sessions, want 1", len(got))
		}
		for _, g := range got {
			return g
		}
		return nil
	})
}
