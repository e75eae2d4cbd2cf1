package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"golang.org/x/sys/unix"
)

// TestInterrupt sends ^C to commands reading a transcript that is still
// arriving (cat big | sandbox recover -t -): each stops within seconds,
// says interrupted, exits 130, and a --json document says so rather than
// look complete. Nothing is written.
func TestInterrupt(t *testing.T) {
	env := hermetic(t)
	bin := sandboxBinary(t)
	var session bytes.Buffer
	if _, err := gen.Rollout(&session, gen.Options{Size: 256 << 10, Seed: 3, Files: 20}); err != nil {
		t.Fatal(err)
	}
	// apply reads a manifest: the session's, exported first.
	src := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(src, session.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest, err := exec.Command(bin, "export", "-t", src).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		json bool
	}{
		{"recover dry run", []string{"recover", "-t", "-", "--dest", "DEST", "--dry-run"}, false},
		{"recover json", []string{"recover", "-t", "-", "--dest", "DEST", "--dry-run", "--json"}, true},
		{"recover writing", []string{"recover", "-t", "-", "--dest", "DEST"}, false},
		{"export json", []string{"export", "-t", "-", "--json", "-o", "DEST/m.json"}, true},
		{"inspect", []string{"inspect", "-"}, false},
		{"sessions json", []string{"sessions", "--from", "-", "--json"}, true},
		{"apply", []string{"apply", "-", "--dest", "DEST"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dest := t.TempDir()
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "DEST", dest)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = env.List()
			// An OS pipe, as a shell's: exec would wait for a copy of
			// anything else.
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			// The smallest pipe: a write of more than it holds returns only
			// once the command has read, which it does after it has set up
			// its ^C handling. A fixed wait instead lost the race on a busy
			// machine, where a -race binary can take seconds to start, and
			// the ^C then killed the process before it had a handler.
			capacity, err := unix.FcntlInt(pw.Fd(), unix.F_SETPIPE_SZ, 4096)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = pr
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pr.Close()
			// Half a session, and then the writer stalls, as a slow pipe does.
			input := session.Bytes()
			if c.args[0] == "apply" {
				input = manifest
			}
			half := input[:len(input)/2]
			if len(half) <= 2*capacity {
				t.Fatalf("half the input is %d bytes, too little to tell the command has read (the pipe holds %d)", len(half), capacity)
			}
			read := make(chan struct{})
			go func() {
				_, _ = pw.Write(half[:2*capacity])
				close(read)
				_, _ = pw.Write(half[2*capacity:])
			}()
			select {
			case <-read:
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("the command read nothing in 60s\n%s", errb.String())
			}
			// Let it take what the pipe still holds and wait for more.
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("still running 20s after ^C\n%s", errb.String())
			}
			_ = pw.Close()
			if code := exitCode(err); code != ExitInterrupted {
				t.Fatalf("exit %d after ^C, want 130\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
			}
			t.Logf("stopped %v after ^C", time.Since(start).Round(time.Millisecond))
			if !strings.Contains(errb.String(), "sandbox: interrupted") {
				t.Errorf("stderr does not say interrupted:\n%s", errb.String())
			}
			if c.json {
				var doc struct {
					Interrupted bool `json:"interrupted"`
					Error       struct {
						Message  string `json:"message"`
						ExitCode int    `json:"exit_code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(out.Bytes(), &doc); err != nil || !doc.Interrupted || doc.Error.ExitCode != 130 {
					t.Errorf("the --json document does not say it was cut short: %v\n%s", err, out.String())
				}
			} else if strings.Contains(out.String(), "+++") {
				t.Errorf("a plan was printed from a cut parse:\n%s", out.String())
			}
			entries, _ := os.ReadDir(dest)
			if len(entries) != 0 {
				t.Errorf("an interrupted command wrote %d entries into the destination", len(entries))
			}
		})
	}
}

// TestSecondInterruptForces: the second ^C ends the process at once, unless
// the command owns its interrupts (sandbox run kills its agent instead).
func TestSecondInterruptForces(t *testing.T) {
	old := forceExit
	t.Cleanup(func() { forceExit = old })
	for _, owned := range []bool{false, true} {
		exited := make(chan int, 1)
		forceExit = func(code int) { exited <- code }
		sigs := make(chan os.Signal, 2)
		done := make(chan struct{})
		var stderr bytes.Buffer
		finished := make(chan struct{})
		go func() { forceOnSecond(sigs, done, func() bool { return owned }, &stderr); close(finished) }()
		sigs <- os.Interrupt
		select {
		case <-exited:
			t.Fatalf("owned=%v: the first ^C forced an exit", owned)
		case <-time.After(100 * time.Millisecond):
		}
		sigs <- os.Interrupt
		select {
		case code := <-exited:
			if owned || code != ExitInterrupted || !strings.Contains(stderr.String(), "interrupted again") {
				t.Errorf("owned=%v: forced exit %d, %q", owned, code, stderr.String())
			}
		case <-time.After(500 * time.Millisecond):
			if !owned {
				t.Errorf("the second ^C did not force an exit")
			}
			close(done)
		}
		<-finished
	}
}
