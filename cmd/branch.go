package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse"
	recov "github.com/agentsandbox/sandbox/recover"
)

// recoverToBranch writes the selected sessions as history on a new branch
// (recover --to-branch).
func (a *app) recoverToBranch(ctx context.Context, sel []parse.Selected, opts recov.Options, at atSpec, b recov.BranchOptions) error {
	streams, err := a.openSelectedTurns(ctx, sel, true)
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	if err != nil {
		return err
	}
	sources := make([]recov.Source, len(streams))
	for i, s := range streams {
		sources[i] = at.cut(s)
	}
	b.Turns = func() []recov.Turn {
		var out []recov.Turn
		for _, s := range streams {
			id := s.Session().ID
			for _, e := range s.Turns() {
				out = append(out, recov.Turn{Session: id, Time: e.Time, Prompt: e.Text})
			}
		}
		return out
	}
	b.Sessions = func() []manifest.Session {
		out := make([]manifest.Session, len(streams))
		for i, s := range streams {
			out[i] = s.Session()
		}
		return out
	}
	fsys := recov.NewOSFS()
	defer fsys.Close()
	rep, err := recov.ToBranch(ctx, sources, &recov.DryRunFS{Read: fsys}, opts, b)
	a.logStreams(ctx, streams)
	var be *recov.BranchError
	if errors.As(err, &be) {
		if be.Hint != "" {
			return &HintError{be, be.Hint}
		}
		return err
	}
	var re *recov.RevError
	if errors.As(err, &re) {
		return &UsageError{err}
	}
	if err != nil {
		return projectsHint(err)
	}
	if a.json {
		return a.writeJSON(rep)
	}
	start := rep.Start[:7]
	fmt.Fprintf(a.stdout, "branch %s: %d commit%s on %s (%s)\n", printable(rep.Branch), len(rep.Commits), plural.S(len(rep.Commits)), start, printable(rep.StartNote))
	tw := a.table()
	for _, c := range rep.Commits {
		fmt.Fprintf(tw, "%s\t%s\t%d file%s\t%s\n", c.Hash[:7], c.Date.UTC().Format("2006-01-02 15:04:05"), len(c.Files), plural.S(len(c.Files)), printable(c.Subject))
	}
	tw.Flush()
	for _, l := range rep.Left {
		fmt.Fprintf(a.stdout, "left out\t%s\t%s\n", printable(l.Path), printable(l.Reason))
	}
	for _, l := range rep.Stale {
		fmt.Fprintf(a.stdout, "stale\t%s\t%s (the branch has its last known content)\n", printable(l.Path), printable(l.Reason))
	}
	for _, l := range rep.Redacted {
		fmt.Fprintf(a.stdout, "redacted\t%s\t%s (the branch has it placeholders and all)\n", printable(l.Path), printable(l.Reason))
	}
	if rep.Replaced != "" {
		fmt.Fprintf(a.stderr, "sandbox: branch %s replaced (it was at %s)\n", printable(rep.Branch), rep.Replaced[:7])
	}
	if len(rep.Left) > 0 {
		return &PartialError{fmt.Sprintf("%d file(s) not on the branch", len(rep.Left))}
	}
	return nil
}

