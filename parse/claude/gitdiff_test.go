package claude

import "testing"

func TestGitDiffCmd(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git diff":                          true,
		"git diff a.go":                     true,
		"git --no-pager diff -- a.go b.go":  true,
		"git diff HEAD -- a.go":             true,
		"git diff -U5 --no-color main":      true,
		"git diff --cached":                 false, // the index, not the files
		"git diff --staged a.go":            false,
		"git diff HEAD~1 HEAD":              false, // two commits
		"git diff main..topic":              false,
		"git diff --stat":                   false,
		"git diff -R":                       false,
		"git diff && go test ./...":         false,
		"git diff | head":                   false,
		"git show HEAD":                     false,
		"git diff a.go b.go":                false, // two commits, or two paths: not told apart
		"git diff $(git merge-base a b)":    false,
		"git diff HEAD -- a.go\ngit status": false,
	} {
		if got := gitDiffCmd(cmd); got != want {
			t.Errorf("gitDiffCmd(%q) = %v, want %v", cmd, got, want)
		}
	}
}
