package codex

import (
	"context"
	"os"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// TestGitAndModel reads what a real rollout records of its checkout and
// model: session_meta's git.commit_hash and git.branch, and the first
// turn_context's model (read with the timeline).
func TestGitAndModel(t *testing.T) {
	f, err := os.Open("../../fixtures/corpus/codex/01-real-0.58.0-shell-heredoc-apply_patch.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Stream(context.Background(), f, "01.jsonl", Handler{Event: func(manifest.Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	if s.GitCommit != "0f022a043b3f8ca67224e1c56d5b85e28a81b910" || s.GitBranch != "main" || s.Model != "gpt-5.1-codex" {
		t.Errorf("commit %q, branch %q, model %q", s.GitCommit, s.GitBranch, s.Model)
	}
}