// recoverPatch prints the recovery as a patch (recover --format patch,
// sandbox diff): nothing is written.
func (a *app) recoverPatch(ctx context.Context, sel []parse.Selected, opts recov.Options, at atSpec, against recov.PatchAgainst) error {
	opts.DryRun = true
	if against == "" {
		against = recov.AgainstHost
	}
	at.timeline = true // the author's model
	res, err := a.recoverOnce(ctx, sel, opts, at)
	if res == nil {
		return projectsHint(err)
	}
	if err != nil {
		return err
	}
	author, when := "agent <agent@agents.invalid>", time.Now()
	if ss := res.Report.Sessions; len(ss) > 0 {
		// The first session's agent is the author (git am takes one).
		name := ss[0].Agent
		if m, _, _ := strings.Cut(ss[0].Model, ", "); m != "" {
			name += " (" + m + ")"
		}
		author = fmt.Sprintf("%s <%s@agents.invalid>", name, ss[0].Agent)
	}
	for _, st := range sel {
		if !st.Info.First.IsZero() {
			when = st.Info.First
			break
		}
	}
	p := recov.GitPatch(res, against, author, when)
	if a.json {
		left := p.Left
		if left == nil {
			left = []recov.BranchLeft{}
		}
		doc := struct {
			Schema  string             `json:"schema"`
			Against recov.PatchAgainst `json:"against"`
			Files   int                `json:"files"`
			Patch   string             `json:"patch"`
			Left    []recov.BranchLeft `json:"left"`
		}{"sandbox.diff/v1", against, p.Files, p.Text, left}
		if err := a.writeJSON(doc); err != nil {
			return err
		}
	} else if _, err := fmt.Fprint(a.stdout, p.Text); err != nil {
		return err
	}
	a.printBases(res.Report)
	for _, l := range p.Left {
		fmt.Fprintf(a.stderr, "sandbox: left out of the patch: %s (%s)\n", printable(l.Path), printable(l.Reason))
	}
	if len(p.Left) > 0 {
		return &PartialError{fmt.Sprintf("%d file(s) left out of the patch", len(p.Left))}
	}
	return nil
}

func (a *app) diffCommand() *cobra.Command {
	var o recoverOptions
	var against string
	c := &cobra.Command{
		Use:   "diff [--since TIME | --session ID | --transcript FILE | --from PATH]... [--dest DIR | --map FROM=TO...] [--against host|start]",
		Short: "Print a session's recovered changes as a patch for git apply or git am",
		Long: `sandbox diff replays the selected sessions as recover does and prints the result as one
patch in git's format-patch form, writing nothing: a mail header naming the agent
(so git am takes it) and a diff --git section per file (so git apply takes it).

--against host (the default) diffs the host's files now against what recover
would write: files recover would not write (conflicts, unrecoverable, outside the
destination) are left out and listed on stderr. --against start diffs the files
as the session started (the start commit the transcript names, found in the
destination's repository or --repo DIR) against how it left them: the session's
whole work, to apply onto that commit.`,
		Example: `  # check that the recovered work applies to the checkout
  sandbox diff --session 019c7bdb --dest . | git apply --check

  # the session's work as a commit on top of its start commit
  git switch --detach <start commit> && sandbox diff -t rollout.jsonl --dest . --against start | git am`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch against {
			case "host", "start":
			default:
				return usagef("--against %q: use host or start", against)
			}
			o.Format, o.OnConflict = "patch", "skip"
			o.against = recov.PatchAgainst(against)
			return a.runRecover(cmd.Context(), o)
		},
	}
	f := c.Flags()
	o.selectOptions.register(f)
	f.StringVar(&o.Dest, "dest", "", "re-root each session's working directory onto `DIR`")
	f.StringArrayVar(&o.Maps, "map", nil, "map an agent path prefix onto a host directory, as `FROM=TO` (repeatable)")
	f.StringVar(&o.Base, "base", "", "read the files' starting content from `DIR`, or from a revision's tree as git:REV")
	f.StringVar(&o.Repo, "repo", "", "look for the sessions' start commit in the git repository at `DIR`")
	f.StringVar(&o.At, "at", "", "the files as they were at `TIME|TURN` of the session")
	f.StringArrayVar(&o.Paths, "path", nil, "only the files matching `GLOB` (repeatable)")
	f.StringVar(&o.Unknown, "unknown", "skip", "calls whose outcome is unknown (`MODE`): skip or apply")
	f.StringVar(&o.Redacted, "redacted", "skip", redactedUsage)
	f.StringVar(&against, "against", "host", "the patch's before side (`SIDE`): host (the files now) or start (as the session started)")
	return c
}
