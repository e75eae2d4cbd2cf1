package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNotWritableRefusedFirst: as a user who cannot write the destination,
// a recovery is refused before anything is shown or written (no plan
// table for a write that cannot happen), and a dry run says a real run
// would fail. Run as an unprivileged user, so root's rights prove nothing.
func TestNotWritableRefusedFirst(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		missing(t, "not root: cannot run sandbox as another user to meet a directory it may not write")
	}
	const uid, gid = 65534, 65534
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp("", "sandbox-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	_ = os.Chmod(base, 0o755)
	bin, home, dest := filepath.Join(base, "bin"), filepath.Join(base, "home"), filepath.Join(base, "dest")
	for _, d := range []string{bin, home, dest} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chown(home, uid, gid)
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "sandbox"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	sample, _ := filepath.Abs("../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
	data, _ := os.ReadFile(sample)
	tr := filepath.Join(base, "s.jsonl")
	if err := os.WriteFile(tr, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(filepath.Join(bin, "sandbox"), args...)
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "SANDBOX_HOME=" + filepath.Join(home, "state"), "CODEX_HOME=" + filepath.Join(home, ".codex"),
			"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"), "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), exitCode(err)
	}
	out, errOut, code := run("recover", "-t", tr, "--dest", dest)
	if code != ExitFailure || out != "" || !strings.Contains(errOut, dest+" is not writable by you (permission denied); nothing was written") {
		t.Errorf("a recovery into a directory it may not write: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if es, _ := os.ReadDir(dest); len(es) != 0 {
		t.Errorf("the refused recovery wrote %d entries", len(es))
	}
	out, errOut, code = run("recover", "-t", tr, "--dest", dest, "--dry-run")
	if code != ExitOK || !strings.Contains(errOut, "a real run would fail and change nothing") || !strings.Contains(out, "dry run") {
		t.Errorf("the dry run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
