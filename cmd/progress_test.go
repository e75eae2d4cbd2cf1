package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

// TestProgressOnATerminal runs recover on a big transcript with its stderr
// on a pseudo-terminal: the bar shows the bytes read of the total, a rate
// and the time left, and is gone at the end; stdout (the --json document)
// never holds any of it; off a terminal there is no bar.
func TestProgressOnATerminal(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	bin := sandboxBinary(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "big.jsonl")
	writeSession(t, name, gen.Rollout, gen.Options{Size: 96 << 20, Seed: 5, Files: 300, PatchEvery: 4})

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(bin, "recover", "-t", name, "--dest", filepath.Join(dir, "dest"), "--dry-run", "--json")
	// The bar at once: what is checked is what it shows, not how fast the
	// machine reads.
	cmd.Env = append(env.List(), "TERM=xterm", "SANDBOX_PROGRESS_DELAY=0")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&screen, ptmx); close(copied) }()
	if err := cmd.Wait(); err != nil && exitCode(err) != ExitPartial {
		t.Fatalf("recover: %v\n%s", err, screen.String())
	}
	<-copied
	s := screen.String()
	for _, want := range []string{"reading transcripts", "%", "MB/s", "/101 MB", "["} {
		if !strings.Contains(s, want) {
			t.Errorf("the bar on the terminal lacks %q:\n%q", want, s)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc["schema"] != "sandbox.recover/v1" {
		t.Errorf("stdout is not the --json document alone: %v\n%.300s", err, stdout.String())
	}

	// Off a terminal: no bar.
	var errb bytes.Buffer
	cmd = exec.Command(bin, "recover", "-t", name, "--dest", filepath.Join(dir, "dest"), "--dry-run", "--json")
	cmd.Env = env.List()
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	_ = cmd.Run()
	if strings.Contains(errb.String(), "reading transcripts") {
		t.Errorf("a bar off a terminal:\n%s", errb.String())
	}
}
