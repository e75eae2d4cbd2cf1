package claude

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

// TestOpenCallsKeepTheirOrder: calls that never got a result are handed on
// at the end in the order they were made. Parallel calls share one
// message's line, and they came out in the order of a map, differently
// from run to run: an export was not the same bytes twice, and with
// --unknown apply two Writes of one file left either content.
func TestOpenCallsKeepTheirOrder(t *testing.T) {
	var calls []string
	for i := range 6 {
		calls = append(calls, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%02d","name":"Write","input":{"file_path":"/w/f%d.txt","content":"v%d\n"}}`, 5-i, i, i))
	}
	head := `"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"11111111-2222-4333-8444-555555555555","version":"2.0.1"`
	transcript := `{` + head + `,"type":"user","message":{"role":"user","content":"go"},"uuid":"u1","timestamp":"2026-11-20T10:00:00.000Z"}` + "\n" +
		`{` + head + `,"type":"assistant","message":{"id":"m1","role":"assistant","content":[` + strings.Join(calls, ",") + `]},"uuid":"a1","timestamp":"2026-11-20T10:00:01.000Z"}` + "\n"
	golden.SameOrder(t, 30, "/w/f0.txt /w/f1.txt /w/f2.txt /w/f3.txt /w/f4.txt /w/f5.txt", func() ([]manifest.Op, error) {
		res, err := parse(context.Background(), strings.NewReader(transcript), "s.jsonl", Options{})
		if err != nil {
			return nil, err
		}
		return res.Ops, nil
	})
}
