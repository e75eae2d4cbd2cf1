package harness

import (
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// An interactive run on bwrap or local gets a pseudo-terminal of its own
// (Docker and Podman make theirs with -t): the agent's stdout is a terminal,
// so TUIs render, and its output is still kept in logs/output.log. The
// user's terminal is put in raw mode, so every key, ^C included, goes to
// the agent's terminal, whose line discipline turns ^C into the agent's
// SIGINT. The agent is the session leader of its terminal, so nothing it
// does (TIOCSTI) can reach the user's.

// ptyTerm is a running interactive session's terminal.
type ptyTerm struct {
	ptmx    *os.File
	restore func()
	winch   chan os.Signal
	copied  sync.WaitGroup
}

// wantsPTY reports whether a run gets a pseudo-terminal: it is
// interactive and stdin is a terminal.
func wantsPTY(spec *Spec) bool {
	in, ok := spec.Stdin.(*os.File)
	return spec.TTY && ok && term.IsTerminal(int(in.Fd()))
}

// startProc starts cmd: on a pseudo-terminal when wantsPTY, else in a
// process group of its own. With ctty the process is its terminal's
// session leader; without, something inside takes the terminal (bwrap's
// agent, through setsid --ctty, so that a ^C is the agent's alone and
// never kills bwrap itself).
func startProc(cmd *exec.Cmd, spec *Spec, ctty bool) (*ptyTerm, error) {
	if !wantsPTY(spec) {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
		cmd.SysProcAttr = procAttr(spec)
		return nil, cmd.Start()
	}
	in := spec.Stdin.(*os.File)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	size, _ := pty.GetsizeFull(in)
	ptmx, err := pty.StartWithAttrs(cmd, size, &syscall.SysProcAttr{Setsid: true, Setctty: ctty})
	if err != nil {
		return nil, err
	}
	t := &ptyTerm{ptmx: ptmx, restore: func() {}, winch: make(chan os.Signal, 1)}
	if old, err := term.MakeRaw(int(in.Fd())); err == nil {
		t.restore = func() { _ = term.Restore(int(in.Fd()), old) }
	}
	signal.Notify(t.winch, syscall.SIGWINCH)
	go func() {
		for range t.winch {
			_ = pty.InheritSize(in, ptmx)
		}
	}()
	// Keys to the agent. The copy ends with the harness: a read of the
	// user's terminal cannot be cancelled, and one more key is harmless.
	go func() { _, _ = io.Copy(ptmx, in) }()
	t.copied.Add(1)
	go func() {
		defer t.copied.Done()
		// EIO once the agent and everything holding the terminal is gone.
		_, _ = io.Copy(spec.Stdout, ptmx)
	}()
	return t, nil
}

// finish waits for the agent's last output and gives the user's terminal
// back as it was.
func (t *ptyTerm) finish() {
	// A process the agent left behind may hold the terminal open: its
	// output is not waited for long.
	copied := make(chan struct{})
	go func() { t.copied.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
	}
	signal.Stop(t.winch)
	close(t.winch)
	_ = t.ptmx.Close()
	t.restore()
}
