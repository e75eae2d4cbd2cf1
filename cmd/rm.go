package cmd

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/bytesize"
	"github.com/agentsandbox/sandbox/internal/plural"
)

type rmOptions struct {
	harness.RemoveOptions
	yes bool
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
			if o.Purge && !o.yes && !o.DryRun {
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
			var res []harness.Removal
			failed := 0
			for _, n := range args {
				if err := cmd.Context().Err(); err != nil {
					return err // interrupted: the sessions not reached stay
				}
				r := st.RemoveSession(cmd.Context(), n, o.RemoveOptions, a.now())
				if r.Error != "" {
					failed++
				}
				res = append(res, r)
			}
			if a.json {
				if err := a.writeJSON(map[string]any{"schema": "sandbox.rm/v1", "dry_run": o.DryRun, "sessions": res}); err != nil {
					return err
				}
			} else {
				for _, r := range res {
					a.sayRm(r, o)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d session%s not removed", failed, len(args), plural.S(len(args)))
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVarP(&o.Force, "force", "f", false, "stop a running session first")
	f.BoolVar(&o.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	f.BoolVar(&o.Purge, "purge", false, "remove for good, without keeping an archive")
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask before --purge")
	return c
}

func (a *app) sayRm(r harness.Removal, o rmOptions) {
	what := fmt.Sprintf("session %s (%d file%s, %s)", r.Session, r.Files, plural.S(r.Files), bytesize.Human(r.Bytes))
	switch {
	case r.Error != "":
		fmt.Fprintf(a.stderr, "sandbox: error: %s: %s\n", printable(r.Session), printable(r.Error))
	case o.DryRun && r.Archive != "":
		fmt.Fprintf(a.stdout, "would %s %s, keeping it in %s\n", strings.ReplaceAll(r.Action, "-", " "), what, r.Archive)
	case o.DryRun:
		fmt.Fprintf(a.stdout, "would %s %s for good\n", strings.ReplaceAll(strings.ReplaceAll(r.Action, "purge", "remove"), "-", " "), what)
	case r.Archive != "":
		fmt.Fprintf(a.stdout, "removed %s; kept in %s (sandbox restore brings it back)\n", what, r.Archive)
	default:
		fmt.Fprintf(a.stdout, "removed %s for good\n", what)
	}
}
