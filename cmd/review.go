package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentsandbox/sandbox/inspect"
	"github.com/agentsandbox/sandbox/parse"
	recov "github.com/agentsandbox/sandbox/recover"
	"github.com/agentsandbox/sandbox/review"
)

func (a *app) reviewCommand() *cobra.Command {
	var o recoverOptions
	c := &cobra.Command{
		Use:   "review [--since TIME | --session ID | --transcript FILE | --from PATH]... [--dest DIR | --map FROM=TO...]",
		Short: "Look at what recover would write, file by file and hunk by hunk, and write only what you take",
		Long: reflow(`sandbox review shows the recovery sandbox recover would make, in a
terminal UI of three panes: the sessions (agent, start, project, how the
session ended, its files), the selected session's files (the mark of what is
taken, the action, the grade, the path), and the selected file's diff against
the host copy, coloured, its hunks numbered. Nothing is written until enter
and a yes. It takes the same flags as recover to select the sessions and say
where their files go; recover -i is the same command.

Keys, as in git add -p and lazygit: j/k or the arrows move, tab goes to the
next pane, space takes or leaves the selected file, y or n takes or leaves the
diff's current hunk and goes on to the next, [ and ] go to the previous or next
hunk, a takes every file graded exact (A every file), u leaves them all, /
searches the paths, t shows the session's timeline (its turns, calls and
outcomes, as inspect tells them), o opens its HTML report in a browser, ? lists
the keys, enter writes what is taken after asking, and q, esc or ^C quit
writing nothing.

What is taken is written through the same plan and journal as recover: atomic
writes, each read back, all of it rolled back if one fails, and sandbox undo
reverses it. A file taken in part is written as the host's copy with the hunks
taken. The summary says what was written and what was left. On anything that
is not a terminal (a pipe, a file, --json) the plan is printed instead, as
recover --dry-run prints it, and nothing is written. NO_COLOR turns the
colours off.`),
		Example: `  # the last day's sessions, back where they ran
  sandbox review --since 24h

  # one transcript, onto ./proj
  sandbox review -t rollout.jsonl --dest ./proj

  # the same, from recover
  sandbox recover -i --session 019c7bdb --dest ./proj`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runReview(cmd.Context(), o)
		},
	}
	o.register(c.Flags())
	return c
}

// runReview recovers as recover does, but through the review: the user
// takes files and hunks, and only those are written. Off a terminal, or
// with --json, the plan is printed instead and nothing is written.
func (a *app) runReview(ctx context.Context, o recoverOptions) error {
	if o.Interactive && (o.DryRun || o.ToBranch != "" || o.Format == "patch") {
		return usagef("a review (-i) writes what it takes: it does not go with --dry-run, --to-branch or --format patch")
	}
	o.Interactive = false
	in, isFile := a.stdin.(*os.File)
	if why := a.noTerminal(in, isFile); why != "" {
		a.log.Warn().Msgf("review needs a terminal, and %s: here is the plan instead (recover --dry-run); nothing is written", why)
		o.DryRun = true
	}
	r, err := a.setupRecover(ctx, o)
	if r == nil {
		return err
	}
	if o.DryRun {
		res, rerr := a.recoverOnce(ctx, r.sel, r.opts, r.at)
		if res == nil {
			return projectsHint(rerr)
		}
		return a.finish(ctx, res, rerr, true, o.applyFlags)
	}
	var res *recov.Result
	var rerr error
	quit := false
	err = a.prepare(ctx, r.sel, r.opts, r.at, func(ctx context.Context, p *recov.Prepared) error {
		preview := p.Preview(ctx)
		if preview.NotWritable != nil {
			return &HintError{preview.NotWritable, notWritableHint}
		}
		out, err := review.Run(ctx, in, a.stdout, a.reviewData(preview, r, o.Base))
		if err != nil {
			return err
		}
		if !out.Apply {
			quit = true
			return nil
		}
		res, rerr = p.ApplyChosen(ctx, out.Choices)
		return nil
	})
	switch {
	case err != nil:
		return err
	case quit:
		if !a.quiet {
			fmt.Fprintln(a.stderr, "sandbox: review ended: nothing written")
		}
		return nil
	case res == nil:
		return projectsHint(rerr)
	}
	return a.finish(ctx, res, rerr, false, o.applyFlags)
}

