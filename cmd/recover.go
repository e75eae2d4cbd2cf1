package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/agentsandbox/sandbox/internal/jsonreport"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse"
	recov "github.com/agentsandbox/sandbox/recover"
)

// recoverOptions are the flags of sandbox recover.
type recoverOptions struct {
	selectOptions
	Yes            bool
	Dest           string
	Maps           []string
	Base           string
	Repo           string
	DryRun         bool
	OnConflict     string
	IncludeUnknown bool
	Unknown        string
	Redacted       string
	DestPerSession bool
	ToBranch       string
	Force          bool
	At             string
	Paths          []string
	Format         string
	Interactive    bool
	against        recov.PatchAgainst
	applyFlags
}

// atSpec is --at: a moment of the session, as a time or a turn number.
type atSpec struct {
	time time.Time
	turn int
	// timeline reads the transcripts' timeline too (prompts, models), which
	// a turn number and a patch's author need.
	timeline bool
}

func (s atSpec) set() bool { return s.turn > 0 || !s.time.IsZero() }

// parseAt reads --at: a turn number (1 is the first prompt) or a time as
// --since takes it.
func parseAt(v string, now time.Time) (atSpec, error) {
	if v == "" {
		return atSpec{}, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 {
			return atSpec{}, usagef("--at %s: turns count from 1", v)
		}
		return atSpec{turn: n}, nil
	}
	t, err := parse.ParseTime(v, now)
	if err != nil {
		return atSpec{}, usagef("--at %s: want a turn number or a time (%v)", v, err)
	}
	return atSpec{time: t}, nil
}

// cut ends a stream's operations at the moment at names: after the turn's
// last operation (before the next prompt's line), or at the time.
func (s atSpec) cut(st *parse.Stream) recov.Source {
	if !s.set() {
		return st
	}
	return recov.Until(st, func(op *manifest.Op) bool {
		if s.turn > 0 {
			line, ok := st.TurnLine(s.turn + 1)
			return !ok || op.Provenance.Line < line
		}
		return op.Provenance.Time.IsZero() || !op.Provenance.Time.After(s.time)
	})
}

// applyFlags are the flags recover and apply share about validation.
type applyFlags struct {
	Validate         string
	ValidateRollback bool
}

func (o *applyFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.Validate, "validate", "", "after writing, run `CMD` (with sh -c) in the destination and report its exit status")
	f.BoolVar(&o.ValidateRollback, "validate-rollback", false, "undo the apply when --validate fails")
}

