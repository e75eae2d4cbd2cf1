package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/parse"
)

// TestVaultReadsLikeHome: every real Claude Code and Codex transcript of
// the corpus, synced into a vault, reads from it as it did at home; after
// an agent's cleanup cut some short and deleted others, the vault still
// reads them whole (the longest version).
func TestVaultReadsLikeHome(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	var paths []string
	place := func(dir, glob, dst string) {
		files, _ := filepath.Glob(filepath.Join("..", "fixtures", "corpus", dir, glob))
		for i, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p := strings.ReplaceAll(dst, "#", strings.TrimSuffix(filepath.Base(f), ".jsonl"))
			p = strings.ReplaceAll(p, "%", string(rune('a'+i%26)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	place("claude", "*.jsonl", filepath.Join(env.Get("CLAUDE_CONFIG_DIR"), "projects", "-corpus-%", "#.jsonl"))
	place("claude-entire", "*.jsonl", filepath.Join(env.Get("CLAUDE_CONFIG_DIR"), "projects", "-entire-%", "#.jsonl"))
	place("codex", "*.jsonl", filepath.Join(env.Get("CODEX_HOME"), "sessions", "2026", "11", "20", "rollout-2026-11-20T00-00-00-#.jsonl"))
	if len(paths) < 40 {
		t.Fatalf("placed %d corpus transcripts", len(paths))
	}
	summaries := func(args ...string) []parse.Summary {
		t.Helper()
		out, errOut, code := runApp(t, env, append([]string{"sessions", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("sessions %v: exit %d\n%s", args, code, errOut)
		}
		var doc struct{ Sessions []parse.Summary }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for i := range doc.Sessions {
			doc.Sessions[i].Transcripts = nil // named by where they were read
		}
		return doc.Sessions
	}
	home := summaries()
	if len(home) < 30 {
		t.Fatalf("%d sessions at home", len(home))
	}
	if _, errOut, code := runApp(t, env, "vault", "sync"); code != 0 {
		t.Fatalf("vault sync: exit %d\n%s", code, errOut)
	}
	if got := summaries("--from", "vault"); !reflect.DeepEqual(got, home) {
		t.Fatalf("the vault reads %d sessions differently from the home's %d:\n%+v\n%+v", len(got), len(home), got, home)
	}
	// The agents' cleanup: every other transcript cut to its first third,
	// the rest deleted.
	for i, p := range paths {
		if i%2 == 0 {
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)/3], 0o644)
		} else {
			os.Remove(p)
		}
	}
	if _, errOut, code := runApp(t, env, "vault", "sync"); code != 0 {
		t.Fatalf("vault sync after the cleanup: exit %d\n%s", code, errOut)
	}
	if got := summaries("--from", "vault"); !reflect.DeepEqual(got, home) {
		t.Fatalf("after the cleanup the vault reads %d sessions, not the %d it kept", len(got), len(home))
	}
}
