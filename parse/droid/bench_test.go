package droid

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/manifest"
)

func BenchmarkParse(b *testing.B) {
	gen.ThroughputOf(b, gen.Droid, gen.Options{Size: 32 << 20, Seed: 4, Files: 300}, func(data []byte) error {
		_, err := parse(context.Background(), bytes.NewReader(data), "bench.jsonl")
		return err
	})
}

// TestGenerated checks the generated session the benchmark reads: every
// file change it made is one applied operation, in a session that ended
// cleanly without a warning, and the whole-file Reads are views of their
// lines.
func TestGenerated(t *testing.T) {
	var buf bytes.Buffer
	st, err := gen.Droid(&buf, gen.Options{Size: 2 << 20, Seed: 9, Files: 20})
	if err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	res, err := parse(context.Background(), bytes.NewReader(data), "bench.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	changes, views := 0, 0
	for _, op := range res.Ops {
		switch op.Kind {
		case manifest.KindWrite, manifest.KindEdit:
			changes++
			if op.Outcome != manifest.OutcomeApplied {
				t.Errorf("op %+v not applied", op)
			}
		case manifest.KindObserve:
			views++
			if len(op.Evidence) != 1 || op.Evidence[0].Kind != manifest.EvidencePartial {
				t.Errorf("view %+v", op)
			}
		default:
			t.Errorf("unexpected op %+v", op)
		}
	}
	if int64(changes) != st.Patches || views == 0 || res.Session.EndState != manifest.EndClean || len(res.Session.Warnings) != 0 || res.Session.Cwd != "/workspace" {
		t.Errorf("%d changes for %d made, %d views; session %s, %d warnings, cwd %q", changes, st.Patches, views, res.Session.EndState, len(res.Session.Warnings), res.Session.Cwd)
	}
}
