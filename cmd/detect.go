package cmd

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/harness"
)

func (a *app) detectCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "detect",
		Short: "Say whether sandbox runs inside a sandbox, and which",
		Long: `sandbox detect looks for the marks sandboxes leave: DOCKER_SANDBOX and SANDBOX_SESSION
(set by sandbox run), CODEX_SANDBOX_MODE (Codex's own sandbox), /.dockerenv and
/run/.containerenv, container cgroups (docker, podman, containerd, kubepods,
lxc), and bubblewrap (a process 1 that is bwrap, or the container=bwrap mark).
It prints what it found and exits 0 inside a sandbox, 1 outside; an agent's
script can branch on it before sandbox export --add.`,
		Example: `  sandbox detect && sandbox export --add dist/report.html`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			d := harness.Detect(a.env.Get, os.ReadFile)
			if a.json {
				if err := a.writeJSON(d); err != nil {
					return err
				}
			} else if d.Inside {
				fmt.Fprintf(a.stdout, "inside a sandbox: %s (%s)\n", d.Kind, strings.Join(d.Evidence, "; "))
			} else {
				fmt.Fprintln(a.stdout, "not inside a sandbox")
			}
			if !d.Inside {
				return &silentExit{1}
			}
			return nil
		},
	}
}

// silentExit is an exit status that is not an error to report.
type silentExit struct{ code int }

func (e *silentExit) Error() string { return fmt.Sprintf("exit %d", e.code) }
