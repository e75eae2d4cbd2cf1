package cmd

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/agent"
)

// Completion that knows the data: the fixed values of flags, the harness's
// session names, and the agents' sessions by id with their agent, start
// and working directory as descriptions.

// fixedValues are the values of the flags that take one of a few words.
var fixedValues = map[string][]string{
	"on-conflict": {"skip\tleave the host's file, report the conflict", "backup\tkeep the host's file as FILE.orig", "overwrite\twrite the recovered file", "markers\tconflict markers in the file"},
	"unknown":     {"skip\tlist their files, write nothing", "apply\treplay them"},
	"redacted":    {"skip\tlist them, write nothing", "apply\twrite them, placeholders and all"},
	"runtime":     {"docker", "podman", "bwrap", "local\tno isolation"},
	"network":     {"none", "host"},
	"agent":       agentNames(),
}

// commandValues are the fixed values of a flag of one command (where the
// same flag name means different things elsewhere).
var commandValues = map[string]map[string][]string{
	"inspect": {"format": {"text", "json", "md\tGitHub-flavoured Markdown"}},
	"recover": {"format": {"text", "patch\ta git apply / git am-able patch"}},
	"diff":    {"against": {"host\tthe files now", "start\tas the session started"}},
	"ps":      {"filter": psFilterCompletions()},
}

// psFilterCompletions are ps --filter's keys with their fixed values.
func psFilterCompletions() []string {
	out := []string{}
	for _, s := range []string{"created", "running", "exited", "killed", "oom", "dropped", "error"} {
		out = append(out, "state="+s)
	}
	for _, r := range []string{"docker", "podman", "bwrap", "local"} {
		out = append(out, "runtime="+r)
	}
	for _, a := range agent.SortedNames() {
		out = append(out, "agent="+a)
	}
	return append(out, "name=", "image=", "project=")
}

// runningOnly are the commands whose argument must be a running session.
var runningOnly = map[string]bool{"stop": true, "exec": true}

// harnessArgs are the commands whose arguments are harness session names.
var harnessArgs = map[string]bool{"logs": true, "stop": true, "rm": true, "snapshot": true, "exec": true}

// registerCompletions walks the commands once the tree is built.
func (a *app) registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, values := range fixedValues {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
			}
		}
		for name, values := range commandValues[c.Name()] {
			if c.Flags().Lookup(name) != nil {
				dir := cobra.ShellCompDirectiveNoFileComp
				if name == "filter" {
					dir |= cobra.ShellCompDirectiveNoSpace // name=… goes on
				}
				_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, dir))
			}
		}
		if c.Flags().Lookup("session") != nil {
			_ = c.RegisterFlagCompletionFunc("session", a.completeSessions)
		}
		if c.Name() == "run" {
			_ = c.RegisterFlagCompletionFunc("name", a.completeHarness)
		}
		switch {
		case harnessArgs[c.Name()]:
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 && c.Name() != "rm" {
					return nil, cobra.ShellCompDirectiveDefault // exec's command, snapshot's file
				}
				names, dir := a.completeHarness(cmd, args, toComplete)
				if runningOnly[c.Name()] {
					// Only a running session can be stopped or entered.
					kept := names[:0]
					for _, n := range names {
						if strings.Contains(n, "\t") && strings.Contains(n, ", running,") {
							kept = append(kept, n)
						}
					}
					names = kept
				}
				return names, dir
			}
		case c.Name() == "inspect" || c.Name() == "log":
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 || strings.ContainsAny(toComplete, "/.") {
					return nil, cobra.ShellCompDirectiveDefault // a transcript path
				}
				return a.completeSessions(cmd, args, toComplete)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeHarness lists the harness's sessions, with their state.
func (a *app) completeHarness(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	list, _, err := a.store().List()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	given := map[string]bool{}
	for _, a := range args {
		given[a] = true
	}
	var out []string
	for _, s := range list {
		if strings.HasPrefix(s.ID, toComplete) && !given[s.ID] {
			out = append(out, s.ID+"\t"+s.Runtime+", "+s.ShortState()+", "+orDash(s.Image))
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completionBudget bounds the discovery a completion may do: a shell waits
// for it.
const completionBudget = 2 * time.Second

// completeSessions lists the agents' sessions the command would find,
// newest first, by id, described by agent, start and working directory.
func (a *app) completeSessions(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(cmd.Context(), completionBudget)
	defer cancel()
	var o selectOptions
	if f := cmd.Flags().Lookup("from"); f != nil && f.Changed {
		if v, err := cmd.Flags().GetStringArray("from"); err == nil {
			o.From = v
		}
	}
	q := *a
	q.quiet = true
	sel, _, err := q.selectSessions(ctx, o, nil, true)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	sort.SliceStable(sel, func(i, j int) bool { return sel[i].Info.Last.After(sel[j].Info.Last) })
	var out []string
	seen := map[string]bool{}
	for _, s := range sel {
		id := s.Info.ID
		if s.Harness != "" && strings.HasPrefix(s.Harness, toComplete) && !strings.HasPrefix(id, toComplete) {
			id = s.Harness
		}
		if id == "" || !strings.HasPrefix(id, toComplete) || seen[id] {
			continue // copies of one session complete once
		}
		seen[id] = true
		out = append(out, id+"\t"+a.describeSelected(s))
		if len(out) == 200 {
			break
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func (a *app) describeSelected(s parse.Selected) string {
	start := "-"
	if !s.Info.First.IsZero() {
		start = s.Info.First.Local().Format("2006-01-02 15:04 MST")
	}
	return fmt.Sprintf("%s, %s, %s", s.Info.Agent, start, a.homeRel(s.Info.Cwd))
}