func (a *app) recoverCommand() *cobra.Command {
	var o recoverOptions
	c := &cobra.Command{
		Use:   "recover [--since TIME | --session ID | --transcript FILE | --from PATH]... [--dest DIR | --map FROM=TO...]",
		Short: "Get the files an agent session wrote back onto the host",
		Long: reflow(`sandbox recover reads agent transcripts (` + agentTitles() + `), extracts every file-changing tool call, replays the applied ones with
the agent's own semantics and writes the resulting files onto the host. A Claude
Code session's subagent transcripts (<session>/subagents/agent-*.jsonl, or the
older agent-*.jsonl beside it) are read with it, and its file-history backups
(~/.claude/file-history/<session>/) serve as evidence when they are there.

Sessions are found in the agents' homes (` + agentHomes() + `, and the harness's
workspaces under $SANDBOX_HOME) and selected with
--since/--until (activity overlapping the window), --session (an id prefix; an
ambiguous one lists the candidates), --cwd and --agent. --transcript and --from
read files, directory trees and zip/tar archives instead (CI artifact salvage),
recognising transcripts by their content; nothing is extracted to disk.

Several transcripts are replayed together in time order. --dest re-roots each
session's working directory onto DIR; --map FROM=TO maps path prefixes
explicitly (the longest prefix wins, and --map wins over --dest). Without either,
each session's files go back to its own working directory when it exists on this
host: the plan is shown first, and writing needs a yes on a terminal, or --yes.
A file that maps nowhere is reported as outside-root and never written, and
nothing is ever written outside the destination roots: not through "..", not
through an absolute path, not through a symbolic link.

A file's replay starts from what the transcript pins, else from the session's
start commit when the destination's git repository (or --repo DIR) holds it: the
commit a Codex rollout records (graded exact), or the tip a Claude Code session's
branch had when it started (graded git); else from --base DIR|git:REV, else from
the host copy (host-based). The report names every file's base.

Each file's result is compared with the host copy: already there is
"unchanged"; a host copy equal to what the session started from is updated
(or created, deleted, moved); a host copy that moved on is merged three ways,
and a merge that does not come out clean is a conflict, handled by
--on-conflict (skip: leave the host file and report; backup: also write the
recovered version beside it as FILE.recovered; overwrite: replace it;
markers: write it with <<<<<<< conflict markers). A file a call of unknown
outcome touched, or one graded redacted (the transcript was redacted: the
session wrote a placeholder such as [REDACTED] where a secret was), is listed
and not written unless --unknown apply or --redacted apply.

Writes are atomic (temporary file, fsync, rename), read back and checked by
sha256; if any write fails, the changes already made are rolled back.
--dry-run prints each file's action and a unified diff and writes nothing.

--at TIME|TURN recovers the files as they were at a moment of the session, and
--path GLOB only some files. --to-branch NAME writes the session as git history
instead: a new branch from the start commit, one commit per turn that changed
files, leaving the work tree, index and HEAD alone. --format patch (or sandbox
diff) prints a patch for git apply and git am.`),
		Example: `  # the last day's sessions, back where they ran (asks first)
  sandbox recover --since 24h

  # one session, by id prefix, into ./proj
  sandbox recover --session 019c7bdb --dest ./proj

  # CI artifact salvage
  sandbox recover --from artifacts.zip --dest salvage/ --dest-per-session --json

  # see what would be recovered, with diffs
  sandbox recover --transcript ~/.codex/sessions/2026/11/20/rollout-….jsonl --dest ./proj --dry-run

  # write the files
  sandbox recover --transcript rollout.jsonl --dest ./proj

  # several sessions, one JSON report
  sandbox recover --transcript a.jsonl --transcript b.jsonl --dest ./proj --json

  # explicit path mapping
  sandbox recover --transcript rollout.jsonl --map /workspace=./proj

  # the session as history on a new branch of the repository it ran in
  sandbox recover --session 019c7bdb --dest . --to-branch agent/lost-work

  # into an empty directory, the start commit read from a repository (a bare one too)
  sandbox recover -t rollout.jsonl --dest ./proj --repo ~/src/proj.git

  # a Claude Code session (its subagents come along)
  sandbox recover --transcript ~/.claude/projects/-workspace/5c0375b4-….jsonl --dest ./proj`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runRecover(cmd.Context(), o)
		},
	}
	f := c.Flags()
	o.register(f)
	f.BoolVarP(&o.Yes, "yes", "y", false, "write into the sessions' own directories without asking")
	f.BoolVarP(&o.DryRun, "dry-run", "n", false, "show each file's action and diff; write nothing")
	f.StringVar(&o.ToBranch, "to-branch", "", "write the recovered session as history on a new git branch `NAME` (one commit per turn, from the start commit); the work tree, index and HEAD are left alone")
	f.BoolVar(&o.Force, "force", false, "with --to-branch, replace a branch of that name")
	f.StringVar(&o.Format, "format", "text", "the report's `FORMAT`: text, or patch (a git apply / git am-able patch of the changes against the host; writes nothing)")
	f.BoolVarP(&o.Interactive, "interactive", "i", false, "review the recovery in a terminal UI first, taking files and hunks one by one (sandbox review)")
	return c
}

