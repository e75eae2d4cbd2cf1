package claude

import (
	"context"
	"os"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
)

// TestGitBranchAndModel reads the branch Claude Code stamps on its lines
// and the model of its first assistant message, from a real session.
func TestGitBranchAndModel(t *testing.T) {
	f, err := os.Open("../../fixtures/corpus/claude-entire/entire_3c_bad94bdc0c_0_full.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var header string
	s, err := stream(context.Background(), f, "3c.jsonl", Options{}, emit.Handler{Event: func(manifest.Event) {}, Header: func(h manifest.Session) { header = h.GitBranch }})
	if err != nil {
		t.Fatal(err)
	}
	if s.GitBranch != "dipree/entire-wingman" || header != s.GitBranch || s.Model != "claude-opus-4-6" {
		t.Errorf("branch %q (header %q), model %q", s.GitBranch, header, s.Model)
	}
}
