package cmd

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVaultWatchSays: sync --watch, run as a user runs it, says what it
// watches at start and each version it stores, and ends on ^C with 0 (a
// service stopped on purpose has not failed).
func TestVaultWatchSays(t *testing.T) {
	t.Parallel()
	vars := hermeticVars(t)
	env := os.Environ()
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	dir := filepath.Join(vars["CODEX_HOME"], "sessions", "2026", "11", "20")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(dir, "rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e57.jsonl")
	line := `{"timestamp":"2026-11-20T10:12:03.000Z","type":"session_meta","payload":{"id":"019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e57","cwd":"/w"}}` + "\n"
	if err := os.WriteFile(rollout, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	vlt := filepath.Join(t.TempDir(), "v")
	cmd := exec.Command("sandbox", "vault", "sync", "--watch", "--to", vlt)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("sync --watch ended before it said %s", what)
			}
			return l
		case <-time.After(30 * time.Second):
			t.Fatalf("sync --watch said nothing of %s in 30 s", what)
		}
		return ""
	}
	if l := next("its first sync"); !strings.Contains(l, vlt+": 1 file, 0 unchanged, 1 read") || !strings.Contains(l, "1 new version") {
		t.Fatalf("first line: %q", l)
	}
	f, err := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Replace(line, "10:12:03", "10:12:04", 1))
	f.Close()
	if l := next("the append"); !strings.Contains(l, "1 new version") {
		t.Fatalf("after an append: %q", l)
	}
	if err := os.Remove(rollout); err != nil {
		t.Fatal(err)
	}
	if l := next("the deletion"); !strings.Contains(l, "1 gone at the source") {
		t.Fatalf("after a deletion: %q", l)
	}
	cmd.Process.Signal(syscall.SIGINT)
	for l := range lines {
		t.Logf("after ^C: %s", l)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("sync --watch ended on ^C with %v, want exit 0", err)
	}
}