// register registers the flags recover and review share: which sessions,
// where their files go, what is written.
func (o *recoverOptions) register(f *pflag.FlagSet) {
	o.selectOptions.register(f)
	f.StringVar(&o.Dest, "dest", "", "re-root each session's working directory onto `DIR`")
	f.StringArrayVar(&o.Maps, "map", nil, "map an agent path prefix onto a host directory, as `FROM=TO` (repeatable)")
	f.StringVar(&o.Base, "base", "", "read the files' starting content from `DIR` instead of the destination, or from a revision's tree as git:REV (a commit, branch, tag, HEAD~2)")
	f.StringVar(&o.Repo, "repo", "", "look for the sessions' start commit in the git repository at `DIR` (default: the one holding the destination; a bare one works)")
	f.StringVar(&o.OnConflict, "on-conflict", "skip", "what to do with a conflict (`MODE`): skip, backup, overwrite or markers")
	f.StringVar(&o.Unknown, "unknown", "skip", "calls whose outcome is unknown (they never got a result), `MODE`: skip lists their files, apply replays them")
	f.BoolVar(&o.IncludeUnknown, "include-unknown", false, "the same as --unknown apply")
	_ = f.MarkDeprecated("include-unknown", "use --unknown apply")
	f.StringVar(&o.Redacted, "redacted", "skip", redactedUsage)
	f.BoolVar(&o.DestPerSession, "dest-per-session", false, "with --dest, put each project (sessions of one working directory) in its own folder `DIR/<session id>`")
	f.StringVar(&o.At, "at", "", "recover the files as they were at `TIME|TURN` of the session (a time as --since takes it, or a turn number: 1 is after the first prompt's changes)")
	f.StringArrayVar(&o.Paths, "path", nil, "recover only the files matching `GLOB` (relative to the destination; a directory takes what is below it; repeatable)")
	o.applyFlags.register(f)
}

// recoverRun is a recovery set up from its flags: the sessions selected
// and where their files go.
type recoverRun struct {
	opts recov.Options
	sel  []parse.Selected
	at   atSpec
	// inPlace: no --dest or --map named the destination; each session's
	// files go back to its own working directory.
	inPlace bool
}

// setupRecover validates recover's flags, selects the sessions and maps
// each onto its destination. No session selected is said (or reported as
// an empty --json report) and gives a nil run.
func (a *app) setupRecover(ctx context.Context, o recoverOptions) (*recoverRun, error) {
	opts, err := a.validate(o)
	if err != nil {
		return nil, err
	}
	sel, looked, err := a.selectSessions(ctx, o.selectOptions, nil, true)
	if err != nil {
		return nil, err
	}
	if len(sel) == 0 {
		if a.json {
			return nil, a.writeJSON(emptyReport(o.DryRun))
		}
		if !a.quiet {
			fmt.Fprintf(a.stderr, "sandbox: no session to recover (looked in %s)\n", strings.Join(looked, ", "))
		}
		return nil, nil
	}
	at, err := parseAt(o.At, a.now())
	if err != nil {
		return nil, err
	}
	if o.ToBranch != "" && opts.Dest == "" && len(opts.Maps) == 0 && o.Repo != "" {
		opts.Dest = o.Repo // the branch's files are the repository's
	}
	inPlace := opts.Dest == "" && len(opts.Maps) == 0
	if inPlace {
		// Each session's files go back where the session ran, if that is here.
		for _, s := range sel {
			if s.Info.Cwd == "" {
				return nil, &HintError{fmt.Errorf("%s: the session's working directory is not recorded", s.Name), "give --dest DIR"}
			}
			to, ok := a.hostDir(s)
			if !ok {
				return nil, &HintError{usagef("session %s worked in %s, which is not a directory on this host", s.Info.ID, s.Info.Cwd),
					fmt.Sprintf("give --dest DIR, or --map %s=DIR", s.Info.Cwd)}
			}
			for _, r := range opts.Maps {
				if r.From == s.Info.Cwd && r.To != to {
					return nil, &HintError{usagef("sessions from several harness projects are selected (%s and %s)", r.To, to), "recover them one --session at a time"}
				}
			}
			opts.Maps = append(opts.Maps, recov.Rule{From: s.Info.Cwd, To: to})
		}
	}
	return &recoverRun{opts: opts, sel: sel, at: at, inPlace: inPlace}, nil
}

