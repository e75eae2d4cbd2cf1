package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/bytesize"
	"github.com/agentsandbox/sandbox/internal/memtune"
	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/jsonl"
	recov "github.com/agentsandbox/sandbox/recover"
)

// app holds the injected streams and global flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// completing says the shell asks for completions (cobra's __complete).
	completing bool

	json    bool
	verbose int
	quiet   bool
	noColor bool
	maxLine string
	// logFormat is text (human lines) or json (zerolog's JSON lines);
	// logReady once the logger is set up for it.
	logFormat string
	logReady  bool
	cmdPath   string // "sandbox recover": for hints
	// ownsInterrupts: the command handles ^C itself (sandbox run: a
	// second ^C kills the agent, and the exit is the agent's).
	ownsInterrupts *atomic.Bool
	// wroteJSON: a --json document is on stdout (an error then goes in it,
	// not in a second one).
	wroteJSON bool

	log zerolog.Logger
	// plansPrinted: the dry-run diffs were printed as the plans were made.
	plansPrinted bool

	// env is the environment the command runs in: the process's, or a
	// test's. Nothing in a command reads the process's own.
	env osenv.Env
	// spools are the private copies of databases read from archives and
	// standard input, removed when the command ends.
	spools *discover.Spools
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	return newAppIn(osenv.Process(), stdin, stdout, stderr)
}

// newAppIn is an app whose command runs in env.
func newAppIn(env osenv.Env, stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{stdin: stdin, stdout: stdout, stderr: stderr, ownsInterrupts: new(atomic.Bool), env: env, spools: &discover.Spools{}}
}

// now is the clock for --since/--until; SANDBOX_NOW (RFC 3339) fixes it,
// for reproducible scripts.
func (a *app) now() time.Time {
	if v := a.env.Get("SANDBOX_NOW"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return time.Now()
}

// home is the user's home directory, "" when the environment names none.
func (a *app) home() string {
	h, _ := a.env.Home()
	return h
}

// stateRoot is the harness's state directory (sessions, locks, the
// journal key).
func (a *app) stateRoot() string { return harness.DefaultRoot(a.env) }

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "sandbox",
		Short: "Get back the work of coding agents whose sandbox is gone",
		Long: reflow(`sandbox reads the session transcripts of coding agents (` + agentTitles() + `) and gets back the files they wrote when the sandbox they ran in is gone:
it extracts every file-changing tool call, replays it with the agent's own
semantics, and writes the result onto the host with dry-run diffs, conflict
detection, three-way merge and atomic writes.

A SIZE (--max-line, run's --memory, SANDBOX_RESTORE_MAX_SIZE) is a number of
bytes (1073741824) or a number and a unit, in any case, a blank between them
allowed: K, M, G, T, and KiB, MiB, GiB, TiB, are powers of 1024 (64M = 64MiB =
67108864 bytes), KB, MB, GB, TB powers of 1000 (64MB = 64000000 bytes); the
number may have a fraction (1.5G), rounded down to a whole byte.`),
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       readVersion().String(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.cmdPath = cmd.CommandPath()
			if a.logFormat != "text" && a.logFormat != "json" {
				return usagef("--log-format %q: use text or json", a.logFormat)
			}
			a.setupLog()
			n, err := bytesize.Parse(a.maxLine)
			if err != nil || n < 1<<10 {
				return &HintError{usagef("--max-line %q: want a size of at least 1K, such as 64M, 64MiB, 1.5G or 1073741824", a.maxLine), sizeHint}
			}
			// The limit travels with the command's context to every reader.
			cmd.SetContext(jsonl.WithMaxLine(cmd.Context(), n))
			memtune.Start(jsonl.Longest)
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.maxLine, "max-line", "1G", "skip (and report) transcript lines longer than `SIZE` instead of holding them: bytes, or a number with K, M, G, T or KiB, MiB… (powers of 1024) or KB, MB, GB, TB (powers of 1000), such as 64M, 512MiB or 1.5G")
	pf.BoolVar(&a.json, "json", false, "print one machine-readable JSON document on stdout")
	pf.CountVarP(&a.verbose, "verbose", "v", "log more on stderr (-v, -vv)")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "log only errors on stderr")
	pf.BoolVar(&a.noColor, "no-color", false, "never colour the output")
	pf.StringVar(&a.logFormat, "log-format", "text", "how stderr's log lines look (`FORMAT`): text (sandbox: warning: …) or json (one JSON object a line)")
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		a.cmdPath = c.CommandPath()
		return &UsageError{err}
	})
	root.AddCommand(a.recoverCommand(), a.reviewCommand())
	root.AddCommand(a.diffCommand())
	root.AddCommand(a.sessionsCommand())
	root.AddCommand(a.undoCommand())
	root.AddCommand(a.exportCommand())
	root.AddCommand(a.applyCommand())
	root.AddCommand(a.detectCommand())
	root.AddCommand(a.inspectCommand())
	root.AddCommand(a.logCommand())
	root.AddCommand(a.vaultCommand(), a.doctorCommand())
	root.AddCommand(a.runCommand(), a.psCommand(), a.logsCommand(), a.stopCommand(), a.rmCommand(),
		a.gcCommand(), a.snapshotCommand(), a.restoreCommand(), a.execCommand(), a.versionCommand())
	if a.completing {
		// Cobra keeps completion functions in a map of its own for the
		// process, which would keep every app a test runs (and its
		// output) alive: only a completion request needs them.
		a.registerCompletions(root)
	}
	addExitStatus(root)
	return root
}

