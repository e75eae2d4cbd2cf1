package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/internal/progress"
	"github.com/agentsandbox/sandbox/manifest"
	recov "github.com/agentsandbox/sandbox/recover"
)

type applyOptions struct {
	Dest           string
	Maps           []string
	DryRun         bool
	OnConflict     string
	Unknown        string
	Redacted       string
	DestPerSession bool
	applyFlags
}

func (a *app) applyCommand() *cobra.Command {
	var o applyOptions
	c := &cobra.Command{
		Use:   "apply MANIFEST (--dest DIR | --map FROM=TO...)",
		Short: "Write the files of an export manifest onto the host",
		Long: `sandbox apply is the plan and apply of recover, from an export manifest (sandbox export)
or the simple form an agent writes inside a sandbox ({"session", "exports":
[{"path", "content", "type", "created"}]}) instead of from transcripts: every
file is compared with the host copy, merged three ways when the host moved on,
and written atomically, with a journal for sandbox undo. MANIFEST may be - for
standard input. The manifest is read one file at a time, so one of any size
applies in bounded memory.

--dest re-roots every session's working directory onto DIR (in the simple form,
relative paths are relative to DIR); --map FROM=TO maps prefixes. --on-conflict
is as for recover, and markers writes a conflicted file with <<<<<<< blocks.
Files graded redacted (their content holds placeholders where secrets were, from
a redacted transcript or a --redact export) are listed and not written unless
--redacted apply.`,
		Example: `  sandbox apply session.manifest.json --dest ./proj --dry-run
  sandbox apply /tmp/sandbox-exports.json --dest ./out --validate 'go build ./...'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runApply(cmd.Context(), args[0], o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Dest, "dest", "", "re-root every session's working directory onto `DIR`")
	f.StringArrayVar(&o.Maps, "map", nil, "map an agent path prefix onto a host directory, as `FROM=TO` (repeatable)")
	f.BoolVarP(&o.DryRun, "dry-run", "n", false, "show each file's action and diff; write nothing")
	f.StringVar(&o.OnConflict, "on-conflict", "skip", "what to do with a conflict (`MODE`): skip, backup, overwrite or markers")
	f.StringVar(&o.Unknown, "unknown", "skip", "calls whose outcome is unknown (they never got a result), `MODE`: skip lists their files, apply replays them")
	f.StringVar(&o.Redacted, "redacted", "skip", redactedUsage)
	f.BoolVar(&o.DestPerSession, "dest-per-session", false, "with --dest, put each project (sessions of one working directory) in its own folder `DIR/<session id>`")
	o.applyFlags.register(f)
	return c
}

func (a *app) runApply(ctx context.Context, name string, o applyOptions) error {
	ro := recoverOptions{Dest: o.Dest, Maps: o.Maps, DryRun: o.DryRun, OnConflict: o.OnConflict, Unknown: o.Unknown, Redacted: o.Redacted, DestPerSession: o.DestPerSession}
	ro.Transcripts = []string{name} // only to pass validate's "something is named" check
	opts, err := a.validate(ro)
	if err != nil {
		return err
	}
	if opts.Dest == "" && len(opts.Maps) == 0 {
		return &HintError{usagef("nowhere to write: give --dest DIR or --map FROM=TO"), "--dest ./proj puts the session's working directory at ./proj"}
	}
	in := interruptible(ctx, a.stdin)
	var bar *progress.Bar
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
		if st, err := f.Stat(); err == nil {
			bar = a.startProgress("reading the manifest", st.Size())
			in = &progress.Reader{R: f, P: bar}
		}
	}
	defer bar.End()
	fsys := recov.NewOSFS()
	defer fsys.Close()
	var target recov.FS = fsys
	if o.DryRun {
		target = &recov.DryRunFS{Read: fsys}
	}
	color := a.color()
	each := func(p *recov.FilePlan) {
		if o.DryRun && !a.json {
			recov.WritePlan(a.stdout, p, color)
		}
	}
	res, rerr := recov.ApplyManifest(ctx, in, target, opts, each)
	if res == nil {
		return projectsHint(rerr)
	}
	var re *manifest.ReadError
	if errors.As(rerr, &re) && name != "-" {
		// Where, as an editor says it: the file, its line and column.
		line, col := lineCol(name, re.Offset)
		return fmt.Errorf("%s:%d:%d: not a manifest this sandbox can read: %w", name, line, col, re.Err)
	}
	if rerr != nil && len(res.Report.Files) == 0 && len(res.Report.Sessions) == 0 {
		return fmt.Errorf("%s: %w", name, rerr)
	}
	if rerr != nil && res.Report.Error == "" {
		rerr = fmt.Errorf("%s: %w", name, rerr)
	}
	a.plansPrinted = o.DryRun
	a.logWarnings(res.ReplayWarnings())
	return a.finish(ctx, res, rerr, o.DryRun, o.applyFlags)
}

// lineCol is the line and column (1-based, in bytes) of a byte offset in a
// file, or 0, 0 when the file cannot be read again.
func lineCol(name string, off int64) (int, int) {
	f, err := os.Open(name)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, off), 64<<10)
	line, col := 1, 1
	for {
		b, err := br.ReadByte()
		if err != nil {
			return line, col
		}
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
}