func (a *app) runRecover(ctx context.Context, o recoverOptions) error {
	if o.Interactive {
		return a.runReview(ctx, o)
	}
	r, err := a.setupRecover(ctx, o)
	if r == nil {
		return err
	}
	opts, sel, at := r.opts, r.sel, r.at
	if r.inPlace && !o.DryRun && !o.Yes && o.ToBranch == "" && o.Format != "patch" {
		// Writing where no flag named: show the plan, then ask.
		return a.recoverAsking(ctx, sel, opts, at, o.applyFlags)
	}
	if o.ToBranch != "" {
		return a.recoverToBranch(ctx, sel, opts, at, recov.BranchOptions{Name: o.ToBranch, Force: o.Force})
	}
	if o.Format == "patch" {
		return a.recoverPatch(ctx, sel, opts, at, o.against)
	}
	res, rerr := a.recoverOnce(ctx, sel, opts, at)
	if res == nil {
		return projectsHint(rerr)
	}
	return a.finish(ctx, res, rerr, o.DryRun, o.applyFlags)
}

const notWritableHint = "choose a --dest you can write, or make the directory writable; nothing was changed"

// projectsHint makes the refusal to mix projects in one destination a usage
// error with the way out.
func projectsHint(err error) error {
	var re *recov.RevError
	if errors.As(err, &re) {
		return &UsageError{err} // --base git:REV names nothing
	}
	var pe *recov.ProjectsError
	if errors.As(err, &pe) {
		return &HintError{&UsageError{err}, "add --dest-per-session to put each project in DIR/<session id>, or map each with --map CWD=DIR"}
	}
	return err
}

// finish validates an apply (when asked), prints its report and maps the
// outcome to an error.
func (a *app) finish(ctx context.Context, res *recov.Result, rerr error, dry bool, af applyFlags) error {
	if ctx.Err() != nil {
		res.Report.Interrupted = true
		if rerr == nil || errors.Is(rerr, context.Canceled) {
			rerr = errInterrupted
		}
	}
	if rerr != nil {
		res.Report.Error = rerr.Error()
	}
	var nw *recov.NotWritableError
	if errors.As(rerr, &nw) && !a.json {
		// Refused before the first write: no plan is shown for a write
		// that cannot happen.
		return &HintError{rerr, notWritableHint}
	}
	if dry && res.NotWritable != nil {
		a.log.Warn().Msgf("%s; a real run would fail and change nothing",
			printable(strings.TrimSuffix(res.NotWritable.Error(), "; nothing was written")))
	}
	var v *validation
	if rerr == nil && !dry && af.Validate != "" {
		if v = a.runValidation(ctx, af.Validate, af.ValidateRollback, res); v != nil {
			res.Report.Validation = v
		}
	}
	if a.json {
		if err := a.writeJSON(res.Report); err != nil {
			return err
		}
	} else {
		a.printRecover(res, dry)
		if v != nil {
			fmt.Fprintf(a.stdout, "validate: %s (in %s): exit %d\n", v.Command, v.Dir, v.ExitCode)
			if v.ExitCode != 0 && v.Output != "" {
				fmt.Fprintf(a.stdout, "%s\n", v.Output)
			}
		}
	}
	if rerr != nil {
		return rerr
	}
	if v != nil && v.ExitCode != 0 {
		if v.RolledBack {
			return fmt.Errorf("validation failed (exit %d): the apply was undone", v.ExitCode)
		}
		return fmt.Errorf("validation failed (exit %d): the files stay written (sandbox undo reverses them)", v.ExitCode)
	}
	if res.Partial() {
		s := res.Report.Summary
		var msg []string
		if n := s.Conflicts + s.OutsideRoot + s.Unrecoverable + s.Skipped; n > 0 {
			msg = append(msg, fmt.Sprintf("%d file(s) not recovered: %d conflict(s), %d outside the destination, %d unrecoverable, %d skipped",
				n, s.Conflicts, s.OutsideRoot, s.Unrecoverable, s.Skipped))
		}
		if s.LostCalls > 0 {
			msg = append(msg, fmt.Sprintf("%d call(s) on lines that could not be read may have changed files they do not name: what they changed is not recovered", s.LostCalls))
		}
		return &PartialError{strings.Join(msg, "; ")}
	}
	return nil
}