// sizeHint says how a size is written, for the errors of the flags and
// variables that take one.
const sizeHint = "a size is bytes, or a number and a unit: K, M, G, T, KiB, MiB, GiB and TiB are powers of 1024 (64M = 64MiB = 67108864), KB, MB, GB and TB powers of 1000 (64MB = 64000000); the number may have a fraction (1.5G)"

// setupLog makes the stderr logger: a console writer on a terminal, JSON
// lines otherwise.
func (a *app) setupLog() {
	level := zerolog.WarnLevel
	switch {
	case a.quiet:
		level = zerolog.ErrorLevel
	case a.verbose == 1:
		level = zerolog.InfoLevel
	case a.verbose >= 2:
		level = zerolog.DebugLevel
	}
	var w io.Writer = a.stderr
	if a.logFormat != "json" {
		// One human format, on a terminal or not, like sandbox's own
		// "sandbox: error:" lines: "sandbox: warning: … (key=value)".
		color := !a.noColor && a.env.Get("NO_COLOR") == "" && isTerminal(a.stderr)
		w = zerolog.ConsoleWriter{Out: a.stderr, NoColor: !color, PartsOrder: []string{zerolog.LevelFieldName, zerolog.MessageFieldName},
			FormatLevel: func(i any) string {
				l, _ := i.(string)
				word := map[string]string{"warn": "warning", "error": "error", "info": "info", "debug": "debug", "trace": "trace"}[l]
				if word == "" {
					word = l
				}
				if color && l == "warn" {
					return "sandbox: \x1b[33m" + word + "\x1b[0m:"
				}
				return "sandbox: " + word + ":"
			},
			FormatFieldName:     func(i any) string { return fmt.Sprintf("(%s=", i) },
			FormatFieldValue:    func(i any) string { return fmt.Sprintf("%s)", i) },
			FormatErrFieldName:  func(i any) string { return "(" },
			FormatErrFieldValue: func(i any) string { return fmt.Sprintf("%s)", i) },
			PartsExclude:        []string{zerolog.TimestampFieldName}}
	}
	a.log = zerolog.New(w).Level(level).With().Timestamp().Logger()
	a.logReady = true
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) color() bool {
	return !a.noColor && a.env.Get("NO_COLOR") == "" && isTerminal(a.stdout)
}

// journalKeys holds the journal keys read, by file: an apply of thousands of
// files seals as many entries.
var journalKeys sync.Map

// journalKey is the key that seals journals: $SANDBOX_HOME/journal.key.
func (a *app) journalKey() ([]byte, error) {
	file := filepath.Join(a.stateRoot(), "journal.key")
	if k, ok := journalKeys.Load(file); ok {
		return k.([]byte), nil
	}
	k, err := recov.LoadKey(file)
	if err != nil {
		return nil, err
	}
	journalKeys.Store(file, k)
	return k, nil
}
