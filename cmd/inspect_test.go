package cmd

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/inspect"
	"github.com/agentsandbox/sandbox/manifest"
)

// TestInspectCorpus keeps goldens of inspect (text and JSON) for every
// corpus transcript and the sample.
func TestInspectCorpus(t *testing.T) {
	env := hermetic(t)
	t.Setenv("TZ", "UTC")
	files, _ := filepath.Glob("../fixtures/corpus/*/*.jsonl")
	legacy, _ := filepath.Glob("../fixtures/corpus/gemini/*.json") // Gemini CLI's single-JSON layout
	files = append(files, legacy...)
	crush, _ := filepath.Glob("../fixtures/corpus/crush/*.db") // Crush's databases
	files = append(files, crush...)
	files = append(files, "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".jsonl"), ".json"), ".db")
		t.Run(name, func(t *testing.T) {
			text, stderr, code := runApp(t, env, "inspect", f)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			js, _, code := runApp(t, env, "inspect", f, "--json")
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
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

// TestInspectionJSONStreamed checks that the inspection written an element
// at a time is writeJSON's document byte for byte: arrays empty or not, and
// texts that quote the very keys the splice looks for.
func TestInspectionJSONStreamed(t *testing.T) {
	t.Parallel()
	tricky := "\n  \"timeline\": [],\n  \"files\": [] </script> & é"
	full := &inspect.Inspection{Schema: "sandbox.inspect/v1", Timeline: []inspect.Entry{
		{Event: manifest.Event{Kind: manifest.EventMessage, Text: tricky, Line: 3}, Session: "s"},
		{Event: manifest.Event{Kind: manifest.EventCall, Tool: "apply_patch", Target: tricky}, Ops: []inspect.OpView{{Kind: "patch", Paths: []string{"a"}}}},
	}, Files: []inspect.FileView{{Path: "a", Steps: []inspect.StepView{{Diff: tricky}}}}, Unrecoverable: []inspect.Issue{{Path: tricky}}, Warnings: []manifest.Warning{}}
	for name, in := range map[string]*inspect.Inspection{
		"empty":     {Schema: "sandbox.inspect/v1", Timeline: []inspect.Entry{}, Files: []inspect.FileView{}, Unrecoverable: []inspect.Issue{}, Warnings: []manifest.Warning{}},
		"full":      full,
		"no files":  {Schema: "sandbox.inspect/v1", Timeline: full.Timeline, Files: []inspect.FileView{}, Warnings: []manifest.Warning{}},
		"no events": {Schema: "sandbox.inspect/v1", Timeline: []inspect.Entry{}, Files: full.Files, Redactions: []manifest.Redaction{{Kind: "k"}}},
	} {
		var whole, streamed strings.Builder
		if err := newApp(nil, &whole, io.Discard).writeJSON(in); err != nil {
			t.Fatal(err)
		}
		if err := newApp(nil, &streamed, io.Discard).writeInspectionJSON(in); err != nil {
			t.Fatal(err)
		}
		if whole.String() != streamed.String() {
			t.Errorf("%s: streamed JSON differs:\n%s\nwant:\n%s", name, streamed.String(), whole.String())
		}
		if len(in.Timeline) != len(full.Timeline) && len(in.Timeline) != 0 {
			t.Fatalf("%s: the inspection was changed", name)
		}
	}
}
