package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRunMirror: a session's directory deleted (rm -rf) while its agent
// runs: the mirror kept its transcripts and logs, recover --from MIRROR
// gets the work back, and restore rebuilds the session from the mirror.
func TestRunMirror(t *testing.T) {
	h := newHarnessEnv(t, "--runtime", "local")
	mirror := filepath.Join(t.TempDir(), "mirror")
	cmd := h.command(nil, "run", "--name", "m", "--runtime", "local", "--mirror", mirror, "--",
		"claude", "-p", "write them", "--write", "a.txt=hello", "--write", "b/c.txt=world", "--sleep", "3s")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(mirror, "versions", "*", "sandbox", "sessions", "m", "home", ".claude", "projects", "*", "*.jsonl", "*.json")
	start := time.Now()
	var wrote time.Duration
	for {
		if _, err := os.Stat(filepath.Join(h.project, "a.txt")); err == nil && wrote == 0 {
			wrote = time.Since(start)
		}
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			break
		}
		if time.Since(start) > 20*time.Second {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the mirror holds no transcript after 20 s\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the agent wrote its first file %s after the run started; the mirror held its transcript at %s", wrote.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	// The workspace and the work in the project are lost while the agent runs.
	if err := os.RemoveAll(filepath.Join(h.root, "sessions", "m")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(h.project, "a.txt"))
	os.RemoveAll(filepath.Join(h.project, "b"))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}

	dest := t.TempDir()
	if o, e, code := h.sandbox(nil, "recover", "--from", mirror, "--dest", dest, "--yes"); code != 0 {
		t.Fatalf("recover --from the mirror: exit %d\n%s%s", code, o, e)
	}
	for name, want := range map[string]string{"a.txt": "hello\n", "b/c.txt": "world\n"} {
		if got, err := os.ReadFile(filepath.Join(dest, name)); err != nil || string(got) != want {
			t.Errorf("%s from the mirror: %q %v, want %q", name, got, err, want)
		}
	}
	if o, e, code := h.sandbox(nil, "restore", mirror, "--session", "m", "--name", "m2"); code != 0 {
		t.Fatalf("restore from the mirror: exit %d\n%s%s", code, o, e)
	}
	if m, _ := filepath.Glob(filepath.Join(h.root, "sessions", "m2", "home", ".claude", "projects", "*", "*.jsonl")); len(m) != 1 {
		t.Fatalf("the restored session holds %v", m)
	}
	if s := h.session("m2"); s.Mirror != mirror {
		t.Errorf("the session record says its mirror is %q, want %q", s.Mirror, mirror)
	}
}
