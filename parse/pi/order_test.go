package pi

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

// TestOpenCallsKeepTheirOrder: calls without a result are handed on at the
// end in the order they were made, not in a map's (the calls of one
// message share its line).
func TestOpenCallsKeepTheirOrder(t *testing.T) {
	var calls []string
	for i := range 6 {
		calls = append(calls, fmt.Sprintf(`{"type":"toolCall","id":"c%d","name":"write","arguments":{"path":"f%d.txt","content":"v%d\n"}}`, 5-i, i, i))
	}
	transcript := `{"type":"session","version":3,"id":"7a7a0001-0000-4000-8000-000000000001","timestamp":"2026-11-21T09:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-11-21T09:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"go"}]}}` + "\n" +
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-11-21T09:00:02.000Z","message":{"role":"assistant","stopReason":"toolUse","content":[` + strings.Join(calls, ",") + `]}}` + "\n"
	golden.SameOrder(t, 30, "/w/f0.txt /w/f1.txt /w/f2.txt /w/f3.txt /w/f4.txt /w/f5.txt", func() ([]manifest.Op, error) {
		res, err := parse(context.Background(), strings.NewReader(transcript), "s.jsonl")
		if err != nil {
			return nil, err
		}
		return res.Ops, nil
	})
}
