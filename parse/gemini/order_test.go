package gemini

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

// TestOpenCallsKeepTheirOrder: calls that never reached a final status
// are handed on at the end in the order they were made, not in a map's
// (the calls of one message share its line).
func TestOpenCallsKeepTheirOrder(t *testing.T) {
	var calls []string
	for i := range 6 {
		calls = append(calls, fmt.Sprintf(`{"id":"write_file-%d","name":"write_file","args":{"file_path":"f%d.txt","content":"v%d\n"},"status":"executing","timestamp":"2026-03-01T10:00:02.000Z"}`, 5-i, i, i))
	}
	transcript := `{"sessionId":"5c1d2e3f-0000-4000-8000-00000000abcd","projectHash":"bb97ae4cdb5b0dd7e32b198a7ebcb35332fca3343779f0895ffb11258627aa8f","startTime":"2026-03-01T10:00:00.000Z","lastUpdated":"2026-03-01T10:00:00.000Z","kind":"main"}` + "\n" +
		`{"id":"m1","timestamp":"2026-03-01T10:00:01.000Z","type":"user","content":[{"text":"go"}]}` + "\n" +
		`{"id":"m2","timestamp":"2026-03-01T10:00:02.000Z","type":"gemini","content":"","toolCalls":[` + strings.Join(calls, ",") + `]}` + "\n"
	golden.SameOrder(t, 30, "f0.txt f1.txt f2.txt f3.txt f4.txt f5.txt", func() ([]manifest.Op, error) {
		res, err := parse(context.Background(), strings.NewReader(transcript), "s.jsonl", Options{})
		if err != nil {
			return nil, err
		}
		return res.Ops, nil
	})
}
