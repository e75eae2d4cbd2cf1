package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/vault"
)

// selectOptions are the source and selection flags of recover and sessions.
type selectOptions struct {
	Transcripts []string
	From        []string
	HomeCodex   string
	HomeClaude  string
	Since       string
	Until       string
	Sessions    []string
	Cwd         string
	Agent       string
	S3Endpoint  string
	Version     string
}

func (o *selectOptions) register(f *pflag.FlagSet) {
	f.StringArrayVarP(&o.Transcripts, "transcript", "t", nil, "a transcript `FILE` (repeatable; - for standard input; .gz and .zst are read transparently)")
	f.StringArrayVar(&o.From, "from", nil, "read transcripts from `PATH`: a directory tree, a .zip, .tar, .tar.gz/.tgz, a file, -, s3://BUCKET/PREFIX/ or s3://BUCKET/KEY, or a vault (vault for the default one, its folder, or its s3:// prefix) (repeatable; nothing is extracted)")
	f.StringVar(&o.Version, "version", "", "from a vault, read version `N|TIME` of each transcript: the Nth the vault kept (from 1), or the longest it held at TIME (default: the longest)")
	f.StringVar(&o.S3Endpoint, "s3-endpoint", "", "the S3-compatible endpoint `URL` for s3:// sources, such as http://127.0.0.1:9000 for MinIO (default $AWS_ENDPOINT_URL_S3 or AWS's; path-style addressing)")
	f.StringVar(&o.HomeCodex, "home-codex", "", "the Codex home `DIR` to look in (default $CODEX_HOME or ~/.codex)")
	f.StringVar(&o.HomeClaude, "home-claude", "", "the Claude Code home `DIR` to look in (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.StringVar(&o.Since, "since", "", "sessions active since `TIME`: 24h, \"24h ago\", 90m, 3d, 1w, 2026-11-20, or RFC 3339")
	f.StringVar(&o.Until, "until", "", "sessions active until `TIME` (same forms as --since)")
	f.StringArrayVar(&o.Sessions, "session", nil, "sessions whose id (or harness name) starts with `PREFIX` (repeatable)")
	f.StringVar(&o.Cwd, "cwd", "", "sessions whose working directory is `DIR` or below")
	f.StringVar(&o.Agent, "agent", "", "only sessions of this `AGENT`: "+agent.OrList(agentNames()))
}

// filter is the selection's filter, its times read at now.
func (o selectOptions) filter(now time.Time) (parse.Filter, error) {
	f := parse.Filter{Prefixes: o.Sessions, Cwd: o.Cwd, Agent: manifest.Agent(o.Agent)}
	if o.Version != "" && !o.explicit() {
		return f, usagef("--version reads a vault: name it with --from vault (or its folder or s3:// prefix)")
	}
	if o.Agent != "" && !knownAgent(o.Agent) {
		return f, usagef("--agent %q: use %s", o.Agent, agent.OrList(agentNames()))
	}
	t := now
	var err error
	if o.Since != "" {
		if f.Window.Since, err = parse.ParseTime(o.Since, t); err != nil {
			return f, usagef("--since: %v", err)
		}
	}
	if o.Until != "" {
		if f.Window.Until, err = parse.ParseTime(o.Until, t); err != nil {
			return f, usagef("--until: %v", err)
		}
	}
	if !f.Window.Since.IsZero() && !f.Window.Until.IsZero() && f.Window.Until.Before(f.Window.Since) {
		return f, usagef("--until is before --since")
	}
	if o.Cwd != "" {
		abs, err := absPath(o.Cwd)
		if err != nil {
			return f, err
		}
		f.Cwd = abs
	}
	return f, nil
}

func (o selectOptions) explicit() bool { return len(o.Transcripts)+len(o.From) > 0 }

