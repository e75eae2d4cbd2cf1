package cmd

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentsandbox/sandbox/harness"
)

func (a *app) execCommand() *cobra.Command {
	var env []string
	c := &cobra.Command{
		Use:   "exec SESSION [--env K=V]... -- CMD...",
		Short: "Run a command inside a running session, beside its agent",
		Long: `sandbox exec runs a command in a running session's sandbox, as the agent sees it:
in its container (docker or podman exec), in its namespaces (bwrap, through
nsenter), or for local in its project with its HOME. The command runs as
you, in /workspace, with HOME=/home/sandbox and the session's variables; it
gets a terminal when yours is one. Start and end are recorded in the
runtime log (exec_started, exec_ended).`,
		Example: `  sandbox exec fix-tests -- ls -la /workspace
  sandbox exec fix-tests -- sh`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, s, err := a.loadSession(args[0])
			if err != nil {
				return err
			}
			command := args[1:]
			if command[0] == "--" {
				command = command[1:]
			}
			if len(command) == 0 {
				return usagef("no command to run: give it after --")
			}
			o := &harness.ExecOptions{Command: command, Env: env, Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr}
			if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) && isTerminal(a.stdout) {
				o.TTY = true
			}
			for _, e := range env {
				if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
					return usagef("--env %q: want K=V", e)
				}
			}
			code, err := st.Exec(cmd.Context(), s, o)
			if err != nil {
				return err
			}
			if code != 0 {
				return &silentExit{code}
			}
			return nil
		},
	}
	c.Flags().SetInterspersed(false)
	c.Flags().StringArrayVar(&env, "env", nil, "set `K=V` for the command (repeatable)")
	return c
}
