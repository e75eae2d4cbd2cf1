package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
)

// sessionsOptions are the flags of sandbox sessions.
type sessionsOptions struct {
	selectOptions
	Wide bool
}

func (a *app) sessionsCommand() *cobra.Command {
	var o sessionsOptions
	c := &cobra.Command{
		Use:   "sessions [--since TIME] [--session ID] [--cwd DIR] [--agent A] [--from PATH]...",
		Short: "List the agent sessions there are to recover from",
		Long: `sandbox sessions lists the agent sessions found in the agents' homes ($CODEX_HOME or
~/.codex, $CLAUDE_CONFIG_DIR or ~/.claude, the harness's workspaces under
$SANDBOX_HOME), or in what --transcript and --from name, with the selection flags
of recover: the agent, the session id, when it started and was last active, its
working directory, its file operations (applied / failed in the session), the
files it touched, and how it ended (clean, truncated: the transcript is cut
off, died-in-tool: a tool call never got its result, open: a turn never
finished, aborted).

The table is aligned on a terminal and tab-separated when piped; --json prints
one document. A Claude Code session's subagent transcripts count with it.`,
		Example: `  sandbox sessions --since 24h
  sandbox sessions --cwd ~/src/app --agent claude
  sandbox sessions --from artifacts.zip --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runSessions(cmd.Context(), o)
		},
	}
	o.selectOptions.register(c.Flags())
	c.Flags().BoolVar(&o.Wide, "wide", false, "on a terminal, show every cell whole (default: cut the CWD column to the terminal's width)")
	return c
}

// sessionsReport is the --json document of sandbox sessions.
type sessionsReport struct {
	Schema   string           `json:"schema"`
	Sessions []*parse.Summary `json:"sessions"`
	Looked   []string         `json:"looked_in"`
}

func (a *app) runSessions(ctx context.Context, o sessionsOptions) error {
	sel, looked, err := a.selectSessions(ctx, o.selectOptions, nil, false)
	if err != nil {
		return err
	}
	sel = append(sel, parse.SelectedCompanions(sel)...)
	bar := a.counting("reading transcripts", sel)
	sums, errs := parse.Summarize(ctx, sel, nil)
	bar.End()
	for _, e := range errs {
		var oe *objstore.Error
		if errors.As(e, &oe) {
			// A store that failed mid-read: a listing of part of the
			// source would pass for all of it.
			return s3Hint(oe)
		}
		a.log.Warn().Msgf("transcript not read: %s", printable(e.Error()))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if a.json {
		if sums == nil {
			sums = []*parse.Summary{}
		}
		return a.writeJSON(sessionsReport{Schema: "sandbox.sessions/v1", Sessions: sums, Looked: looked})
	}
	if len(sums) == 0 {
		fmt.Fprintf(a.stderr, "sandbox: no sessions (looked in %s)\n", joinLooked(looked))
		return nil
	}
	// On a terminal: local times with their zone and the verdict in words;
	// piped: RFC 3339 in UTC and the verdict's words joined by hyphens, so
	// no cell but a path holds a space (cut, awk -F'\t').
	// On a terminal ids are cut to 13 characters (a UUIDv7's whole
	// millisecond stamp: --session takes any unique prefix), unless --wide,
	// and the zone is said once, in the header.
	term := isTerminal(a.stdout)
	start, last := "START", "LAST"
	if term {
		zone := time.Now().Format("MST")
		start, last = "START ("+zone+")", "LAST ("+zone+")"
	}
	rows := [][]string{{"AGENT", "SESSION", "HARNESS", start, last, "CWD", "OPS", "FILES", "VERDICT"}}
	for _, s := range sums {
		verdict, id := s.Verdict, s.ID
		if !term {
			verdict = strings.Join(strings.Fields(verdict), "-")
		} else if !o.Wide && len(id) > 13 {
			id = id[:13]
		}
		rows = append(rows, []string{string(s.Agent), printable(id), orDash(printable(s.Harness)), a.tableTime(s.Start), a.tableTime(s.End),
			printable(a.homeRel(s.Cwd)), fmt.Sprintf("%d/%d", s.OpsApplied, s.OpsFailed), strconv.Itoa(s.Files), verdict})
	}
	return a.writeTable(rows, 5, o.Wide)
}

func joinLooked(l []string) string {
	if len(l) == 0 {
		return "nowhere"
	}
	out := l[0]
	for _, x := range l[1:] {
		out += ", " + x
	}
	return out
}

// tableTime is timeCell without the zone on a terminal: the header says it.
func (a *app) tableTime(t time.Time) string {
	if !t.IsZero() && isTerminal(a.stdout) {
		return t.Local().Format("2006-01-02 15:04")
	}
	return a.timeCell(t)
}

// timeCell writes a time for a table: local with its zone on a terminal,
// RFC 3339 in UTC when piped (for machines, with no space inside).
func (a *app) timeCell(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if isTerminal(a.stdout) {
		return t.Local().Format("2006-01-02 15:04 MST")
	}
	return t.UTC().Format(time.RFC3339)
}
