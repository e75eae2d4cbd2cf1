package parse

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/agentsandbox/sandbox/manifest"
)

// TestDetectAgents tells every real session of the Gemini CLI and pi
// corpora by its content, and keeps the early codex-cli single JSON (which
// also starts with a lone "{") Codex's: the pretty-printed Gemini session
// once read as a damaged transcript of another agent.
func TestDetectAgents(t *testing.T) {
	check := func(name string, data []byte, want manifest.Agent) {
		t.Helper()
		head := data
		if len(head) > 64<<10 {
			head = head[:64<<10]
		}
		if got, ok := detect(head); !ok || got != want {
			t.Errorf("%s: detected %q (%v), want %q", name, got, ok, want)
		}
	}
	for agent, pattern := range map[manifest.Agent]string{
		manifest.AgentGemini: "../fixtures/corpus/gemini/*.json",
		manifest.AgentPi:     "../fixtures/corpus/pi/*.jsonl",
	} {
		files, _ := filepath.Glob(pattern)
		if len(files) == 0 {
			t.Fatalf("no file matches %s", pattern)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			check(filepath.Base(f), data, agent)
		}
	}
	ar, err := txtar.ParseFile("codex/testdata/cases/legacy_single_json.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name != "want.json" {
			check("codex "+f.Name, f.Data, manifest.AgentCodex)
		}
	}
}
