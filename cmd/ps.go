package cmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/harness/kube"
)

func (a *app) psCommand() *cobra.Command {
	var (
		filters []string
		format  string
		quiet   bool
		wide    bool
		all     bool
		kctx    string
	)
	c := &cobra.Command{
		Use:   "ps [--filter KEY=VALUE]... [--format TEMPLATE] [-q]",
		Short: "List harness sessions and how each last run ended",
		Long: `sandbox ps lists the harness's sessions: state (running, exited with its code, killed
by a signal, OOM, dropped, error), runtime, image, age, idle time, runs, the
agent's own session id, project and last command. A session marked running
whose harness has died (its lock is free: dead pid, missing container) is
marked dropped here, with a session_drop event holding the evidence still
there.

--filter KEY=VALUE keeps some sessions (state, runtime, name (a substring),
agent, image, project); values of one key are alternatives, different keys
must all hold: --filter state=exited,state=killed --filter runtime=docker.
-q prints only the session names, --format a Go template per session (the
fields of --json, in Go's names: {{.ID}}, {{.State}}, {{.Runtime}},
{{.Image}}, {{.Project}}, {{.Command}}, {{.ExitCode}}, {{.Signal}},
{{.AgentSessionID}}, {{.Runs}}, {{.Status}}, {{.Dir}}; {{json .}} for one
JSON object). The table is aligned on a terminal and tab-separated when
piped; times are in your local zone in --json as RFC 3339.`,
		Example: `  sandbox ps
  sandbox ps --filter state=running -q
  sandbox ps --filter runtime=docker --format '{{.ID}} {{.Image}} {{.Status}}'
  sandbox ps --json | jq '.sessions[] | select(.state == "oom") | .id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flt, err := harness.ParseFilter(filters)
			if err != nil {
				return usagef("%v", err)
			}
			var tmpl *template.Template
			if format != "" {
				if quiet || a.json {
					return usagef("--format with -q or --json: choose one")
				}
				tmpl, err = template.New("format").Funcs(template.FuncMap{"json": jsonString}).Parse(format)
				if err != nil {
					return usagef("--format: %v", err)
				}
			}
			st := a.store()
			rows, damaged, err := st.Rows(cmd.Context(), a.now(), flt, func(id string) {
				a.note("session %s: its harness died; marked dropped", id)
			})
			if err != nil {
				return err
			}
			for _, d := range damaged {
				a.log.Warn().Msgf("skipped a damaged session record: %v", d)
			}
			var cluster []kube.Remote
			if all {
				var where string
				cluster, where, err = kube.List(cmd.Context(), a.env, kctx, true)
				if err != nil {
					return fmt.Errorf("ps -A: %w", err)
				}
				if !a.json && !quiet && tmpl == nil {
					defer a.clusterTable(cluster, where, wide)
				}
			}
			switch {
			case a.json:
				doc := map[string]any{"schema": "sandbox.ps/v1", "sessions": rows}
				if all {
					doc["cluster"] = cluster
				}
				return a.writeJSON(doc)
			case quiet:
				for _, r := range rows {
					fmt.Fprintln(a.stdout, r.ID)
				}
				return nil
			case tmpl != nil:
				for _, r := range rows {
					var b strings.Builder
					if err := tmpl.Execute(&b, r); err != nil {
						return usagef("--format: %v", err)
					}
					fmt.Fprintln(a.stdout, printable(b.String()))
				}
				return nil
			}
			if len(rows) == 0 {
				if len(flt) > 0 {
					a.note("no sessions in %s match the filter", st.Root)
				} else {
					a.note("no sessions in %s", st.Root)
				}
				return nil
			}
			table := [][]string{{"SESSION", "RUNTIME", "IMAGE", "STATE", "AGE", "IDLE", "RUNS", "AGENT", "PROJECT", "COMMAND"}}
			for _, r := range rows {
				agent := "-"
				if r.AgentSessionID != "" {
					agent = r.Agent + ":" + shortID(r.AgentSessionID)
				}
				command := shortCommand(r.Command, 40)
				if wide || !isTerminal(a.stdout) {
					command = shortCommand(r.Command, 1<<20)
				}
				table = append(table, []string{r.ID, r.Runtime, orDash(printable(r.Image)), r.ShortState(), shortDur(r.AgeS),
					shortDur(r.IdleS), strconv.Itoa(r.Runs), printable(agent), printable(a.homeRel(r.Project)), printable(command)})
			}
			return a.writeTable(table, 8, wide)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&filters, "filter", nil, "keep sessions where `KEY=VALUE` (state, runtime, name, agent, image, project; repeatable)")
	f.StringVar(&format, "format", "", "print each session with a Go `TEMPLATE`")
	f.BoolVarP(&quiet, "quiet", "q", false, "print only session names")
	f.BoolVarP(&all, "all-namespaces", "A", false, "also list the sessions on the Kubernetes cluster, in every namespace, whichever machine made them")
	f.StringVar(&kctx, "kube-context", "", "with -A, the kubeconfig `CONTEXT` (default the current one)")
	f.BoolVar(&wide, "wide", false, "on a terminal, show every cell whole (default: cut PROJECT to the terminal's width, COMMAND to 40)")
	return c
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// homeRel writes a path under the user's home as ~/….
func (a *app) homeRel(p string) string {
	if home := a.home(); home != "" && home != "/" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}

// shortCommand is a command line for a table cell: words joined, tabs and
// newlines made spaces (a cell never breaks a row), cut at n runes.
func shortCommand(argv []string, n int) string {
	s := strings.Join(strings.Fields(strings.Join(argv, " ")), " ")
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func shortDur(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case sec < 0 || sec > 100*365*24*3600:
		return "-" // a time the record does not hold
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// jsonString is --format's {{json .}}.
func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// clusterTable prints the sessions a cluster holds (ps -A).
func (a *app) clusterTable(rs []kube.Remote, where string, wide bool) {
	fmt.Fprintf(a.stdout, "\non the cluster of context %s:\n", printable(where))
	if len(rs) == 0 {
		fmt.Fprintln(a.stdout, "no sessions")
		return
	}
	table := [][]string{{"NAMESPACE", "SESSION", "STATE", "RUN", "REASON", "NODE", "POD", "HOST", "AGE"}}
	for _, r := range rs {
		state := r.State
		switch r.State {
		case "exited", "killed", "oom", "error", "dropped":
			if r.ExitCode != 0 || r.State == "exited" {
				state += " (" + strconv.Itoa(r.ExitCode) + ")"
			}
		}
		table = append(table, []string{r.Namespace, printable(r.Session), state, strconv.Itoa(r.Run), orDash(r.Reason), orDash(r.Node),
			orDash(r.Pod), orDash(printable(r.Host)), shortDur(a.now().Sub(r.Created).Seconds())})
	}
	_ = a.writeTable(table, -1, wide)
}
