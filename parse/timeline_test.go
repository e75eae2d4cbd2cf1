package parse

import (
	"context"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
)

func collect(t *testing.T, name string) *Collected {
	t.Helper()
	f := &discover.Finder{}
	cands, _, err := f.From(name, nil)
	if err != nil || len(cands) != 1 {
		t.Fatalf("%s: %v (%d candidates)", name, err, len(cands))
	}
	col, err := Collect(context.Background(), &Selected{Candidate: cands[0]})
	if err != nil {
		t.Fatal(err)
	}
	return col
}

// TestTimelineContext checks what the timeline reads besides calls and
// turns, on real transcripts: subagents and the Task calls that started
// them, plans, outputs, the agent's text, compaction, model and tokens.
func TestTimelineContext(t *testing.T) {
	t.Run("claude inline subagents", func(t *testing.T) {
		col := collect(t, "../fixtures/corpus/claude/ccviewer_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
		agents := map[string]int{}
		spawned := map[string]bool{}
		var todos, outputs, texts int
		for _, e := range col.Events {
			if e.Sidechain != (e.Agent != "") {
				t.Errorf("line %d: sidechain %v but agent %q", e.Line, e.Sidechain, e.Agent)
			}
			if e.Agent != "" {
				agents[e.Agent]++
			}
			if e.Subagent != "" {
				spawned[e.Subagent] = true
			}
			if e.Tool == "TodoWrite" && len(e.Todos) > 0 {
				todos++
			}
			if e.Output != "" {
				outputs++
			}
			if e.Kind == manifest.EventMessage {
				texts++
			}
		}
		// Five Task calls ran five subagents in parallel.
		if len(agents) != 5 || len(spawned) != 5 {
			t.Errorf("agents %v, spawned %v: want 5 of each", agents, spawned)
		}
		for a := range spawned {
			if agents[a] == 0 {
				t.Errorf("a Task call started %s, which has no events", a)
			}
		}
		if todos == 0 || outputs < 100 || texts == 0 {
			t.Errorf("%d TodoWrite lists, %d outputs, %d texts", todos, outputs, texts)
		}
		s := col.Session
		if s.Model != "claude-sonnet-4-20250514" || s.Tokens == nil || s.Tokens.Output == 0 {
			t.Errorf("model %q tokens %+v", s.Model, s.Tokens)
		}
	})
	t.Run("claude mirrored subagent", func(t *testing.T) {
		col := collect(t, "../fixtures/corpus/claude/entire_10_a740e118e0_0_full.jsonl")
		var task, in int
		for _, e := range col.Events {
			if e.Tool == "Task" && e.Subagent == "a102bdd" {
				task++
			}
			if e.Agent == "a102bdd" {
				in++
			}
		}
		if task != 1 || in == 0 {
			t.Errorf("Task calls naming a102bdd: %d, its events: %d", task, in)
		}
	})
	t.Run("claude compaction", func(t *testing.T) {
		col := collect(t, "../fixtures/corpus/claude/entire_a6_e4c2a0fbd1_0_full.jsonl")
		var n int
		for _, e := range col.Events {
			if e.Kind == manifest.EventCompact {
				n++
				if !strings.Contains(e.Text, "auto") {
					t.Errorf("compaction %q does not say what triggered it", e.Text)
				}
			}
		}
		if n != 1 {
			t.Errorf("%d compactions, want 1", n)
		}
	})
	t.Run("codex", func(t *testing.T) {
		col := collect(t, "../fixtures/corpus/codex/03-real-0.144.4-code-mode-exec-apply_patch-excerpt.jsonl")
		kinds := map[manifest.EventKind]int{}
		for _, e := range col.Events {
			kinds[e.Kind]++
		}
		if kinds[manifest.EventCompact] != 1 || kinds[manifest.EventMessage] == 0 {
			t.Errorf("events %v: want one compaction (compacted + context_compacted) and the agent's messages", kinds)
		}
		if s := col.Session; s.Model != "gpt-5.6-sol" || s.Tokens == nil || s.Tokens.Input != 27153 {
			t.Errorf("model %q tokens %+v", s.Model, s.Tokens)
		}
	})
}
