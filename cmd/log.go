package cmd

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/inspect"
	"github.com/agentsandbox/sandbox/parse"
	recov "github.com/agentsandbox/sandbox/recover"
)

type logOptions struct {
	selectOptions
	Base string
}

func (a *app) logCommand() *cobra.Command {
	var o logOptions
	c := &cobra.Command{
		Use:   "log PATH [selection flags]",
		Short: "Show every operation on one file across sessions: who changed it, and when",
		Long: `sandbox log lists every operation on one file across all selected sessions (the source
and selection flags of recover), oldest first: session, time, tool, outcome,
and the diff it made (for a shell command, the command). PATH is the file as
an agent saw it (an absolute path), or a path relative to the sessions'
working directories.`,
		Example: `  sandbox log /workspace/src/main.go --since 1w
  sandbox log src/main.go --from ci-artifacts.zip --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runLog(cmd.Context(), args[0], o)
		},
	}
	o.selectOptions.register(c.Flags())
	c.Flags().StringVar(&o.Base, "base", "", "read the file's starting content from `DIR`")
	return c
}

type logEntry struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Path    string `json:"path"`
	inspect.StepView
}

type logReport struct {
	Schema string     `json:"schema"`
	Path   string     `json:"path"`
	Steps  []logEntry `json:"steps"`
}

func (a *app) runLog(ctx context.Context, target string, o logOptions) error {
	sel, looked, err := a.selectSessions(ctx, o.selectOptions, nil, true)
	if err != nil {
		return err
	}
	sel = append(sel, parse.SelectedCompanions(sel)...)
	rep := logReport{Schema: "sandbox.log/v1", Path: target, Steps: []logEntry{}}
	agents := map[string]string{}
	for _, s := range sel {
		agents[s.Info.ID] = string(s.Info.Agent)
	}
	var sources []recov.Source
	bar := a.counting("reading transcripts", sel)
	defer bar.End()
	for i := range sel {
		col, err := parse.Collect(ctx, &sel[i])
		if err != nil {
			return err
		}
		agents[col.Session.ID] = string(col.Session.Agent)
		sources = append(sources, &recov.SliceSource{S: col.Session, Ops: col.Ops})
	}
	bar.End()
	r, err := inspect.ReplayWithHistory(ctx, sources, o.Base)
	if err != nil {
		return err
	}
	for p, ss := range r.Histories() {
		if !sameFile(p, target) {
			continue
		}
		for _, s := range ss {
			e := logEntry{Session: s.Op.Session, Agent: agents[s.Op.Session], Path: p, StepView: inspect.StepView{Time: s.Op.Provenance.Time,
				Session: s.Op.Session, Line: s.Op.Provenance.Line, Tool: s.Op.Tool, Kind: string(s.Op.Kind), Outcome: string(s.Op.Outcome),
				Why: s.Op.OutcomeEvidence, Replayed: s.Replayed}}
			if s.Op.Kind == "shell" {
				e.Diff = "$ " + s.Op.Command
			} else if s.Before.Known || s.After.Known {
				e.Diff = recov.UnifiedDiff("a/"+path.Base(p), "b/"+path.Base(p), s.Before.Text, s.After.Text)
			}
			rep.Steps = append(rep.Steps, e)
		}
	}
	sort.SliceStable(rep.Steps, func(i, j int) bool { return rep.Steps[i].Time.Before(rep.Steps[j].Time) })
	if a.json {
		return a.writeJSON(rep)
	}
	if len(rep.Steps) == 0 {
		fmt.Fprintf(a.stderr, "sandbox: no operation on %s in %d session(s) (looked in %s)\n", target, len(sel), joinLooked(looked))
		return nil
	}
	color := a.color()
	for _, e := range rep.Steps {
		fmt.Fprintln(a.stdout, recov.Bold(fmt.Sprintf("%s  %s %s  %s (%s)  %s", e.Time.Local().Format("2006-01-02 15:04:05"), e.Agent, e.Session, e.Tool, e.Kind, e.Outcome), color))
		fmt.Fprintf(a.stdout, "  %s  (line %d: %s)\n", printable(e.Path), e.Line, printable(e.Why))
		if !e.Replayed {
			fmt.Fprintln(a.stdout, "  not replayed")
		}
		recov.WriteDiff(a.stdout, e.Diff+"\n", color)
	}
	return nil
}

// sameFile tells whether an agent path is the file asked for: the same
// absolute path, or one ending in the relative path given.
func sameFile(agentPath, target string) bool {
	if filepath.IsAbs(target) {
		return path.Clean(agentPath) == path.Clean(filepath.ToSlash(target))
	}
	t := path.Clean(filepath.ToSlash(target))
	return agentPath == t || strings.HasSuffix(agentPath, "/"+t)
}
