package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/internal/s3test"
)

// TestRunMirror: a session's directory deleted (rm -rf) while its agent
// runs: the mirror kept its transcripts and logs, recover --from MIRROR
// gets the work back, and restore rebuilds the session from the mirror.
func TestRunMirror(t *testing.T) {
	t.Run("dir", func(t *testing.T) { runMirror(t, filepath.Join(t.TempDir(), "mirror"), nil) })
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Start(t)
		if err := srv.MakeBucket(context.Background(), "mirrors"); err != nil {
			t.Fatal(err)
		}
		var env []string
		for k, v := range srv.Env(t.TempDir()) {
			env = append(env, k+"="+v)
		}
		runMirror(t, "s3://mirrors/team/", env)
	})
}

// runMirror runs TestRunMirror with the mirror at mirror, the AWS
// settings in env.
func runMirror(t *testing.T, mirror string, env []string) {
	h := newHarnessEnv(t, "--runtime", "local")
	h.env = append(h.env, env...)
	cmd := h.command(nil, "run", "--name", "m", "--runtime", "local", "--mirror", mirror, "--",
		"claude", "-p", "write them", "--write", "a.txt=hello", "--write", "b/c.txt=world", "--sleep", "3s")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mirrored := func() bool {
		if !strings.HasPrefix(mirror, "s3://") {
			m, _ := filepath.Glob(filepath.Join(mirror, "versions", "*", "sandbox", "sessions", "m", "home", ".claude", "projects", "*", "*.jsonl", "*.json"))
			return len(m) > 0
		}
		out, _, _ := h.sandbox(nil, "vault", "ls", "--from", mirror)
		return strings.Contains(out, "sessions/m/home/.claude/projects/")
	}
	start := time.Now()
	var wrote time.Duration
	for {
		if _, err := os.Stat(filepath.Join(h.project, "a.txt")); err == nil && wrote == 0 {
			wrote = time.Since(start)
		}
		if mirrored() {
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
	// The workspace and the work in the project are lost while the agent
	// runs. The run writes into the session's directory as rm -rf walks
	// it (its log, its record), so one pass can meet a file made after it
	// emptied a directory ("directory not empty"); like a person running
	// rm -rf again, the test repeats it until the directory is gone once.
	gone := time.Now()
	for {
		err := os.RemoveAll(filepath.Join(h.root, "sessions", "m"))
		if err == nil {
			break
		}
		if time.Since(gone) > 10*time.Second {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
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
	o, e, code := h.sandbox(nil, "restore", mirror, "--session", "m", "--name", "m2")
	if code != 0 {
		t.Fatalf("restore from the mirror: exit %d\n%s%s", code, o, e)
	}
	// The run's end looked for the agent's id in a workspace already
	// gone: the restore finds it in the transcripts the mirror kept, and
	// the session can be resumed.
	if !strings.Contains(o+e, "sandbox run --name m2 --resume") {
		t.Errorf("restore does not say how to resume the session:\n%s%s", o, e)
	}
	if m, _ := filepath.Glob(filepath.Join(h.root, "sessions", "m2", "home", ".claude", "projects", "*", "*.jsonl")); len(m) != 1 {
		t.Fatalf("the restored session holds %v", m)
	}
	s := h.session("m2")
	if s.Mirror != mirror {
		t.Errorf("the session record says its mirror is %q, want %q", s.Mirror, mirror)
	}
	if s.AgentSessionID == "" {
		t.Errorf("the restored session has no agent session id to resume")
	}
}