// noTerminal says why the review cannot be shown here ("" when it can).
func (a *app) noTerminal(in *os.File, isFile bool) string {
	switch {
	case a.json:
		return "--json asks for a report"
	case !isTerminal(a.stdout):
		return "standard output is not one"
	case !isFile || !term.IsTerminal(int(in.Fd())):
		return "standard input is not one"
	}
	return ""
}

// reviewData is what the review shows of a prepared recovery.
func (a *app) reviewData(preview *recov.Result, r *recoverRun, base string) review.Data {
	sel := r.sel
	d := review.Data{Plans: preview.Plans, Color: !a.noColor && a.env.Get("NO_COLOR") == ""}
	bySession := map[string][]parse.Selected{}
	for _, s := range sel {
		bySession[s.Info.ID] = append(bySession[s.Info.ID], s)
	}
	for _, s := range preview.Report.Sessions {
		rs := review.Session{ID: s.ID, Agent: s.Agent, Project: s.Cwd, Verdict: s.EndState}
		if ss := bySession[s.ID]; len(ss) > 0 {
			rs.Start = ss[0].Info.First
		}
		d.Sessions = append(d.Sessions, rs)
	}
	inspection := func(ctx context.Context, id string) (*inspect.Inspection, error) {
		ss, ok := bySession[id]
		if !ok {
			return nil, fmt.Errorf("session %s: its transcript is not among those read", id)
		}
		ss = append(ss, parse.SelectedCompanions(ss)...)
		in, err := inspect.Build(ctx, ss, sessionBase(r, base, ss[0].Info.Cwd), true, nil)
		if err != nil {
			return nil, err
		}
		in.Sandbox = a.sandboxEnds(ss)
		return in, nil
	}
	d.Timeline = func(ctx context.Context, id string) (string, error) {
		in, err := inspection(ctx, id)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		inspect.WriteText(&b, tw, in)
		tw.Flush()
		return b.String(), in.Err()
	}
	d.Report = func(ctx context.Context, id string) (string, string, error) {
		in, err := inspection(ctx, id)
		if err != nil {
			return "", "", err
		}
		dir := filepath.Join(a.stateRoot(), "reports")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", "", err
		}
		file := filepath.Join(dir, recov.FolderName(id)+".html")
		if err := writeHTMLReport(file, inspect.NewReport(in, false, reportMeta())); err != nil {
			return "", "", err
		}
		return file, a.openInBrowser(file), nil
	}
	return d
}

// sessionBase is where the timeline reads a session's files from as they
// started: --base DIR, else the destination its files go to (the host
// copy, as recover reads it).
func sessionBase(r *recoverRun, base, cwd string) string {
	if base != "" && !strings.HasPrefix(base, "git:") {
		return base
	}
	for _, m := range r.opts.Maps {
		if m.From == cwd {
			return m.To
		}
	}
	if r.opts.Dest != "" && !r.opts.DestPerSession {
		return r.opts.Dest
	}
	return ""
}

// openInBrowser opens file in $BROWSER, or the desktop's opener when there
// is a display, and returns what opened it ("" for nothing: over SSH the
// user opens the file). The browser's output never reaches the terminal,
// which the review holds.
func (a *app) openInBrowser(file string) string {
	var name string
	switch {
	case a.env.Get("BROWSER") != "":
		name = a.env.Get("BROWSER")
	case runtime.GOOS == "darwin":
		name = "open"
	case a.env.Get("DISPLAY") != "" || a.env.Get("WAYLAND_DISPLAY") != "":
		name = "xdg-open"
	default:
		return ""
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	cmd := exec.Command(path, file)
	if err := cmd.Start(); err != nil {
		return ""
	}
	go func() { _ = cmd.Wait() }()
	return name
}