func emptyReport(dry bool) recov.Report {
	return recov.Report{Schema: recov.Schema, DryRun: dry, Sessions: []recov.SessionReport{}, Files: []recov.FileReport{}, Warnings: []manifest.Warning{}}
}

func (a *app) writeJSON(v any) error {
	a.wroteJSON = true
	return jsonreport.NewEncoder(a.stdout, "").Encode(v)
}

// recoverOnce recovers the selected sessions: a dry run reports the plan,
// a real run applies it.
func (a *app) recoverOnce(ctx context.Context, sel []parse.Selected, opts recov.Options, at atSpec) (*recov.Result, error) {
	var res *recov.Result
	var rerr error
	err := a.prepare(ctx, sel, opts, at, func(ctx context.Context, p *recov.Prepared) error {
		if opts.DryRun {
			res = p.Preview(ctx)
		} else {
			res, rerr = p.Apply(ctx)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, rerr
}

// recoverAsking recovers into the sessions' own directories, which no flag
// named: the plan is shown and written only once the user says yes. The
// transcripts are read and replayed once: what is asked about is what is
// written (and a file changed on the host in between is a conflict).
func (a *app) recoverAsking(ctx context.Context, sel []parse.Selected, opts recov.Options, at atSpec, af applyFlags) error {
	var res *recov.Result
	var rerr error
	dry := false
	err := a.prepare(ctx, sel, opts, at, func(ctx context.Context, p *recov.Prepared) error {
		preview := p.Preview(ctx)
		switch {
		case preview.NotWritable != nil:
			// Asking to write what cannot be written is no question.
			return &HintError{preview.NotWritable, notWritableHint}
		case preview.Report.Summary.Written == 0:
			res, dry = preview, true
			return nil
		}
		ok, err := a.confirm(ctx, preview)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("not confirmed: nothing written")
		}
		res, rerr = p.Apply(ctx)
		return nil
	})
	switch {
	case err != nil:
		return err
	case res == nil:
		return projectsHint(rerr)
	}
	return a.finish(ctx, res, rerr, dry, af)
}

// prepare reads the selected transcripts once and replays and plans them
// (recov.Prepare) for use, which previews or applies the recovery; then,
// unless use failed, the transcripts' warnings and the replay's are
// logged, before the report. A dry run reads the host through a file system that cannot
// write.
func (a *app) prepare(ctx context.Context, sel []parse.Selected, opts recov.Options, at atSpec, use func(context.Context, *recov.Prepared) error) error {
	sel = append([]parse.Selected(nil), sel...) // counted for this pass only
	bar := a.counting("reading transcripts", sel)
	// A recovery reports no transcript's sha256 (only a manifest records
	// it), and hashing costs as much CPU as parsing: leave it off.
	streams, err := a.openSelectedWith(ctx, sel, parse.StreamOptions{Turns: at.turn > 0 || at.timeline})
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	if err != nil {
		bar.End()
		return err
	}
	sources := make([]recov.Source, len(streams))
	for i, s := range streams {
		sources[i] = at.cut(s)
	}
	fsys := recov.NewOSFS()
	defer fsys.Close()
	var target recov.FS = fsys
	if opts.DryRun {
		target = &recov.DryRunFS{Read: fsys}
	}
	gctx, storeFailed, sources := guardSources(ctx, streams, sources)
	p, err := recov.Prepare(gctx, sources, target, opts)
	bar.End()
	if serr := storeFailed(); serr != nil {
		if p != nil {
			p.Close()
		}
		return serr
	}
	if err != nil {
		return err
	}
	defer p.Close()
	// Everything is read: the store's guard is released, and ^C alone
	// stops what comes next.
	if err := use(ctx, p); err != nil {
		return err
	}
	a.logStreams(ctx, streams)
	a.logWarnings(p.Warnings())
	return nil
}

// confirm shows the plan of an in-place recovery and asks to go on. Off a
// terminal there is no one to ask: --yes is needed.
func (a *app) confirm(ctx context.Context, res *recov.Result) (bool, error) {
	in, ok := a.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return false, &HintError{usagef("recovering into the sessions' own directories writes %d file(s) that no --dest or --map named", res.Report.Summary.Written),
			"check the plan with --dry-run, then add --yes (or give --dest DIR)"}
	}
	tw := tabwriter.NewWriter(a.stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tGRADE\tFILE")
	for _, p := range res.Plans {
		if p.Written() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Action, p.Grade(), printable(p.Target.Path()))
		}
	}
	tw.Flush()
	fmt.Fprintf(a.stderr, "Write %d file(s)? [y/N] ", res.Report.Summary.Written)
	// A ^C at the question answers it: nothing is written.
	line, _ := bufio.NewReader(interruptible(ctx, in)).ReadString('\n')
	if err := ctx.Err(); err != nil {
		return false, err
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes", nil
}

// redactedUsage is the help of --redacted, the same wherever files are
// written.
const redactedUsage = "files whose transcript was redacted (a placeholder such as [REDACTED] where a secret was), `MODE`: skip lists them, apply writes them placeholders and all"

func (a *app) validate(o recoverOptions) (recov.Options, error) {
	opts := recov.Options{JournalKey: a.journalKey, Dest: o.Dest, Base: o.Base, Repo: o.Repo, DryRun: o.DryRun, IncludeUnknown: o.IncludeUnknown,
		OnConflict: recov.ConflictPolicy(o.OnConflict), DestPerSession: o.DestPerSession, LockDir: a.stateRoot()}
	if rev, ok := strings.CutPrefix(o.Base, "git:"); ok {
		if rev == "" {
			return opts, usagef("--base git:REV needs a revision, e.g. git:HEAD~2")
		}
		opts.Base, opts.BaseRev = "", rev
	}
	switch o.Unknown {
	case "", "skip":
	case "apply":
		opts.IncludeUnknown = true
	default:
		return opts, usagef("--unknown %q: use skip or apply", o.Unknown)
	}
	switch o.Redacted {
	case "", "skip":
	case "apply":
		opts.Redacted = recov.RedactedApply
	default:
		return opts, usagef("--redacted %q: use skip or apply", o.Redacted)
	}
	switch o.Format {
	case "", "text":
	case "patch":
		opts.DryRun = true // a patch is printed, nothing written
	default:
		return opts, usagef("--format %q: use text or patch", o.Format)
	}
	if o.ToBranch != "" && (o.DryRun || o.Format == "patch") {
		return opts, usagef("--to-branch writes a branch: it does not go with --dry-run or --format patch")
	}
	if o.Force && o.ToBranch == "" {
		return opts, usagef("--force goes with --to-branch")
	}
	if len(o.Paths) > 0 {
		keep, err := recov.MatchPaths(o.Paths)
		if err != nil {
			return opts, usagef("%v", err)
		}
		opts.Filter = keep
	}
	if o.DestPerSession && o.Dest == "" {
		return opts, usagef("--dest-per-session needs --dest DIR")
	}
	if !o.explicit() && o.Since == "" && o.Until == "" && len(o.Sessions) == 0 && o.Cwd == "" {
		return opts, &HintError{usagef("which sessions? none named"),
			"select with --since 24h or --session ID (sandbox sessions lists them), or name files with --transcript / --from"}
	}
	switch opts.OnConflict {
	case recov.OnConflictSkip, recov.OnConflictBackup, recov.OnConflictOverwrite, recov.OnConflictMarkers:
	default:
		return opts, usagef("--on-conflict %q: use skip, backup, overwrite or markers", o.OnConflict)
	}
	for _, m := range o.Maps {
		r, err := parseMap(m)
		if err != nil {
			return opts, err
		}
		opts.Maps = append(opts.Maps, r)
	}
	if o.Repo != "" {
		if st, err := os.Stat(o.Repo); err != nil || !st.IsDir() {
			return opts, usagef("--repo %s: not a directory", o.Repo)
		}
	}
	for _, d := range append([]string{o.Dest, opts.Base}, mapTargets(opts.Maps)...) {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err == nil && !st.IsDir() {
			return opts, usagef("%s is not a directory", d)
		}
	}
	return opts, nil
}

func mapTargets(rules []recov.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.To)
	}
	return out
}

