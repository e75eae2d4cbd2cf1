package golden

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
)

// StreamFunc is how a parser reads a transcript named file: it hands what
// it settles to h and returns the session.
type StreamFunc func(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error)

// Parsed is a whole transcript, parsed: its session and its operations.
type Parsed struct {
	Session manifest.Session
	Ops     []manifest.Op
}

// Parse reads a whole transcript with stream, for the tests that look at
// every operation at once.
func Parse(ctx context.Context, stream StreamFunc, r io.Reader, file string) (*Parsed, error) {
	res := &Parsed{}
	sess, err := stream(ctx, r, file, emit.Handler{Op: func(op manifest.Op) { res.Ops = append(res.Ops, op) }})
	res.Session = sess
	return res, err
}

// Fuzz is the fuzz test of every parser: seeded with the files patterns
// match (cut at 32 KiB), it checks that no input, however damaged, makes
// the parser fail (damage is a warning, never an error), panic, lose a line
// number or make an operation without a file (but a shell command), and
// that the operations it reads in place (emit.Sequencer.Line) are those it
// makes with a timeline. file is the transcript's name the parser is given.
func Fuzz(f *testing.F, file string, stream StreamFunc, patterns ...string) {
	Seeds(f, patterns...)
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse(context.Background(), stream, bytes.NewReader(data), file)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range res.Ops {
			if op.Provenance.Line < 1 || (op.Kind != manifest.KindShell && len(op.Paths) == 0) {
				t.Fatalf("bad op %+v", op)
			}
		}
		SameOps(t, data, res.Ops, func(h emit.Handler) error {
			_, err := stream(context.Background(), bytes.NewReader(data), file, h)
			return err
		})
	})
}

// Generated parses a session a generator of fixtures/gen writes with o
// (the one a parser's benchmark reads) and checks it: every file change
// the generator made is one applied write or edit, in a session that ended
// cleanly, without a warning, in the generator's directory. It returns the
// parse, for an agent's own checks.
func Generated(t *testing.T, stream StreamFunc, write func(io.Writer, gen.Options) (gen.Stats, error), o gen.Options) *Parsed {
	t.Helper()
	var buf bytes.Buffer
	st, err := write(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Parse(context.Background(), stream, &buf, "bench.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	changes := 0
	for _, op := range res.Ops {
		if op.Kind == manifest.KindWrite || op.Kind == manifest.KindEdit {
			changes++
			if op.Outcome != manifest.OutcomeApplied {
				t.Errorf("op %+v not applied", op)
			}
		}
	}
	if int64(changes) != st.Patches || res.Session.EndState != manifest.EndClean || len(res.Session.Warnings) != 0 || res.Session.Cwd != "/workspace" {
		t.Errorf("%d changes for %d made; session %s, %d warnings, cwd %q", changes, st.Patches, res.Session.EndState, len(res.Session.Warnings), res.Session.Cwd)
	}
	return res
}

// FuzzDB is the fuzz test of an agent whose sessions live in a SQLite
// database: seeds (whole databases) with bytes overwritten at an offset
// must list as an error, or as sessions each of which opens as an error or
// streams without one and without a bad operation: a damaged database is
// never a crash. forget closes the database's cached handle.
func FuzzDB(f *testing.F, store discover.Store, forget func(path string), stream StreamFunc, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s, uint32(0), []byte{})
		f.Add(s, uint32(4096+100), []byte{0xff, 0xff})
		f.Add(s, uint32(len(s)/2), []byte(`{"type":"tool`))
	}
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
		p := filepath.Join(dir, "f"+strconv.Itoa(n)+".db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		defer forget(p)
		cands, err := store.DB(&discover.Finder{}, p, p, time.Time{}, "")
		if err != nil {
			return
		}
		for i := range cands {
			rc, err := cands[i].Open()
			if err != nil {
				continue
			}
			var ops []manifest.Op
			_, err = stream(context.Background(), rc, cands[i].Name, emit.Handler{Op: func(op manifest.Op) { ops = append(ops, op) }})
			rc.Close()
			if err != nil {
				t.Fatalf("%s: %v", cands[i].Name, err)
			}
			for _, op := range ops {
				if op.Provenance.Line < 1 || (op.Kind != manifest.KindShell && len(op.Paths) == 0) {
					t.Fatalf("bad op %+v", op)
				}
			}
		}
	})
}
