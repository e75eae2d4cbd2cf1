package qwen

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/manifest"
)

func BenchmarkParse(b *testing.B) {
	gen.ThroughputOf(b, gen.Qwen, gen.Options{Size: 32 << 20, Seed: 4, Files: 300}, func(data []byte) error {
		_, err := parse(context.Background(), bytes.NewReader(data), "bench.jsonl")
		return err
	})
}

// TestGenerated checks the generated session the benchmark reads: every
// file change it made is one applied operation, in a session that ended
// cleanly without a warning.
func TestGenerated(t *testing.T) {
	var buf bytes.Buffer
	st, err := gen.Qwen(&buf, gen.Options{Size: 2 << 20, Seed: 9, Files: 20})
	if err != nil {
		t.Fatal(err)
	}
	res, err := parse(context.Background(), bytes.NewReader(buf.Bytes()), "bench.jsonl")
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
}
