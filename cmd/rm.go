package cmd

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentsandbox/sandbox/harness"
)

// rmResult is what rm did (or would do) to one session.
type rmResult struct {
	Session string `json:"session"`
	Action  string `json:"action"` // remove, purge, stop-and-remove, none
	Archive string `json:"archive,omitempty"`
	Files   int    `json:"files"`
	Bytes   int64  `json:"bytes"`
	Error   string `json:"error,omitempty"`
}

type rmOptions struct {
	force, dryRun, purge, yes bool
}

func (a *app) rmCommand() *cobra.Command {
	var o rmOptions
	c := &cobra.Command{
		Use:   "rm SESSION... [-f] [--dry-run] [--purge [--yes]]",
		Short: "Remove sessions, keeping each as a restorable archive unless --purge",
		Long: `sandbox rm removes sessions: their record, workspace (the agent's transcripts
included), logs and manifest, and any container left behind. Before a
session is removed it is written whole to
$SANDBOX_HOME/archive/<id>-<time>.tar.gz, a snapshot that sandbox restore
brings back, so rm never loses the transcripts this tool exists to save;
--purge removes for good (asking first on a terminal; --yes to skip the
question, required when not on one).

A running session is refused unless -f, which stops it first (TERM, then
KILL after 10s). rm removes every session it can and reports each it could
not; --dry-run says what it would do, with sizes, and does nothing.`,
		Example: `  sandbox rm fix-tests
  sandbox rm --dry-run old-1 old-2
  sandbox rm -f stuck
  sandbox rm --purge --yes scratch && ls $SANDBOX_HOME/archive`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.purge && !o.yes && !o.dryRun {
				if f, ok := a.stdin.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
					return usagef("--purge removes sessions for good: add --yes to confirm (stdin is not a terminal to ask)")
				}
				fmt.Fprintf(a.stderr, "remove %s and %s for good, without an archive? [y/N] ", strings.Join(args, ", "), map[bool]string{true: "its workspace", false: "their workspaces"}[len(args) == 1])
				line, err := bufio.NewReader(interruptible(cmd.Context(), a.stdin)).ReadString('\n')
				if cmd.Context().Err() != nil {
					return cmd.Context().Err() // ^C at the question: nothing removed
				}
				_ = err
				if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
					return fmt.Errorf("nothing removed")
				}
			}
			st := a.store()
			var res []rmResult
			failed := 0
			for _, n := range args {
				if err := cmd.Context().Err(); err != nil {
					return err // interrupted: the sessions not reached stay
				}
				r := a.rmOne(cmd, st, n, o)
				if r.Error != "" {
					failed++
				}
				res = append(res, r)
			}
			if a.json {
				if err := a.writeJSON(map[string]any{"schema": "sandbox.rm/v1", "dry_run": o.dryRun, "sessions": res}); err != nil {
					return err
				}
			} else {
				for _, r := range res {
					a.sayRm(r, o)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d session%s not removed", failed, len(args), plural(len(args)))
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVarP(&o.force, "force", "f", false, "stop a running session first")
	f.BoolVar(&o.dryRun, "dry-run", false, "say what would be removed, remove nothing")
	f.BoolVar(&o.purge, "purge", false, "remove for good, without keeping an archive")
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask before --purge")
	return c
}

// rmOne removes one session, or says why not.
func (a *app) rmOne(cmd *cobra.Command, st *harness.Store, name string, o rmOptions) rmResult {
	r := rmResult{Session: name, Action: "none"}
	if err := harness.ValidName(name); err != nil {
		r.Error = err.Error()
		return r
	}
	s, err := st.Load(name)
	if err != nil {
		r.Error = strings.TrimPrefix(err.Error(), "open ")
		return r
	}
	r.Session = s.ID
	ctx := cmd.Context()
	st.Check(ctx, s)
	r.Files, r.Bytes = st.Usage(s.ID)
	r.Action = "remove"
	if o.purge {
		r.Action = "purge"
	} else {
		r.Archive = st.ArchivePathFree(s.ID, now())
	}
	if st.Running(s) {
		if !o.force {
			r.Action, r.Archive = "none", ""
			r.Error = fmt.Sprintf("session %s is running; stop it first (sandbox stop %s) or use rm -f", s.ID, s.ID)
			return r
		}
		r.Action = "stop-and-" + r.Action
		if o.dryRun {
			return r
		}
		if s, err = st.Stop(ctx, s, harness.StopGrace); err != nil {
			r.Error = "stopping it: " + err.Error()
			return r
		}
	}
	if o.dryRun {
		return r
	}
	if r.Archive != "" {
		if _, err := st.ArchiveSession(ctx, s.ID, r.Archive); err != nil {
			// Without its archive the session is not removed.
			r.Error = "archiving it: " + err.Error()
			r.Archive = ""
			return r
		}
	}
	if err := st.Remove(ctx, s); err != nil {
		r.Error = err.Error()
	}
	return r
}

func (a *app) sayRm(r rmResult, o rmOptions) {
	what := fmt.Sprintf("session %s (%d file%s, %s)", r.Session, r.Files, plural(r.Files), humanBytes(r.Bytes))
	switch {
	case r.Error != "":
		fmt.Fprintf(a.stderr, "sandbox: error: %s: %s\n", printable(r.Session), printable(r.Error))
	case o.dryRun && r.Archive != "":
		fmt.Fprintf(a.stdout, "would %s %s, keeping it in %s\n", strings.ReplaceAll(r.Action, "-", " "), what, r.Archive)
	case o.dryRun:
		fmt.Fprintf(a.stdout, "would %s %s for good\n", strings.ReplaceAll(strings.ReplaceAll(r.Action, "purge", "remove"), "-", " "), what)
	case r.Archive != "":
		fmt.Fprintf(a.stdout, "removed %s; kept in %s (sandbox restore brings it back)\n", what, r.Archive)
	default:
		fmt.Fprintf(a.stdout, "removed %s for good\n", what)
	}
}

// humanBytes writes a size the way ls -h does.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
