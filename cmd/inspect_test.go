package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectCorpus keeps goldens of inspect (text and JSON) for every
// corpus transcript and the sample.
func TestInspectCorpus(t *testing.T) {
	hermetic(t)
	t.Setenv("TZ", "UTC")
	files, _ := filepath.Glob("../fixtures/corpus/*/*.jsonl")
	legacy, _ := filepath.Glob("../fixtures/corpus/gemini/*.json") // Gemini CLI's single-JSON layout
	files = append(files, legacy...)
	files = append(files, "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".jsonl"), ".json")
		t.Run(name, func(t *testing.T) {
			text, stderr, code := runApp(t, "inspect", f)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			js, _, code := runApp(t, "inspect", f, "--json")
			if code != ExitOK {
				t.Fatalf("--json: exit %d", code)
			}
			for ext, got := range map[string]string{".txt": text, ".json": js} {
				golden := filepath.Join("testdata/inspect", name+ext)
				if *update {
					os.MkdirAll(filepath.Dir(golden), 0o755)
					os.WriteFile(golden, []byte(got), 0o644)
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil || string(want) != got {
					t.Errorf("%s differs (go test ./cmd -run TestInspectCorpus -update):\n%s", golden, got)
				}
			}
		})
	}
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;") // as the DOM serialises text
	return r.Replace(s)
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := jsonUnmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}
