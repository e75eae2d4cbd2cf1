package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse"
	recov "github.com/agentsandbox/sandbox/recover"
	"github.com/spf13/cobra"
)

type inspectOptions struct {
	selectOptions
	HTML string
	Base string
}

func (a *app) inspectCommand() *cobra.Command {
	var o inspectOptions
	c := &cobra.Command{
		Use:   "inspect SESSION",
		Short: "Tell what an agent session did, what failed, and how it ended",
		Long: `Inspect is post-incident analysis of one session (an id prefix, a harness session
name, or a transcript path): a timeline of every turn and tool call with its
time, tool, target and outcome (applied, failed with its error, rejected,
unknown) and the file operations it made; the end of the session stated
plainly with its evidence (ended cleanly, transcript cut off mid-line, died
while a tool call was running and how long after it started, turn aborted,
interrupted by the user); and what cannot be recovered and why (shell commands
that wrote files, deletions without recorded content, edits whose base is
unknown), so an engineer knows what to check by hand.

Text on a terminal; --json for tools; --html FILE writes one self-contained
page (no network, no external assets) with the verdict, the timeline, and a
view of every file with the diff of every operation, to attach to an incident
report. --base DIR gives the files' starting content (the session's directory
re-rooted there); by default the session's own directory is read when it
exists here.`,
		Example: `  sandbox inspect 019c7bdb
  sandbox inspect ~/.claude/projects/-workspace/5c0375b4-….jsonl --html incident.html
  sandbox inspect task1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runInspect(cmd.Context(), args[0], o)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.From, "from", nil, "look for the session in `PATH` (a tree, an archive, a file) instead of the homes")
	f.StringVar(&o.HomeCodex, "home-codex", "", "the Codex home to look in")
	f.StringVar(&o.HomeClaude, "home-claude", "", "the Claude Code home to look in")
	f.StringVar(&o.HTML, "html", "", "write a self-contained HTML report to `FILE`")
	f.StringVar(&o.Base, "base", "", "read the files' starting content from `DIR`")
	return c
}

// inspection is the --json document of inspect (schema sandbox.inspect/v1).
type inspection struct {
	Schema        string             `json:"schema"`
	Sessions      []manifest.Session `json:"sessions"`
	Verdict       verdict            `json:"verdict"`
	Counts        counts             `json:"counts"`
	Timeline      []entry            `json:"timeline"`
	Files         []fileView         `json:"files"`
	Unrecoverable []issue            `json:"unrecoverable"`
	Warnings      []manifest.Warning `json:"warnings"`
	// Sandbox is how the harness's runs of the session ended, for a
	// session run by sandbox run (from its runtime log).
	Sandbox []sandboxEnd `json:"sandbox,omitempty"`
}

type verdict struct {
	// State is clean, truncated, died-in-tool, aborted, interrupted or open.
	State    string   `json:"state"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence"`
}

type counts struct {
	Turns      int `json:"turns"`
	Calls      int `json:"calls"`
	Failed     int `json:"failed"`
	Rejected   int `json:"rejected"`
	Unknown    int `json:"unknown"`
	FileOps    int `json:"file_ops"`
	OpsApplied int `json:"file_ops_applied"`
	Files      int `json:"files"`
	Drift      int `json:"drift"`
}

type entry struct {
	manifest.Event
	Session string   `json:"session"`
	Ops     []opView `json:"ops,omitempty"`
}

type opView struct {
	Kind    string   `json:"kind"`
	Paths   []string `json:"paths"`
	Outcome string   `json:"outcome"`
}

type fileView struct {
	Path       string     `json:"path"`
	Confidence string     `json:"confidence"`
	Final      string     `json:"final"`
	Reason     string     `json:"reason,omitempty"`
	Drift      []string   `json:"drift,omitempty"`
	Notes      []string   `json:"notes,omitempty"`
	Steps      []stepView `json:"steps"`
	Base       string     `json:"base,omitempty"` // where the start came from: transcript, host, --base
}

type stepView struct {
	Time     time.Time `json:"time"`
	Session  string    `json:"session"`
	Line     int       `json:"line"`
	Tool     string    `json:"tool"`
	Kind     string    `json:"kind"`
	Outcome  string    `json:"outcome"`
	Why      string    `json:"why"`
	Replayed bool      `json:"replayed"`
	Diff     string    `json:"diff"`
}

type issue struct {
	Path  string `json:"path"`
	Why   string `json:"why"`
	Check string `json:"check"`
}

func (a *app) runInspect(ctx context.Context, target string, o inspectOptions) error {
	if st, err := os.Stat(target); err == nil && !st.IsDir() {
		o.Transcripts = []string{target}
	} else {
		o.Sessions = []string{target}
	}
	sel, _, err := a.selectSessions(ctx, o.selectOptions, nil, true)
	if err != nil {
		return err
	}
	if len(sel) == 0 {
		return fmt.Errorf("no session %q", target)
	}
	sel = append(sel, parse.SelectedCompanions(sel)...)
	in, err := buildInspection(ctx, sel, o.Base, true)
	if err != nil {
		return err
	}
	in.Sandbox = a.sandboxEnds(sel)
	if o.HTML != "" {
		if err := writeHTML(o.HTML, in); err != nil {
			return err
		}
		if !a.quiet {
			fmt.Fprintf(a.stderr, "sandbox: wrote %s\n", o.HTML)
		}
	}
	if a.json {
		return a.writeJSON(in)
	}
	if o.HTML != "" {
		return nil
	}
	a.printInspection(in)
	return nil
}

// buildInspection parses the selected transcripts whole, replays them with
// history, and states what happened.
func buildInspection(ctx context.Context, sel []parse.Selected, base string, withDiffs bool) (*inspection, error) {
	in := &inspection{Schema: "sandbox.inspect/v1", Timeline: []entry{}, Files: []fileView{}, Unrecoverable: []issue{}, Warnings: []manifest.Warning{}}
	var sources []recov.Source
	var events []entry
	for i := range sel {
		col, err := parse.Collect(ctx, &sel[i])
		if err != nil {
			return nil, err
		}
		in.Sessions = append(in.Sessions, col.Session)
		in.Warnings = append(in.Warnings, col.Session.Warnings...)
		byCall := map[string][]opView{}
		for _, op := range col.Ops {
			if op.Kind == manifest.KindObserve {
				continue
			}
			byCall[op.Provenance.CallID] = append(byCall[op.Provenance.CallID], opView{Kind: string(op.Kind), Paths: op.Paths, Outcome: string(op.Outcome)})
		}
		for _, e := range col.Events {
			if e.Time.IsZero() {
				// Legacy rollouts stamp no line: the session's start is the
				// best time there is (as replay uses for its operations).
				e.Time = col.Session.Start
			}
			events = append(events, entry{Event: e, Session: col.Session.ID, Ops: byCall[e.CallID]})
		}
		sources = append(sources, &recov.SliceSource{S: col.Session, Ops: col.Ops})
	}
	sort.SliceStable(events, func(a, b int) bool {
		if !events[a].Time.Equal(events[b].Time) {
			return events[a].Time.Before(events[b].Time)
		}
		return events[a].Line < events[b].Line
	})
	in.Timeline = append(in.Timeline, events...)
	rc, files, st, err := replayWithHistory(ctx, sources, base)
	if err != nil {
		return nil, err
	}
	steps := rc.Histories()
	in.Warnings = append(in.Warnings, rc.Warnings()...)
	for _, e := range events {
		switch e.Kind {
		case manifest.EventTurn:
			in.Counts.Turns++
		case manifest.EventCall:
			in.Counts.Calls++
			switch e.Outcome {
			case manifest.OutcomeFailed:
				in.Counts.Failed++
			case manifest.OutcomeRejected:
				in.Counts.Rejected++
			case manifest.OutcomeUnknown:
				in.Counts.Unknown++
			}
		}
	}
	in.Counts.FileOps, in.Counts.OpsApplied = st.Ops, st.Applied
	for _, f := range files {
		fv := fileView{Path: f.Path, Confidence: string(f.Confidence), Base: f.Base, Reason: f.Reason, Drift: f.Drift, Notes: f.Notes, Steps: []stepView{}}
		switch {
		case !f.Final.Known:
			fv.Final = "unknown"
		case !f.Final.Exists:
			fv.Final = "deleted"
		default:
			fv.Final = fmt.Sprintf("%d bytes", len(f.Final.Text))
		}
		for _, s := range steps[f.Path] {
			sv := stepView{Time: s.Op.Provenance.Time, Session: s.Op.Session, Line: s.Op.Provenance.Line, Tool: s.Op.Tool,
				Kind: string(s.Op.Kind), Outcome: string(s.Op.Outcome), Why: s.Op.OutcomeEvidence, Replayed: s.Replayed}
			if withDiffs && (s.Before.Known || s.After.Known) {
				sv.Diff = recov.UnifiedDiff("before", "after", s.Before.Text, s.After.Text)
			}
			if s.Op.Kind == manifest.KindShell {
				sv.Diff = "$ " + s.Op.Command
			}
			fv.Steps = append(fv.Steps, sv)
		}
		// A call that never got its result is known only at the end of its
		// transcript: put it back where it happened.
		sort.SliceStable(fv.Steps, func(a, b int) bool { return fv.Steps[a].Time.Before(fv.Steps[b].Time) })
		in.Counts.Drift += len(f.Drift)
		in.Files = append(in.Files, fv)
		if f.Confidence == recov.Unrecoverable {
			in.Unrecoverable = append(in.Unrecoverable, issue{Path: f.Path, Why: f.Reason, Check: checkFor(f)})
		}
	}
	in.Counts.Files = len(in.Files)
	in.Unrecoverable = append(in.Unrecoverable, unrecordedDeletes(steps)...)
	in.Verdict = decideVerdict(in.Sessions, events)
	return in, nil
}

func checkFor(f *recov.FileResult) string {
	switch {
	case strings.Contains(f.Reason, "shell"):
		return "run the shell command again by hand, or take the file from the machine where it ran"
	case strings.Contains(f.Reason, "unknown") || strings.Contains(f.Reason, "no copy"):
		return "give sandbox the file as it was when the session started (--base DIR, e.g. a checkout of the session's commit)"
	case strings.Contains(f.Reason, "would not apply"):
		return "the file changed outside the agent's tools before this edit: compare with the transcript by hand"
	}
	return "compare with the transcript by hand"
}

// unrecordedDeletes lists the deletions of files whose content before them
// neither the transcript nor the replay knows.
func unrecordedDeletes(steps map[string][]recov.Step) []issue {
	var out []issue
	paths := make([]string, 0, len(steps))
	for p := range steps {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, s := range steps[p] {
			if s.Replayed && s.After.Known && !s.After.Exists && !s.Before.Known {
				out = append(out, issue{Path: p, Why: fmt.Sprintf("deleted at %s:%d and its content is in neither the transcript nor the host copy",
					filepath.Base(s.Op.Provenance.Transcript), s.Op.Provenance.Line),
					Check: "if it is needed, look for it in version control or backups"})
			}
		}
	}
	return out
}

// replayWithHistory replays the sources (host copies from base, or from the
// sessions' own directories when they exist here).
func replayWithHistory(ctx context.Context, sources []recov.Source, base string) (*recov.Reconstructor, []*recov.FileResult, recov.Stats, error) {
	var rules []recov.Rule
	for _, s := range sources {
		cwd := s.Header().Cwd
		switch {
		case cwd == "":
		case base != "":
			rules = append(rules, recov.Rule{From: cwd, To: base})
		default:
			if st, err := os.Stat(cwd); err == nil && st.IsDir() {
				rules = append(rules, recov.Rule{From: cwd, To: cwd})
			}
		}
	}
	m, err := recov.NewMapper(rules)
	if err != nil {
		return nil, nil, recov.Stats{}, err
	}
	fsys := recov.NewOSFS()
	defer fsys.Close()
	baseFn := func(agent string) ([]byte, bool, bool) {
		t, ok := m.Map(agent)
		if !ok {
			return nil, false, false
		}
		data, _, exists, err := fsys.ReadFile(t)
		return data, exists, err == nil
	}
	rc := recov.NewReconstructor(baseFn, recov.ReconstructOptions{History: true})
	for _, op := range recov.MergeSources(sources) {
		if ctx.Err() != nil {
			return nil, nil, recov.Stats{}, ctx.Err()
		}
		op := op
		rc.Add(&op)
	}
	files, st := rc.Finish()
	return rc, files, st, nil
}

// decideVerdict states how the session ended, with its evidence.
func decideVerdict(sessions []manifest.Session, events []entry) verdict {
	if len(sessions) == 0 {
		return verdict{State: "unknown", Summary: "no session", Evidence: []string{}}
	}
	main := sessions[0]
	v := verdict{Evidence: []string{}}
	end := main.End
	var open []entry
	var lastAbort *entry
	for i, e := range events {
		if e.Session != main.ID {
			continue
		}
		if e.Kind == manifest.EventCall && e.Ended.IsZero() && e.Outcome == manifest.OutcomeUnknown {
			open = append(open, e)
		}
		if e.Kind == manifest.EventAborted {
			lastAbort = &events[i]
		}
	}
	for _, w := range main.Warnings {
		if strings.HasPrefix(w.Message, "truncated last line") {
			v.Evidence = append(v.Evidence, w.String())
		}
	}
	switch {
	case main.EndState == manifest.EndTruncated:
		v.State = "truncated"
		v.Summary = "The transcript is cut off in the middle of a line: the session was still writing when it died."
	case len(open) > 0:
		e := open[len(open)-1]
		v.State = "died-in-tool"
		v.Summary = fmt.Sprintf("The session died while a tool call was running: %s %s, started %s, %s before the transcript ends.",
			e.Tool, e.Target, e.Time.UTC().Format("2006-01-02 15:04:05Z"), end.Sub(e.Time).Round(time.Second))
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s:%d: call %s has no result", main.Transcript, e.Line, e.CallID))
	case lastAbort != nil && strings.HasPrefix(lastAbort.Text, "interrupted"):
		v.State = "interrupted"
		v.Summary = "The user interrupted the session."
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s:%d: %s", main.Transcript, lastAbort.Line, lastAbort.Text))
	case main.EndState == manifest.EndState("aborted") || lastAbort != nil:
		v.State = "aborted"
		v.Summary = "A turn was aborted before it finished."
		if lastAbort != nil {
			v.Evidence = append(v.Evidence, fmt.Sprintf("%s:%d: %s", main.Transcript, lastAbort.Line, lastAbort.Text))
		}
	case main.EndState == manifest.EndOpen:
		v.State = "open"
		v.Summary = "A turn started and never finished: the session stopped while the agent was working."
	default:
		v.State = "clean"
		v.Summary = "The session ended cleanly: every tool call got its result."
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf("%s: %d lines, last activity %s", main.Transcript, main.Lines, end.UTC().Format(time.RFC3339)))
	return v
}

func (a *app) printInspection(in *inspection) {
	out := a.stdout
	for _, s := range in.Sessions {
		fmt.Fprintf(out, "session %s  %s %s  %s\n  %s → %s  (%s)\n", s.ID, s.Agent, s.AgentVersion, s.Cwd,
			s.Start.Local().Format("2006-01-02 15:04:05"), s.End.Local().Format("15:04:05"), s.Transcript)
	}
	fmt.Fprintf(out, "\nverdict: %s\n  %s\n", in.Verdict.State, in.Verdict.Summary)
	for _, e := range in.Verdict.Evidence {
		fmt.Fprintf(out, "  evidence: %s\n", e)
	}
	for _, e := range in.Sandbox {
		fmt.Fprintf(out, "  sandbox: %s\n", e)
		for _, l := range e.LastOutput {
			fmt.Fprintf(out, "    | %s\n", l)
		}
	}
	c := in.Counts
	fmt.Fprintf(out, "\n%d turns, %d tool calls (%d failed, %d rejected, %d unknown); %d file ops (%d applied); %d files; %d drift\n",
		c.Turns, c.Calls, c.Failed, c.Rejected, c.Unknown, c.FileOps, c.OpsApplied, c.Files, c.Drift)
	fmt.Fprintln(out, "\ntimeline:")
	tw := a.table()
	for _, e := range in.Timeline {
		t := e.Time.Local().Format("15:04:05")
		switch e.Kind {
		case manifest.EventTurn:
			fmt.Fprintf(tw, "%s\tturn\t\t%s\n", t, printable(e.Text))
		case manifest.EventAborted:
			fmt.Fprintf(tw, "%s\tstop\t\t%s\n", t, printable(e.Text))
		default:
			line := fmt.Sprintf("%s\t%s\t%s\t%s", t, printable(e.Tool), e.Outcome, printable(e.Target))
			if e.Outcome != manifest.OutcomeApplied && e.Detail != "" {
				line += "  — " + printable(e.Detail)
			}
			for _, o := range e.Ops {
				if len(o.Paths) == 0 {
					line += fmt.Sprintf("  [%s: files it does not name]", o.Kind)
					continue
				}
				line += fmt.Sprintf("  [%s %s]", o.Kind, printable(strings.Join(o.Paths, " ")))
			}
			fmt.Fprintln(tw, line)
		}
	}
	tw.Flush()
	if len(in.Unrecoverable) > 0 {
		fmt.Fprintln(out, "\ncannot be recovered:")
		for _, u := range in.Unrecoverable {
			fmt.Fprintf(out, "  %s\n    why: %s\n    check: %s\n", printable(u.Path), printable(u.Why), u.Check)
		}
	}
	if len(in.Files) > 0 {
		fmt.Fprintln(out, "\nfiles:")
		for _, f := range in.Files {
			fmt.Fprintf(out, "  %s  %s, %s, %d op(s)\n", printable(f.Path), f.Confidence, f.Final, len(f.Steps))
			for _, d := range f.Drift {
				fmt.Fprintf(out, "    drift: %s\n", printable(d))
			}
		}
	}
	if len(in.Warnings) > 0 {
		fmt.Fprintf(out, "\n%d warning(s):\n", len(in.Warnings))
		for i, w := range in.Warnings {
			if i == 20 {
				fmt.Fprintf(out, "  … %d more (--json lists them all)\n", len(in.Warnings)-20)
				break
			}
			fmt.Fprintf(out, "  %s\n", printable(w.String()))
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
