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

	"github.com/agentsandbox/sandbox/parse/discover"
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

// HintError carries a next step for the user.
type HintError struct {
	Err  error
	Hint string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// Main runs sandbox with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer discover.RemoveSpools()
	app := newApp(stdin, stdout, stderr)
	root := app.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return app.exit(ctx, err)
}

// exit reports err on stderr (once, at the top) and maps it to an exit code.
func (a *app) exit(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	var se *silentExit
	if errors.As(err, &se) {
		return se.code
	}
	var pe *PartialError
	if errors.As(err, &pe) {
		if !a.json && !a.quiet {
			fmt.Fprintf(a.stderr, "sandbox: %s\n", pe.Msg)
		}
		return ExitPartial
	}
	fmt.Fprintf(a.stderr, "sandbox: error: %s\n", inertLines(strings.TrimSuffix(err.Error(), ".")))
	var he *HintError
	if errors.As(err, &he) && he.Hint != "" {
		fmt.Fprintf(a.stderr, "sandbox: hint: %s\n", he.Hint)
	}
	var ue *UsageError
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &ue) || isCobraUsage(err):
		if !errors.As(err, &he) {
			fmt.Fprintf(a.stderr, "sandbox: hint: see 'sandbox %s --help'\n", a.cmdName)
		}
		return ExitUsage
	}
	return ExitFailure
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
