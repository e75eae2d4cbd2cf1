package opencode_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/ocdb"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"github.com/agentsandbox/sandbox/parse/opencode"
)

// seedStreams adds the record streams of the fixture sessions (database and
// legacy store) to a fuzz target's corpus.
func seedStreams(f *testing.F) {
	f.Helper()
	script, err := os.ReadFile("../../fixtures/opencode/sessions.sql")
	if err != nil {
		f.Fatal(err)
	}
	db := filepath.Join(f.TempDir(), "opencode.db")
	if err := ocdb.Build(db, string(script)); err != nil {
		f.Fatal(err)
	}
	for _, from := range []string{db, "../../fixtures/opencode"} {
		var fi discover.Finder
		cands, _, err := fi.From(from, nil)
		if err != nil {
			f.Fatal(err)
		}
		for i := range cands {
			if cands[i].Agent != manifest.AgentOpencode {
				continue
			}
			rc, err := cands[i].Open()
			if err != nil {
				f.Fatal(err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			f.Add(data)
		}
	}
}

// FuzzParse checks that no record stream, however damaged, makes the
// opencode parser panic, lose a line number, or make an op without a file.
func FuzzParse(f *testing.F) {
	seedStreams(f)
	golden.Seeds(f, "../../fixtures/opencode/export-*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := opencode.Parse(context.Background(), bytes.NewReader(data), "opencode.db#ses_f")
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range res.Ops {
			if op.Provenance.Line < 1 || (op.Kind != manifest.KindShell && len(op.Paths) == 0) {
				t.Fatalf("bad op %+v", op)
			}
			if op.Kind == manifest.KindEdit && len(op.Edits) != 1 {
				t.Fatalf("edit with %d edits", len(op.Edits))
			}
		}
	})
}

// FuzzDB checks that a damaged database file is an error or a list of
// sessions whose streams parse, never a crash: the fixture database with
// bytes changed.
func FuzzDB(f *testing.F) {
	script, err := os.ReadFile("../../fixtures/opencode/sessions.sql")
	if err != nil {
		f.Fatal(err)
	}
	db := filepath.Join(f.TempDir(), "seed.db")
	if err := ocdb.Build(db, string(script)); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(db)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, uint32(0), []byte{})
	f.Add(seed, uint32(4096+100), []byte{0xff, 0xff})
	f.Add(seed, uint32(len(seed)/2), []byte("{\"type\":\"tool\""))
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, base []byte, at uint32, patch []byte) {
		if len(base) < 100 || len(base) > 1<<20 {
			return
		}
		data := append([]byte{}, base...)
		if int(at) < len(data) {
			copy(data[at:], patch)
		}
		n++
		p := filepath.Join(dir, "f"+itoa(n)+".db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		defer opencode.Forget(p)
		var fi discover.Finder
		cands, _, err := fi.From(p, nil)
		if err != nil {
			return
		}
		for i := range cands {
			rc, err := cands[i].Open()
			if err != nil {
				continue
			}
			if _, err := opencode.Parse(context.Background(), rc, cands[i].Name); err != nil {
				t.Fatal(err)
			}
			rc.Close()
		}
	})
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}
