package goose

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/goosedb"
	"github.com/agentsandbox/sandbox/fixtures/respell"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCorpus has nothing to read: no real Goose session has been found
// (fixtures/incoming/goose/SOURCES.md), so fixtures/corpus/goose does not
// exist and the crafted cases (TestCases) stand for it.
func TestCorpus(t *testing.T) {
	if _, err := os.Stat("../../fixtures/corpus/goose"); err != nil {
		t.Skip("no real Goose session in fixtures/corpus/goose (none public was found; see fixtures/incoming/goose/SOURCES.md)")
	}
	golden.Corpus(t, *update, "goose", 1, func(r io.Reader, name string) (manifest.Session, []manifest.Op, error) {
		res, err := parse(context.Background(), r, name)
		if err != nil {
			return manifest.Session{}, nil, err
		}
		return res.Session, res.Ops, nil
	})
}

// streamOf builds the database a spec describes in a temporary folder and
// returns the record stream of its one session, and its name.
func streamOf(t testing.TB, spec []byte) ([]byte, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "sessions.db")
	if err := goosedb.Build(db, bytes.NewReader(spec)); err != nil {
		t.Fatal(err)
	}
	cands, err := dbSessions(db, "sessions.db", time.Time{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 {
		t.Fatalf("%d sessions in the spec, want 1", len(cands))
	}
	rc, err := cands[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data, cands[0].Name
}

// TestCases runs the txtar cases in testdata/cases: a legacy file
// (session.jsonl) is parsed as it is, a database (spec.jsonl, built with
// fixtures/goosedb) as the record stream of its session.
func TestCases(t *testing.T) {
	golden.Cases(t, *update, func(t *testing.T, files map[string][]byte) *golden.Session {
		data, name := files["session.jsonl"], "session.jsonl"
		if spec, ok := files["spec.jsonl"]; ok {
			data, name = streamOf(t, spec)
		}
		res, err := parse(context.Background(), bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		return golden.Summarize(res.Session, res.Ops)
	})
}

// FuzzParse checks that no session, however damaged, makes the parser
// panic, lose a line number, or make an operation without a file; and
// that what it emits as it reads is what a timeline read emits.
func FuzzParse(f *testing.F) {
	cases, _ := filepath.Glob("testdata/cases/*.txtar")
	for _, c := range cases {
		ar, err := txtar.ParseFile(c)
		if err != nil {
			f.Fatal(err)
		}
		for _, fl := range ar.Files {
			switch fl.Name {
			case "session.jsonl":
				f.Add(fl.Data)
			case "spec.jsonl":
				data, _ := streamOf(f, fl.Data)
				f.Add(data)
			}
		}
	}
	golden.Fuzz(f, "f.jsonl", stream)
}

// TestRespelled parses every legacy case written again in other spellings
// (fixtures/respell: spacing, key order, escapes, a BOM and CRLF) to the
// same summary.
func TestRespelled(t *testing.T) {
	cases, _ := filepath.Glob("testdata/cases/*.txtar")
	for _, c := range cases {
		ar, err := txtar.ParseFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, fl := range ar.Files {
			if fl.Name != "session.jsonl" {
				continue
			}
			sum := func(data []byte) string {
				res, err := parse(context.Background(), bytes.NewReader(data), "session.jsonl")
				if err != nil {
					t.Fatal(err)
				}
				g := golden.Summarize(res.Session, res.Ops)
				g.Warnings = nil // they quote bytes of the damaged lines
				return string(g.Bytes())
			}
			want := sum(fl.Data)
			for _, v := range respell.Variants {
				if v.Name == "gzip" || v.Name == "all" {
					continue // the reader is given plain JSON lines
				}
				if got := sum(respell.Respell(fl.Data, v)); got != want {
					t.Errorf("%s, %s: got\n%s\nwant\n%s", filepath.Base(c), v.Name, got, want)
				}
			}
		}
	}
}

// FuzzDB checks that a damaged sessions.db (the crafted one of
// testdata/cases/db.txtar with bytes overwritten) lists as an error, or as
// sessions that open as an error or parse: never a crash.
func FuzzDB(f *testing.F) {
	ar, err := txtar.ParseFile("testdata/cases/db.txtar")
	if err != nil {
		f.Fatal(err)
	}
	var seeds [][]byte
	for _, fl := range ar.Files {
		if fl.Name != "spec.jsonl" {
			continue
		}
		db := filepath.Join(f.TempDir(), "sessions.db")
		if err := goosedb.Build(db, bytes.NewReader(fl.Data)); err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(db)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	golden.FuzzDB(f, Agent{}, stores.Forget, stream, seeds...)
}
