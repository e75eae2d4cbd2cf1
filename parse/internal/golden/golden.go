// Package golden summarises parsed transcripts for the parsers' golden
// tests: the operations found, their carriers, outcomes and evidence.
package golden

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"golang.org/x/tools/txtar"
)

// Op is the part of an operation a golden records.
type Op struct {
	Line     int      `json:"line"`
	Kind     string   `json:"kind"`
	Carrier  string   `json:"carrier"`
	Tool     string   `json:"tool"`
	CallID   string   `json:"call_id,omitempty"`
	Cwd      string   `json:"cwd"`
	Paths    []string `json:"paths,omitempty"`
	Hunks    []string `json:"hunks,omitempty"`
	Edits    int      `json:"edits,omitempty"`
	Outcome  string   `json:"outcome"`
	Why      string   `json:"why"`
	Evidence []string `json:"evidence,omitempty"`
	Note     string   `json:"note,omitempty"`
	Low      bool     `json:"low_confidence,omitempty"`
	// Time is the operation's time as the transcript gives it.
	Time string `json:"time,omitempty"`
	// Digest is a hash of the operation as the manifest would write it,
	// less its provenance: its command, contents, edits, patch and
	// evidence, which the rest of the record only counts. A parser that keeps a slice of a record
	// past its call reads '#'s there under test (testhook.Poison), and the
	// digest differs even where the lengths are the same.
	Digest string `json:"digest"`
}

// Session is a golden's whole record.
type Session struct {
	ID       string   `json:"id"`
	Version  string   `json:"version,omitempty"`
	Cwd      string   `json:"cwd"`
	Start    string   `json:"start,omitempty"`
	End      string   `json:"end,omitempty"`
	EndState string   `json:"end_state"`
	Lines    int      `json:"lines"`
	Warnings []string `json:"warnings,omitempty"`
	Ops      []Op     `json:"ops"`
	// Replay is filled by callers that also replay the operations.
	Replay any `json:"replay,omitempty"`
}

// timeLayout is how a golden writes a time: to the millisecond.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// Summarize returns the golden record of a session and its operations.
func Summarize(s manifest.Session, ops []manifest.Op) *Session {
	g := &Session{ID: s.ID, Version: s.AgentVersion, Cwd: s.Cwd, EndState: string(s.EndState), Lines: s.Lines, Ops: []Op{}}
	if !s.Start.IsZero() {
		g.Start, g.End = s.Start.Format(timeLayout), s.End.Format(timeLayout)
	}
	for _, w := range s.Warnings {
		g.Warnings = append(g.Warnings, strings.TrimPrefix(w.String(), w.File))
	}
	for _, op := range ops {
		o := Op{Line: op.Provenance.Line, Kind: string(op.Kind), Carrier: op.Provenance.Carrier, Tool: op.Tool,
			CallID: op.Provenance.CallID, Cwd: op.Cwd, Paths: op.Paths, Outcome: string(op.Outcome), Why: op.OutcomeEvidence,
			Note: op.Note, Low: op.LowConfidence, Edits: len(op.Edits), Digest: digest(op)}
		if !op.Provenance.Time.IsZero() {
			o.Time = op.Provenance.Time.UTC().Format(timeLayout)
		}
		if op.Patch != nil {
			for _, h := range op.Patch.Hunks {
				d := string(h.Kind) + " " + h.Path
				if h.MovePath != "" {
					d += " -> " + h.MovePath
				}
				switch h.Kind {
				case manifest.HunkAdd:
					d += " (" + strconv.Itoa(strings.Count(h.Contents, "\n")) + " lines)"
				case manifest.HunkUpdate:
					d += " (" + strconv.Itoa(len(h.Chunks)) + " chunks)"
				}
				o.Hunks = append(o.Hunks, d)
			}
		}
		for _, e := range op.Evidence {
			d := string(e.Kind) + " " + e.Path + " (" + e.Source + ", " + strconv.Itoa(len(e.Content)) + " bytes)"
			if e.Absent {
				d = string(e.Kind) + " " + e.Path + " (" + e.Source + ", absent)"
			}
			o.Evidence = append(o.Evidence, d)
		}
		g.Ops = append(g.Ops, o)
	}
	return g
}

// digest is the first 16 hex digits of the sha256 of what op does, as
// JSON: where it was read (its provenance, which the record gives apart,
// and which differs from one form of a transcript to another) is left out.
func digest(op manifest.Op) string {
	op.Provenance = manifest.Provenance{}
	op.Session, op.Seq = "", 0
	b, err := json.Marshal(op)
	if err != nil {
		return "error: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Bytes is the golden's file content.
func (g *Session) Bytes() []byte {
	b, _ := json.MarshalIndent(g, "", "  ")
	return append(b, '\n')
}

// Check compares g with the golden file at path, or rewrites it.
func Check(t *testing.T, update bool, g *Session, path string) {
	t.Helper()
	got := g.Bytes()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s (run with -update to accept):\n%s", path, got)
	}
}

// ParseFunc parses a whole transcript, for Corpus.
type ParseFunc func(r io.Reader, name string) (manifest.Session, []manifest.Op, error)

// Corpus parses every transcript of fixtures/corpus/<agent> (at least min of
// them) and compares each summary with its golden in testdata/golden.
func Corpus(t *testing.T, update bool, agent string, min int, parse ParseFunc) {
	t.Helper()
	CorpusIn(t, update, agent, min, "testdata/golden", parse)
}

// CorpusIn is Corpus with the goldens in dir. A golden whose transcript is
// gone is an error too, so that no golden outlives what it checked.
func CorpusIn(t *testing.T, update bool, corpus string, min int, dir string, parse ParseFunc) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("../../fixtures/corpus", corpus, "*.jsonl"))
	if len(files) < min {
		t.Fatalf("found %d corpus files in fixtures/corpus/%s, want at least %d", len(files), corpus, min)
	}
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goldens, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".json") + ".jsonl"
		if _, err := os.Stat(filepath.Join("../../fixtures/corpus", corpus, name)); err != nil {
			t.Errorf("%s: no transcript %s in fixtures/corpus/%s (remove the golden)", g, name, corpus)
		}
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			sess, ops, err := parse(fh, name)
			if err != nil {
				t.Fatal(err)
			}
			Check(t, update, Summarize(sess, ops), filepath.Join(dir, strings.TrimSuffix(name, ".jsonl")+".json"))
		})
	}
}

