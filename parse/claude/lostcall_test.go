package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
)

// TestLostCallLineRebuilt deletes, one at a time, the line of each Write
// and Edit call of the real sessions here: the result, which Claude Code
// writes with what the call did (toolUseResult), still gives the same
// operation (but for where it was read), with a warning that names the
// call; a result of a call that was read is never taken for one whose
// call was lost.
func TestLostCallLineRebuilt(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/claude-entire/*.jsonl")
	more, _ := filepath.Glob("../../fixtures/corpus/claude/*.jsonl")
	files = append(files, more...)
	if len(files) < 20 {
		if _, err := os.Stat("../../../shared/corpus"); err != nil && os.Getenv("CI") != "true" {
			t.Skip("../shared/corpus is not beside the project (a clone elsewhere): only CI must have it")
		}
		t.Fatalf("%d sessions: the corpus was not found", len(files))
	}
	ops := func(data []byte) ([]string, manifest.Session) {
		var got []string
		s, err := stream(context.Background(), bytes.NewReader(data), "s.jsonl", Options{}, emit.Handler{Op: func(op manifest.Op) {
			op.Provenance, op.Seq = manifest.Provenance{}, 0
			b, _ := json.Marshal(op)
			got = append(got, string(b))
		}})
		if err != nil {
			t.Fatal(err)
		}
		return got, s
	}
	rebuilt, told, lost := 0, 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, s := ops(data)
		for _, w := range s.Warnings {
			if strings.Contains(w.Message, "but not its call") {
				t.Errorf("%s: %s, with every call's line there", f, w)
			}
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		for k, line := range lines {
			if !bytes.Contains(line, []byte(`"type":"tool_use"`)) || !(bytes.Contains(line, []byte(`"name":"Edit"`)) || bytes.Contains(line, []byte(`"name":"Write"`))) ||
				bytes.Count(line, []byte(`"type":"tool_use"`)) != 1 {
				continue
			}
			without := bytes.Join(append(append([][]byte{}, lines[:k]...), lines[k+1:]...), nil)
			got, s := ops(without)
			lost++
			warned := false
			for _, w := range s.Warnings {
				if strings.Contains(w.Message, "but not its call") {
					warned = warned || strings.Contains(w.Message, "is rebuilt from the result")
					told++
				}
			}
			if !warned {
				continue // its result says nothing of the file (a failed call): warned as such
			}
			rebuilt++
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s without line %d: operations differ:\n%s\nwant\n%s", f, k+1, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if rebuilt < 50 || told != lost {
		t.Fatalf("%d call lines deleted, %d warned about, %d rebuilt: every lost call with a result is told", lost, told, rebuilt)
	}
	t.Logf("%d call lines deleted, each warned about; %d calls rebuilt from their results", lost, rebuilt)
}