// selectSessions finds the transcripts the flags name (or those in the
// default homes) and selects the sessions that match.
func (a *app) selectSessions(ctx context.Context, o selectOptions, fsys discover.FS, probe bool) ([]parse.Selected, []string, error) {
	filter, err := o.filter(a.now())
	if err != nil {
		return nil, nil, err
	}
	filter.Probe = probe
	// The window lets a source leave out by its metadata what cannot be in
	// it (an object last modified before --since) without reading it.
	version, err := vault.ParseSelector(o.Version, a.now())
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	finder := &discover.Finder{FS: fsys, Window: filter.Window, Spools: a.spools,
		S3:     &discover.S3{Options: objstore.Options{Endpoint: o.S3Endpoint}, Context: ctx},
		Vaults: vault.Reader(ctx, a.env, vault.Options{S3: objstore.Options{Endpoint: o.S3Endpoint}}, version)}

	var cands []discover.Candidate
	if o.explicit() {
		for _, n := range o.Transcripts {
			// A tree is --from's: -t names one transcript, and a
			// directory scanned in its place would hide the mistake.
			if st, err := os.Stat(n); err == nil && st.IsDir() {
				return nil, nil, &HintError{usagef("--transcript %s is a directory", n), "--from " + n + " reads every transcript under it"}
			}
		}
		for _, n := range append(append([]string{}, o.Transcripts...), o.From...) {
			if objstore.IsURL(n) {
				if _, err := objstore.ParseURL(n); err != nil {
					return nil, nil, usagef("%v", err)
				}
			}
			c, skipped, err := finder.From(n, interruptible(ctx, a.stdin))
			var pe *fs.PathError
			var oe *objstore.Error
			switch {
			case errors.As(err, &oe):
				// It names its URL already.
				return nil, finder.Looked, s3Hint(err)
			case errors.As(err, &pe) && pe.Path == n:
				// "stat x: no such file…" says Go's call, not the problem.
				return nil, finder.Looked, fmt.Errorf("%s: %w", n, pe.Err)
			case err != nil:
				return nil, finder.Looked, fmt.Errorf("reading %s: %w", n, err)
			}
			for _, s := range skipped {
				a.log.Warn().Msgf("%s: %s", printable(s.Name), s.Why)
			}
			cands = append(cands, c...)
		}
	} else {
		a.pullSessions(ctx, o.Sessions)
		homes := discover.DefaultHomes(a.env)
		if o.HomeCodex != "" {
			homes.Agents[manifest.AgentCodex] = o.HomeCodex
		}
		if o.HomeClaude != "" {
			homes.Agents[manifest.AgentClaude] = o.HomeClaude
		}
		cands = finder.Homes(homes, filter.Window)
		for _, p := range finder.Problems {
			a.log.Warn().Msgf("%s: %s", printable(p.Name), p.Why)
		}
	}
	// What an agent keeps of a session in its home, beside the transcript
	// (Claude Code's file-history backups), is read from this
	// environment's homes.
	envHomes := discover.DefaultHomes(a.env).Agents
	for i := range cands {
		cands[i].Homes = envHomes
	}
	a.log.Debug().Int("candidates", len(cands)).Msg("transcripts found")
	sel, skipped, err := parse.Select(cands, filter, finder.Looked)
	// A file or standard input named on its own (not a tree or an archive,
	// whose members go by other names) that is no transcript is the error:
	// nothing found there would otherwise pass for nothing to do.
	named := map[string]bool{}
	for _, n := range append(append([]string{}, o.Transcripts...), o.From...) {
		named[n] = true
		if n == "-" {
			named[discover.StdinName] = true
		}
	}
	for _, e := range skipped {
		var se *parse.SkipError
		errors.As(e, &se)
		var oe *objstore.Error
		switch {
		case errors.As(e, &oe):
			// The store failed (or an object changed) while it was read:
			// an answer from part of the source would pass for all of it.
			return nil, finder.Looked, s3Hint(oe)
		case se != nil && named[se.Name]:
			// A file named on its own that cannot be read is the error.
			if errors.Is(e, parse.ErrUnknownFormat) {
				return nil, finder.Looked, &HintError{e, "sandbox reads " + agentSessions() + "; transcripts plain, .gz or .zst"}
			}
			return nil, finder.Looked, fmt.Errorf("reading transcript: %w", e)
		case errors.Is(e, parse.ErrUnknownFormat):
			a.log.Debug().Err(e).Msg("not a transcript")
		default:
			a.log.Warn().Msgf("skipped: %s", printable(e.Error()))
		}
	}
	if err != nil {
		var nf *parse.NotFoundError
		if errors.As(err, &nf) {
			return nil, finder.Looked, &HintError{err, "sandbox sessions lists what there is; --from or --home-codex/--home-claude look elsewhere"}
		}
		return nil, finder.Looked, err
	}
	return sel, finder.Looked, nil
}

// s3Hint adds the next step to an object storage error, where there is one.
func s3Hint(err error) error {
	switch {
	case errors.Is(err, objstore.ErrUnreachable):
		return &HintError{err, "is the store running? --s3-endpoint or AWS_ENDPOINT_URL_S3 says where it is"}
	case errors.Is(err, objstore.ErrDenied):
		return &HintError{err, "the credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or ~/.aws"}
	case errors.Is(err, objstore.ErrChanged):
		return &HintError{err, "nothing was taken from it; run the command again to read the new version"}
	}
	return err
}