// logStreams reports each transcript's damage on stderr.
func (a *app) logStreams(ctx context.Context, streams []*parse.Stream) {
	for _, s := range streams {
		if err := s.Err(); err != nil && ctx.Err() == nil {
			a.log.Warn().Msgf("%s: could not be read to the end (%s); using everything before the damage", printable(s.Name()), printable(err.Error()))
		}
		a.logWarnings(s.Session().Warnings)
	}
}

func (a *app) logWarnings(ws []manifest.Warning) {
	const shown = 10
	for i, w := range ws {
		if i == shown && a.verbose == 0 {
			a.log.Warn().Msgf("%s: %d more warnings (-v shows them all; --json lists them)", printable(w.File), len(ws)-shown)
			return
		}
		a.log.Warn().Msg(printable(w.String()))
	}
}

func (a *app) printRecover(res *recov.Result, dry bool) {
	if dry {
		if !a.plansPrinted {
			color := a.color()
			for _, p := range res.Plans {
				recov.WritePlan(a.stdout, p, color)
			}
		}
	} else {
		tw := a.table()
		recov.WriteFiles(tw, res.Report)
		tw.Flush()
	}
	for _, j := range res.Report.Journals {
		fmt.Fprintf(a.stderr, "sandbox: journal %s (sandbox undo reverses it)\n", printable(j))
	}
	a.printBases(res.Report)
	recov.WriteSummary(a.stdout, res.Report.Summary, dry)
}

