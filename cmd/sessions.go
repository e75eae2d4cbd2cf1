package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/agentsandbox/sandbox/parse"
	"github.com/spf13/cobra"
)

// sessionsOptions are the flags of sandbox sessions.
type sessionsOptions struct {
	selectOptions
}

func (a *app) sessionsCommand() *cobra.Command {
	var o sessionsOptions
	c := &cobra.Command{
		Use:   "sessions [--since TIME] [--session ID] [--cwd DIR] [--agent A] [--from PATH]...",
		Short: "List the agent sessions there are to recover from",
		Long: `Sessions lists the agent sessions found in the agents' homes ($CODEX_HOME or
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
	bar.end()
	for _, e := range errs {
		a.log.Warn().Err(e).Msg("transcript not read")
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
	tw := a.table()
	fmt.Fprintln(tw, "AGENT\tSESSION\tSTART\tLAST ACTIVITY\tCWD\tOPS\tFILES\tVERDICT")
	for _, s := range sums {
		id := s.ID
		if s.Harness != "" {
			id += " (" + s.Harness + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%s\n", s.Agent, printable(id), when(s.Start), when(s.End), printable(s.Cwd),
			s.OpsApplied, s.OpsFailed, s.Files, s.Verdict)
	}
	return tw.Flush()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
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
