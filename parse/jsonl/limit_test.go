package jsonl

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// TestSummaryOrder: the summaries of kinds whose last warning is on one
// line come in one order, not a map's.
func TestSummaryOrder(t *testing.T) {
	var first []manifest.Warning
	for run := range 20 {
		var l Limiter
		for k := range 8 {
			kind := fmt.Sprintf("kind %d: %%s", k)
			for range keepPerKind + 1 {
				l.Keep(kind, manifest.Warning{Line: 7, Message: fmt.Sprintf("kind %d", k)}, keepPerKind)
			}
		}
		got := l.Summary()
		if len(got) != 8 {
			t.Fatalf("%d summaries, want 8", len(got))
		}
		if run == 0 {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d: summaries in another order:\n%v\n%v", run, got, first)
		}
	}
}