type flushWriter interface {
	io.Writer
	Flush() error
}

type plainTable struct{ io.Writer }

func (plainTable) Flush() error { return nil }

// table is an aligned table on a terminal, tab-separated when piped.
func (a *app) table() flushWriter {
	if isTerminal(a.stdout) {
		return tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	}
	return plainTable{a.stdout}
}

// absPath makes a flag's directory absolute.
func absPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return abs, nil
}

func parseMap(m string) (recov.Rule, error) {
	from, to, ok := strings.Cut(m, "=")
	if !ok || from == "" || to == "" {
		return recov.Rule{}, usagef("--map %q: want FROM=TO, e.g. /workspace=./proj", m)
	}
	return recov.Rule{From: from, To: to}, nil
}

// printBases says on stderr which start commit each session's files began
// from, or why none was found.
func (a *app) printBases(r recov.Report) {
	if a.quiet {
		return
	}
	for _, s := range r.Sessions {
		switch {
		case s.Base != "":
			fmt.Fprintf(a.stderr, "sandbox: session %s starts from %s (%s)\n", printable(s.ID), s.Base, printable(s.BaseNote))
		case s.BaseNote != "" && s.GitCommit != "" && r.StartWouldHelp():
			// A recorded commit not found is worth a line when files lack
			// a start it would give; a branch alone (every Claude Code
			// session has one) is said in --json only.
			fmt.Fprintf(a.stderr, "sandbox: session %s: %s; its start commit %.12s would give the files it began from (--repo DIR: a clone holding it)\n",
				printable(s.ID), printable(s.BaseNote), printable(s.GitCommit))
		case s.BaseNote != "" && s.GitCommit != "":
			a.log.Info().Msgf("session %s: %s", printable(s.ID), printable(s.BaseNote))
		}
	}
}