// SharedCopied checks that fixtures/corpus/<agent> holds every transcript
// of ../shared/corpus/<agent> byte for byte, so each has a golden. It skips
// when the shared folder is not beside the project.
func SharedCopied(t *testing.T, agent string) {
	t.Helper()
	shared, _ := filepath.Glob(filepath.Join("../../../shared/corpus", agent, "*.jsonl"))
	if len(shared) == 0 {
		t.Skipf("../shared/corpus/%s is not beside the project", agent)
	}
	for _, f := range shared {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("../../fixtures/corpus", agent, filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not copied to fixtures/corpus/%s (copy it and run go test ./parse/... -run Corpus -update)", filepath.Base(f), agent)
		}
	}
}

// Seeds adds the files matching the patterns, cut at 32 KiB, to a fuzz
// target's corpus.
func Seeds(f *testing.F, patterns ...string) {
	f.Helper()
	for _, pat := range patterns {
		files, _ := filepath.Glob(pat)
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) > 32<<10 {
				data = data[:32<<10]
			}
			f.Add(data)
		}
	}
}

// Cases runs the txtar cases in testdata/cases: summarize turns a case's
// files into its summary, which must equal the case's want.json (rewritten
// with -update). A package that calls it with no case fails: a test that
// runs nothing must not pass.
func Cases(t *testing.T, update bool, summarize func(t *testing.T, files map[string][]byte) *Session) {
	t.Helper()
	files, _ := filepath.Glob("testdata/cases/*.txtar")
	if len(files) == 0 {
		t.Fatal("no case in testdata/cases")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string][]byte{}
			for _, fl := range ar.Files {
				in[fl.Name] = fl.Data
			}
			got := summarize(t, in).Bytes()
			if update {
				for i := range ar.Files {
					if ar.Files[i].Name == "want.json" {
						ar.Files[i].Data = got
					}
				}
				if err := os.WriteFile(f, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := in["want.json"]; !bytes.Equal(want, got) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// SameOps fails t unless the operations a parser made reading its lines in
// place (recover, export), inPlace, are those it makes with a timeline
// (inspect), which reads through a copy of each line and copies every
// string: stream parses data again with the handler given. Under
// testhook.Poison a string an operation kept of a line it did not copy
// reads '#'s, so any operation that keeps one differs. Only data whose every
// line is JSON is compared (ValidLines). The turn a timeline gives a
// subagent's call (its turn id) is left out where the operation read in
// place has none.
func SameOps(t testing.TB, data []byte, inPlace []manifest.Op, stream func(emit.Handler) error) {
	t.Helper()
	if !ValidLines(data) {
		return
	}
	var withTimeline []manifest.Op
	h := emit.Handler{Op: func(op manifest.Op) { withTimeline = append(withTimeline, op) }, Event: func(manifest.Event) {}}
	if err := stream(h); err != nil {
		t.Fatal(err)
	}
	for i := range withTimeline {
		if i < len(inPlace) && inPlace[i].Provenance.TurnID == "" {
			withTimeline[i].Provenance.TurnID = ""
		}
	}
	a, err := json.Marshal(inPlace)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(withTimeline)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("the operations read in place differ from those read with a timeline:\n%s\n%s", a, b)
	}
}

// SameOrder parses a transcript runs times (parse returns its operations)
// and fails t unless the operations' first paths are want, space-separated,
// every time: what a parser hands on from a map must not come in the map's
// order.
func SameOrder(t testing.TB, runs int, want string, parse func() ([]manifest.Op, error)) {
	t.Helper()
	for run := range runs {
		ops, err := parse()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, op := range ops {
			got = append(got, op.Paths[0])
		}
		if strings.Join(got, " ") != want {
			t.Fatalf("run %d: operations in the order %v, want %s", run, got, want)
		}
	}
}

// ValidLines reports whether every line of data that is not blank is one
// valid JSON value. Only then must a parser's two readings (SameOps) agree:
// on a line JSON does not allow but whose brackets and strings balance
// (a bare letter before a value), the quick in-place read and the full one
// are each lenient in their own way.
func ValidLines(data []byte) bool {
	for _, l := range bytes.Split(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 && !json.Valid(l) {
			return false
		}
	}
	return true
}
