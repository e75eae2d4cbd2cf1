package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/discover"
	recov "github.com/agentsandbox/sandbox/recover"
)

type exportOptions struct {
	selectOptions
	Output         string
	Redact         bool
	Base           string
	Repo           string
	Maps           []string
	IncludeUnknown bool
	Add            bool
}

func (a *app) exportCommand() *cobra.Command {
	var o exportOptions
	c := &cobra.Command{
		Use:   "export [selection flags] [-o FILE] [--redact] | export --add PATH...",
		Short: "Write the export manifest of sessions, or add files to the in-sandbox manifest",
		Long: `sandbox export writes the export manifest (schema sandbox.manifest/v1, docs/manifest.md)
of the sessions the selection flags pick, as recover would find them: every
session with its transcript's sha256, every file operation in replay order
with its outcome, evidence and provenance, and every file's reconstruction
(start and final sha256 and content, confidence, drift). The same input gives
byte-identical output. sandbox apply replays it anywhere.

Files the transcripts hold no evidence of start from the host copy: --base DIR
re-roots the sessions' directories for that, else the directories themselves
are read where they exist here.

--redact replaces likely secrets (private keys, common token formats, .env
assignments to secret-sounding names) with [REDACTED:kind] placeholders, lists
what it replaced on stderr and in the manifest, and marks the files whose
content changed so that apply never writes them.

With --add, export runs inside a sandbox instead: it appends the named files to
the simple-form manifest named by $SANDBOX_EXPORTS (default
/tmp/sandbox-exports.json), under a lock, so several processes can add at once.`,
		Example: `  sandbox export --since 24h -o session.manifest.json
  sandbox export --session 019c7bdb --redact -o incident.json
  sandbox export --add build/report.txt dist/app.tar.gz`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Add {
				return a.runExportAdd(args)
			}
			if len(args) > 0 {
				return usagef("unexpected arguments %q (files are added with --add)", args)
			}
			return a.runExport(cmd.Context(), o)
		},
	}
	f := c.Flags()
	o.selectOptions.register(f)
	f.StringVarP(&o.Output, "output", "o", "", "write the manifest to `FILE` (default, or -: standard output); it is created only once complete")
	f.BoolVar(&o.Redact, "redact", false, "replace likely secrets with placeholders, and list them")
	f.StringVar(&o.Base, "base", "", "read host copies from `DIR` (the sessions' directories re-rooted there), or the files' start from a revision's tree as git:REV")
	f.StringVar(&o.Repo, "repo", "", "look for the sessions' start commit in the git repository at `DIR` (default: the one holding the host copies)")
	f.StringArrayVar(&o.Maps, "map", nil, "read host copies through a `FROM=TO` mapping (repeatable)")
	f.BoolVar(&o.IncludeUnknown, "include-unknown", false, "also replay calls whose outcome is unknown")
	f.BoolVar(&o.Add, "add", false, "add the named files to $SANDBOX_EXPORTS instead (inside a sandbox)")
	return c
}

func (a *app) runExport(ctx context.Context, o exportOptions) error {
	if !o.explicit() && o.Since == "" && o.Until == "" && len(o.Sessions) == 0 && o.Cwd == "" {
		return &HintError{usagef("which sessions? none named"), "select with --since 24h or --session ID, or name files with --transcript / --from"}
	}
	if o.Output == "-" {
		o.Output = "" // -o -: standard output, as the default
	}
	opts := recov.Options{Base: o.Base, Repo: o.Repo, IncludeUnknown: o.IncludeUnknown}
	if rev, ok := strings.CutPrefix(o.Base, "git:"); ok {
		if rev == "" {
			return usagef("--base git:REV needs a revision, e.g. git:HEAD~2")
		}
		opts.Base, opts.BaseRev = "", rev
	}
	for _, m := range o.Maps {
		r, err := parseMap(m)
		if err != nil {
			return err
		}
		opts.Maps = append(opts.Maps, r)
	}
	sel, _, err := a.selectSessions(ctx, o.selectOptions, nil, true)
	if err != nil {
		return err
	}
	if opts.Base == "" {
		// Host copies come from where the sessions ran, if that is here.
		for _, s := range sel {
			if to, ok := a.hostDir(s); ok {
				opts.Maps = append(opts.Maps, recov.Rule{From: s.Info.Cwd, To: to})
			}
		}
	}
	bar := a.counting("reading transcripts", sel)
	defer bar.End()
	streams, err := a.openSelected(ctx, sel)
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
		sources[i] = s
	}
	// Write to a temporary file and rename it into place, so a failure leaves no partial manifest.
	var out io.Writer = a.stdout
	var tmp *os.File
	if o.Output != "" {
		tmp, err = createBeside(o.Output)
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		out = tmp
	}
	var red *manifest.Redactor
	if o.Redact {
		red = manifest.NewRedactor()
	}
	fsys := recov.NewOSFS()
	defer fsys.Close()
	gctx, storeFailed, sources := guardSources(ctx, streams, sources)
	st, err := recov.Export(gctx, sources, &recov.DryRunFS{Read: fsys}, opts, manifest.NewWriter(out), red)
	bar.End()
	if serr := storeFailed(); serr != nil {
		err = serr // the manifest of part of a transcript is never put in place
	} else if err == nil && ctx.Err() != nil {
		// Cut short, the streams ended early: a manifest of part of the
		// sessions that looks whole is never put in place.
		err = ctx.Err()
	}
	a.logStreams(ctx, streams)
	if err != nil {
		if tmp != nil {
			tmp.Close()
		}
		return projectsHint(err)
	}
	if red != nil {
		for _, r := range red.Redactions() {
			fmt.Fprintf(a.stderr, "sandbox: redacted %d %s in %s\n", r.Count, r.Kind, r.Where)
		}
	}
	if tmp != nil {
		if err := tmp.Sync(); err != nil {
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), o.Output); err != nil {
			return err
		}
	}
	a.log.Info().Msgf("manifest written: %d ops", st.Ops)
	return nil
}

// openSelected opens the selected sessions and their subagents as streams.
func (a *app) openSelected(ctx context.Context, sel []parse.Selected) ([]*parse.Stream, error) {
	return a.openSelectedWith(ctx, sel, parse.StreamOptions{Hash: true})
}

// openSelectedTurns is openSelected, keeping the user's prompts with turns.
func (a *app) openSelectedTurns(ctx context.Context, sel []parse.Selected, turns bool) ([]*parse.Stream, error) {
	return a.openSelectedWith(ctx, sel, parse.StreamOptions{Turns: turns, Hash: true})
}

// openSelectedWith is openSelected with the streams' options.
func (a *app) openSelectedWith(ctx context.Context, sel []parse.Selected, o parse.StreamOptions) ([]*parse.Stream, error) {
	cands := make([]discover.Candidate, 0, len(sel))
	for _, s := range sel {
		cands = append(cands, s.Candidate)
	}
	cands = append(cands, parse.CompanionsOf(sel)...)
	var streams []*parse.Stream
	for i := range cands {
		s, err := parse.OpenCandidateWith(ctx, &cands[i], o)
		if err != nil {
			return streams, fmt.Errorf("reading transcript: %w", err)
		}
		streams = append(streams, s)
	}
	return streams, nil
}
