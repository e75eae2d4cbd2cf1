package cmd

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
)

// TestTableOnATerminal lists sessions on a 120-column pseudo-terminal:
// rows fit (the CWD column cut at its front, keeping its end), times say
// their zone and the verdict is in words; --wide shows every cell whole.
func TestTableOnATerminal(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	bin := sandboxBinary(t)
	dir := filepath.Join(t.TempDir(), strings.Repeat("a-very-long-directory-name/", 4))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	session := `{"timestamp":"2026-11-20T10:12:03.000Z","type":"session_meta","payload":{"id":"019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55","timestamp":"2026-11-20T10:12:03.000Z","cwd":"` + dir + `/project","originator":"codex_cli_rs","cli_version":"0.63.0"}}
{"timestamp":"2026-11-20T10:12:05.000Z","type":"event_msg","payload":{"type":"task_complete"}}
`
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(session), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := uint16(120)
	run := func(args ...string) string {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pseudo-terminal here: %v", err)
		}
		defer ptmx.Close()
		_ = pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: cols})
		cmd := exec.Command(bin, args...)
		cmd.Env = append(env.List(), "TZ=UTC")
		cmd.Stdout, cmd.Stderr = tty, tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { _, _ = io.Copy(&out, ptmx); close(done) }()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		<-done
		return strings.ReplaceAll(out.String(), "\r\n", "\n")
	}
	out := run("sessions", "--from", dir)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("a row of %d columns on a 120-column terminal: %q", n, l)
		}
	}
	for _, want := range []string{"START (UTC)", "2026-11-20 10:12  ", "ended cleanly", "…", "name/project", "019e5a1c-3b7d  "} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if out := run("sessions", "--from", dir, "--wide"); !strings.Contains(out, dir+"/project") || !strings.Contains(out, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55") {
		t.Errorf("--wide does not show the whole directory:\n%s", out)
	}
	// On 80 columns the columns alone are too wide: rows end at the edge
	// (…) rather than wrap.
	cols = 80
	for _, l := range strings.Split(strings.TrimSpace(run("sessions", "--from", dir)), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 || !strings.HasSuffix(l, "…") {
			t.Errorf("on 80 columns, a row of %d: %q", n, l)
		}
	}
}
