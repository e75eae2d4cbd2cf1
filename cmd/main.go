package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/osenv"
)

// Exit codes (DESIGN.md).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitPartial     = 3
	ExitInterrupted = 130
)

// UsageError is a mistake in the command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// PartialError is a command that finished but left work undone.
type PartialError struct{ Msg string }

func (e *PartialError) Error() string { return e.Msg }

// codeError is a failure with an exit code of its own (127: the command
// could not be started).
type codeError struct {
	err  error
	code int
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// HintError carries a next step for the user.
type HintError struct {
	Err  error
	Hint string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// forceExit ends the process on a second ^C; tests replace it.
var forceExit = os.Exit

// forceOnSecond exits 130 at the second interrupt, unless the command
// handles interrupts itself.
func forceOnSecond(sigs <-chan os.Signal, done <-chan struct{}, owned func() bool, stderr io.Writer) {
	seen := 0
	for {
		select {
		case <-sigs:
			if seen++; seen >= 2 && !owned() {
				fmt.Fprintln(stderr, "sandbox: interrupted again: stopping now")
				forceExit(ExitInterrupted)
				return
			}
		case <-done:
			return
		}
	}
}

// Main runs sandbox with args in the process's environment and returns the
// exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainIn(osenv.Process(), args, stdin, stdout, stderr)
}

// mainIn runs sandbox with args in env: what the command reads of an
// environment (the homes, SANDBOX_*, NO_COLOR, the runtimes') comes from
// env, never from the process's, so that tests can run commands side by
// side, each in its own.
func mainIn(env osenv.Env, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newAppIn(env, stdin, stdout, stderr)
	defer app.spools.Remove()
	// A second ^C forces: whatever the command was doing, it ends now
	// (writes are journaled and atomic, so what is on disk is either the
	// old file or the new one). sandbox run handles its own second ^C: it
	// kills the agent and records it.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go forceOnSecond(sigs, done, app.ownsInterrupts.Load, stderr)
	app.completing = len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
	root := app.rootCommand()
	// A bad flag stops cobra before it reaches --json: the error document
	// is still wanted (set after the flags are defined, which resets it).
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			app.json = true
		}
	}
	if app.json && len(args) > 0 && args[0] == "--version" || app.json && len(args) > 1 && args[1] == "--version" && args[0] == "--json" {
		// --version --json: the version document, as sandbox version --json.
		if err := app.writeJSON(readVersion()); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return app.exit(ctx, err)
}

// exit reports err on stderr (once, at the top) and maps it to an exit code.
// With --json, a command that wrote no document writes its error as one on
// stdout: {"error": {"message", "hint", "exit_code"}}. A command cut short by
// ^C or TERM exits 130 and says "interrupted", whatever it returned.
func (a *app) exit(ctx context.Context, err error) int {
	// A command cut short by ^C says so; one that finished its work
	// before it noticed is not made a failure (undo, a report complete).
	if ctx.Err() != nil && !a.ownsInterrupts.Load() && errors.Is(err, context.Canceled) {
		err = errInterrupted
	}
	if err == nil {
		return ExitOK
	}
	var se *silentExit
	if errors.As(err, &se) {
		return se.code
	}
	code := a.exitCode(ctx, err)
	hint := hintOf(err)
	if hint == "" && code == ExitUsage {
		hint = fmt.Sprintf("see '%s --help'", a.commandPath())
	}
	if a.json && !a.wroteJSON {
		doc := map[string]any{"message": strings.TrimSuffix(err.Error(), "."), "exit_code": code}
		if hint != "" {
			doc["hint"] = hint
		}
		out := map[string]any{"error": doc}
		if code == ExitInterrupted {
			out["interrupted"] = true
		}
		_ = a.writeJSON(out)
	}
	if a.logFormat == "json" && a.logReady {
		// --log-format json: the error is a log line like the others.
		ev := a.log.Error().Int("exit_code", code)
		if hint != "" {
			ev = ev.Str("hint", hint)
		}
		ev.Msg(strings.TrimSuffix(err.Error(), "."))
		return code
	}
	if errors.Is(err, errInterrupted) {
		fmt.Fprintln(a.stderr, "sandbox: interrupted")
		return ExitInterrupted
	}
	var pe *PartialError
	if errors.As(err, &pe) {
		if !a.json && !a.quiet {
			fmt.Fprintf(a.stderr, "sandbox: %s\n", pe.Msg)
		}
		return ExitPartial
	}
	fmt.Fprintf(a.stderr, "sandbox: error: %s\n", inertLines(strings.TrimSuffix(err.Error(), ".")))
	if hint != "" {
		fmt.Fprintf(a.stderr, "sandbox: hint: %s\n", hint)
	}
	return code
}

// errInterrupted is a command cut short by ^C or TERM.
var errInterrupted = errors.New("interrupted")

// exitCode maps an error to its exit code (DESIGN.md).
func (a *app) exitCode(ctx context.Context, err error) int {
	var (
		pe  *PartialError
		ce  *codeError
		cme *harness.CommandError
		ue  *UsageError
		ie  *harness.InvalidError
	)
	switch {
	case errors.As(err, &pe):
		return ExitPartial
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &cme):
		return cme.Code
	case errors.Is(err, errInterrupted) || ctx.Err() != nil || errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &ue) || errors.As(err, &ie) || isCobraUsage(err):
		return ExitUsage
	}
	return ExitFailure
}

// hintOf is the next step an error carries, if any.
func hintOf(err error) string {
	var he *HintError
	if errors.As(err, &he) && he.Hint != "" {
		return he.Hint
	}
	var ie *harness.InvalidError
	if errors.As(err, &ie) {
		return ie.Hint
	}
	return ""
}

// commandPath names the command for a hint: "sandbox recover", or
// "sandbox" when no command was reached.
func (a *app) commandPath() string {
	if a.cmdPath == "" {
		return "sandbox"
	}
	return a.cmdPath
}

// isCobraUsage recognises cobra's own errors for bad flags and arguments.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// interruptible reads r until ctx is done: a read blocked on a pipe (cat
// big | sandbox recover -t -) returns at ^C with the cancellation, its
// goroutine left to the exiting process.
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	if r == nil {
		return nil
	}
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	buf := make([]byte, len(p))
	done := make(chan readResult, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- readResult{n, err}
	}()
	select {
	case r := <-done:
		copy(p, buf[:r.n])
		return r.n, r.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
