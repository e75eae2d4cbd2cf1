package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/harness"
	recov "github.com/agentsandbox/sandbox/recover"
)

// TestOneWriterPerDestination checks that recover, apply and undo refuse a
// destination another sandbox process holds, writing nothing, and go ahead
// once it is free; a dry run needs no lock.
func TestOneWriterPerDestination(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	sample := "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl"
	dir := t.TempDir()
	dest, m := filepath.Join(dir, "proj"), filepath.Join(dir, "m.json")
	if _, stderr, code := runApp(t, env, "export", "-t", sample, "-o", m); code != ExitOK {
		t.Fatalf("export: %d %s", code, stderr)
	}
	unlock, err := recov.LockDests(harness.DefaultRoot(env), []string{dest})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"recover", "-t", sample, "--dest", dest},
		{"apply", m, "--dest", dest},
		{"undo", "--dest", dest},
	} {
		_, stderr, code := runApp(t, env, args...)
		if code != ExitFailure || !strings.Contains(stderr, "another sandbox is writing to "+dest) {
			t.Errorf("%s while locked: exit %d: %s", args[0], code, stderr)
		}
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("something was written while the destination was locked: %v", err)
	}
	if _, stderr, code := runApp(t, env, "recover", "-t", sample, "--dest", dest, "--dry-run"); code != ExitOK {
		t.Errorf("a dry run needs no lock: exit %d: %s", code, stderr)
	}
	unlock()
	if _, stderr, code := runApp(t, env, "recover", "-t", sample, "--dest", dest); code != ExitOK {
		t.Fatalf("recover once free: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runApp(t, env, "undo", "--dest", dest); code != ExitOK {
		t.Fatalf("undo once free: exit %d: %s", code, stderr)
	}
}
