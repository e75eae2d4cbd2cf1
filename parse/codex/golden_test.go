package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenOp is the part of an operation a golden records.
type goldenOp struct {
	Line     int      `json:"line"`
	Kind     string   `json:"kind"`
	Carrier  string   `json:"carrier"`
	Tool     string   `json:"tool"`
	CallID   string   `json:"call_id,omitempty"`
	Cwd      string   `json:"cwd"`
	Paths    []string `json:"paths,omitempty"`
	Hunks    []string `json:"hunks,omitempty"`
	Outcome  string   `json:"outcome"`
	Why      string   `json:"why"`
	Evidence []string `json:"evidence,omitempty"`
	Note     string   `json:"note,omitempty"`
	Low      bool     `json:"low_confidence,omitempty"`
}

type golden struct {
	ID       string     `json:"id"`
	Version  string     `json:"version,omitempty"`
	Cwd      string     `json:"cwd"`
	Start    string     `json:"start,omitempty"`
	End      string     `json:"end,omitempty"`
	EndState string     `json:"end_state"`
	Lines    int        `json:"lines"`
	Warnings []string   `json:"warnings,omitempty"`
	Ops      []goldenOp `json:"ops"`
}

func summarize(res *Result) []byte {
	s := res.Session
	g := golden{ID: s.ID, Version: s.AgentVersion, Cwd: s.Cwd, EndState: string(s.EndState), Lines: s.Lines, Ops: []goldenOp{}}
	if !s.Start.IsZero() {
		g.Start, g.End = s.Start.Format("2006-01-02T15:04:05.000Z07:00"), s.End.Format("2006-01-02T15:04:05.000Z07:00")
	}
	for _, w := range s.Warnings {
		g.Warnings = append(g.Warnings, strings.TrimPrefix(w.String(), w.File))
	}
	for _, op := range res.Ops {
		o := goldenOp{Line: op.Provenance.Line, Kind: string(op.Kind), Carrier: op.Provenance.Carrier, Tool: op.Tool,
			CallID: op.Provenance.CallID, Cwd: op.Cwd, Paths: op.Paths, Outcome: string(op.Outcome), Why: op.OutcomeEvidence,
			Note: op.Note, Low: op.LowConfidence}
		if op.Patch != nil {
			for _, h := range op.Patch.Hunks {
				d := string(h.Kind) + " " + h.Path
				if h.MovePath != "" {
					d += " -> " + h.MovePath
				}
				switch h.Kind {
				case manifest.HunkAdd:
					d += " (" + itoa(strings.Count(h.Contents, "\n")) + " lines)"
				case manifest.HunkUpdate:
					d += " (" + itoa(len(h.Chunks)) + " chunks)"
				}
				o.Hunks = append(o.Hunks, d)
			}
		}
		for _, e := range op.Evidence {
			o.Evidence = append(o.Evidence, string(e.Kind)+" "+e.Path+" ("+e.Source+", "+itoa(len(e.Content))+" bytes)")
		}
		g.Ops = append(g.Ops, o)
	}
	b, _ := json.MarshalIndent(g, "", "  ")
	return append(b, '\n')
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func check(t *testing.T, name string, got []byte, goldenPath string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%s: %v (run with -update to create it)", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: result differs from %s (run with -update to accept):\n%s", name, goldenPath, got)
	}
}

// TestCorpus parses every real and sample rollout of the shared corpus and
// compares its operations and outcomes with a golden.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../fixtures/corpus/codex/*.jsonl")
	if len(files) < 7 {
		t.Fatalf("found %d corpus files", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			res, err := Parse(context.Background(), fh, name)
			if err != nil {
				t.Fatal(err)
			}
			check(t, name, summarize(res), filepath.Join("testdata/golden", strings.TrimSuffix(name, ".jsonl")+".json"))
		})
	}
}

// TestCases runs the txtar cases in testdata/cases: each holds a rollout
// ("rollout.jsonl") and the expected summary ("want.json").
func TestCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/cases/*.txtar")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var in []byte
			for _, fl := range ar.Files {
				if fl.Name == "rollout.jsonl" || fl.Name == "rollout.json" {
					in = fl.Data
				}
			}
			res, err := Parse(context.Background(), bytes.NewReader(in), "rollout.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(res)
			if *update {
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
			for _, fl := range ar.Files {
				if fl.Name == "want.json" && !bytes.Equal(fl.Data, got) {
					t.Errorf("got:\n%s\nwant:\n%s", got, fl.Data)
				}
			}
		})
	}
}

// TestSharedCorpusCopied checks that every rollout of the shared corpus is
// in fixtures/ byte for byte, so each has a golden. It skips when the shared
// folder is not beside the project.
func TestSharedCorpusCopied(t *testing.T) {
	shared, _ := filepath.Glob("../../../shared/corpus/codex/*.jsonl")
	if len(shared) == 0 {
		t.Skip("../shared/corpus/codex is not beside the project")
	}
	for _, f := range shared {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("../../fixtures/corpus/codex", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not copied to fixtures/corpus/codex (copy it and run go test ./parse/codex -update)", filepath.Base(f))
		}
	}
}
