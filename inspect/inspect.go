package inspect

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	recov "github.com/agentsandbox/sandbox/recover"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse"
)

// Inspection is the --json document of inspect (schema sandbox.inspect/v1).
type Inspection struct {
	Schema        string             `json:"schema"`
	Sessions      []manifest.Session `json:"sessions"`
	Verdict       Verdict            `json:"verdict"`
	Counts        Counts             `json:"counts"`
	Timeline      []Entry            `json:"timeline"`
	Files         []FileView         `json:"files"`
	Unrecoverable []Issue            `json:"unrecoverable"`
	// FailedWrites are files only failed, rejected or unfinished calls
	// wrote to: nothing of theirs is recovered.
	FailedWrites []Issue            `json:"failed_writes,omitempty"`
	Warnings     []manifest.Warning `json:"warnings"`
	// Redactions lists what --redact replaced.
	Redactions []manifest.Redaction `json:"redactions,omitempty"`
	// Sandbox is how the harness's runs of the session ended, for a
	// session run by sandbox run (from its runtime log).
	Sandbox []SandboxEnd `json:"sandbox,omitempty"`
	// tl, when set, holds the timeline in place of Timeline.
	tl *Spool
}

// Entries yields the timeline's events in order, from memory or from the
// spool; after it, Err says whether the spool could not be read.
func (in *Inspection) Entries() iter.Seq[*Entry] {
	if in.tl != nil {
		return in.tl.all()
	}
	return func(yield func(*Entry) bool) {
		for i := range in.Timeline {
			if !yield(&in.Timeline[i]) {
				return
			}
		}
	}
}

// kinds yields the kind and outcome of every event of the timeline.
func (in *Inspection) kinds() iter.Seq2[manifest.EventKind, manifest.Outcome] {
	return func(yield func(manifest.EventKind, manifest.Outcome) bool) {
		if in.tl != nil {
			for _, it := range in.tl.items {
				if !yield(it.kind, it.outcome) {
					return
				}
			}
			return
		}
		for _, e := range in.Timeline {
			if !yield(e.Kind, e.Outcome) {
				return
			}
		}
	}
}

// isOpen says whether e is a call that never got its result.
func isOpen(e *manifest.Event) bool {
	return e.Kind == manifest.EventCall && e.Ended.IsZero() && e.Outcome == manifest.OutcomeUnknown
}

// lastOpenAndAborted returns the last call of session id that never got
// its result and its last aborted turn, nil where there is none.
func (in *Inspection) lastOpenAndAborted(id string) (open, aborted *Entry) {
	if in.tl != nil {
		return in.tl.lastOpenAndAborted(id)
	}
	for i := range in.Timeline {
		e := &in.Timeline[i]
		if e.Session != id {
			continue
		}
		if isOpen(&e.Event) {
			open = e
		}
		if e.Kind == manifest.EventAborted {
			aborted = e
		}
	}
	return open, aborted
}

func (in *Inspection) Err() error {
	if in.tl != nil {
		return in.tl.err
	}
	return nil
}

type Verdict struct {
	// State is clean, truncated, died-in-tool, aborted, interrupted or open.
	State    string   `json:"state"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence"`
}

type Counts struct {
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

type Entry struct {
	manifest.Event
	Session string   `json:"session"`
	Ops     []OpView `json:"ops,omitempty"`
}

type OpView struct {
	Kind    string   `json:"kind"`
	Paths   []string `json:"paths"`
	Outcome string   `json:"outcome"`
	// Runs names the script files a shell command runs, whose content the
	// replay reads when the session wrote them.
	Runs []string `json:"runs,omitempty"`
	// Tasks are the tasks it runs (make lint, mise run lint, golangci-lint
	// run), whose definitions the replay reads.
	Tasks []string `json:"tasks,omitempty"`
}

// tasks lists the tasks a shell operation runs, in their words.
func tasks(op *manifest.Op) []string {
	var out []string
	for _, e := range op.Effects {
		if e.Kind == manifest.ShellTask && len(e.Args) > 0 {
			if t := strings.Join(e.Args, " "); !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// runs lists the script files a shell operation runs.
func runs(op *manifest.Op) []string {
	var out []string
	for _, e := range op.Effects {
		if e.Kind == manifest.ShellRun && len(e.Paths) > 0 && !slices.Contains(out, e.Paths[0]) {
			out = append(out, e.Paths[0])
		}
	}
	return out
}

type FileView struct {
	Path       string `json:"path"`
	Confidence string `json:"confidence"`
	Final      string `json:"final"`
	// NetDiff is the file's change from the session's start to its end
	// (for a move, from the source's start); empty when either is unknown.
	NetDiff   string `json:"net_diff,omitempty"`
	MovedFrom string `json:"moved_from,omitempty"`
	MovedTo   string `json:"moved_to,omitempty"`
	// StartKnown says whether the content at the session's start is known.
	StartKnown bool       `json:"start_known"`
	Reason     string     `json:"reason,omitempty"`
	Drift      []string   `json:"drift,omitempty"`
	Notes      []string   `json:"notes,omitempty"`
	Steps      []StepView `json:"steps"`
	Base       string     `json:"base,omitempty"` // where the start came from: transcript, host, --base
}

type StepView struct {
	Time     time.Time `json:"time"`
	Session  string    `json:"session"`
	Line     int       `json:"line"`
	Tool     string    `json:"tool"`
	Kind     string    `json:"kind"`
	Outcome  string    `json:"outcome"`
	Why      string    `json:"why"`
	Replayed bool      `json:"replayed"`
	Diff     string    `json:"diff"`
	// Failed words a shell write whose command failed.
	Failed string `json:"failed,omitempty"`
}

type Issue struct {
	Path  string `json:"path"`
	Why   string `json:"why"`
	Check string `json:"check"`
}

// Build parses the selected transcripts whole, replays them with
// history, and states what happened.
func Build(ctx context.Context, sel []parse.Selected, base string, withDiffs bool, sp *Spool) (*Inspection, error) {
	in := &Inspection{Schema: "sandbox.inspect/v1", Timeline: []Entry{}, Files: []FileView{}, Unrecoverable: []Issue{}, Warnings: []manifest.Warning{}}
	var sources []recov.Source
	var events []Entry
	for i := range sel {
		from := len(events)
		add := func(e manifest.Event) { events = append(events, Entry{Event: e}) }
		var done func(string, map[string][]OpView, time.Time)
		if sp != nil {
			done = sp.session()
			add = func(e manifest.Event) { sp.add(&e) }
		}
		col, err := parse.CollectEvents(ctx, &sel[i], add)
		if err != nil {
			return nil, err
		}
		in.Sessions = append(in.Sessions, col.Session)
		in.Warnings = append(in.Warnings, col.Session.Warnings...)
		byCall := map[string][]OpView{}
		for _, op := range col.Ops {
			if op.Kind == manifest.KindObserve {
				continue
			}
			byCall[op.Provenance.CallID] = append(byCall[op.Provenance.CallID], OpView{Kind: string(op.Kind), Paths: op.Paths, Outcome: string(op.Outcome), Runs: runs(&op), Tasks: tasks(&op)})
		}
		if sp != nil {
			done(col.Session.ID, byCall, col.Session.Start)
		}
		for k := from; k < len(events); k++ {
			e := &events[k]
			if e.Time.IsZero() {
				// Legacy rollouts stamp no line: the session's start is the
				// best time there is (as replay uses for its operations).
				e.Time = col.Session.Start
			}
			e.Session, e.Ops = col.Session.ID, byCall[e.CallID]
		}
		sources = append(sources, &recov.SliceSource{S: col.Session, Ops: col.Ops})
	}
	sort.SliceStable(events, func(a, b int) bool {
		if !events[a].Time.Equal(events[b].Time) {
			return events[a].Time.Before(events[b].Time)
		}
		return events[a].Line < events[b].Line
	})
	if len(events) > 0 {
		in.Timeline = events // not a copy: the timeline is most of an inspection
	}
	if sp != nil {
		if err := sp.finish(); err != nil {
			return nil, err
		}
		in.tl = sp
	}
	r, err := ReplayWithHistory(ctx, sources, base)
	if err != nil {
		return nil, err
	}
	files, st := r.Files, r.Stats
	steps := r.Histories()
	in.Warnings = append(in.Warnings, r.Warnings...)
	for kind, outcome := range in.kinds() {
		switch kind {
		case manifest.EventTurn:
			in.Counts.Turns++
		case manifest.EventCall:
			in.Counts.Calls++
			switch outcome {
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
	movedTo := map[string]string{}
	byPath := map[string]*recov.FileResult{}
	for _, f := range files {
		byPath[f.Path] = f
		if f.MovedFrom != "" {
			movedTo[f.MovedFrom] = f.Path
		}
	}
	for _, f := range files {
		fv := FileView{Path: f.Path, Confidence: string(f.Confidence), Base: f.Base, Reason: f.Reason, Drift: f.Drift, Notes: f.Notes, Steps: []StepView{},
			MovedFrom: f.MovedFrom, MovedTo: movedTo[f.Path], StartKnown: f.Start.Known}
		if withDiffs {
			fv.NetDiff = netDiff(f, byPath[f.MovedFrom])
		}
		switch {
		case !f.Final.Known:
			fv.Final = "unknown"
		case !f.Final.Exists:
			fv.Final = "deleted"
		default:
			fv.Final = fmt.Sprintf("%d bytes", len(f.Final.Text))
		}
		for _, s := range steps[f.Path] {
			sv := StepView{Time: s.Op.Provenance.Time, Session: s.Op.Session, Line: s.Op.Provenance.Line, Tool: s.Op.Tool,
				Kind: string(s.Op.Kind), Outcome: string(s.Op.Outcome), Why: s.Op.OutcomeEvidence, Replayed: s.Replayed}
			if withDiffs && (s.Before.Known || s.After.Known) {
				sv.Diff = recov.UnifiedDiff("before", "after", s.Before.Text, s.After.Text)
			}
			if s.Op.Kind == manifest.KindShell {
				sv.Diff = "$ " + s.Op.Command
				if s.Op.Outcome == manifest.OutcomeFailed {
					sv.Failed = failedShell
				}
			}
			fv.Steps = append(fv.Steps, sv)
		}
		// A call that never got its result is known only at the end of its
		// transcript: put it back where it happened.
		sort.SliceStable(fv.Steps, func(a, b int) bool { return fv.Steps[a].Time.Before(fv.Steps[b].Time) })
		in.Counts.Drift += len(f.Drift)
		in.Files = append(in.Files, fv)
		if f.Confidence == recov.Unrecoverable {
			check := checkFor(f)
			if allShellFailed(steps[f.Path]) {
				check = failedShell
			}
			in.Unrecoverable = append(in.Unrecoverable, Issue{Path: f.Path, Why: f.Reason, Check: check})
		}
	}
	in.Counts.Files = len(in.Files)
	in.FailedWrites = failedWrites(steps, byPath)
	in.Unrecoverable = append(in.Unrecoverable, unrecordedDeletes(steps)...)
	in.Verdict = decideVerdict(in)
	if err := in.Err(); err != nil {
		return nil, err
	}
	return in, nil
}

func checkFor(f *recov.FileResult) string {
	switch {
	case strings.Contains(f.Reason, "here from"):
		return "it came from a file the transcript does not hold: copy it from there, on the machine where the session ran"
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
func unrecordedDeletes(steps map[string][]recov.Step) []Issue {
	var out []Issue
	paths := make([]string, 0, len(steps))
	for p := range steps {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, s := range steps[p] {
			if s.Replayed && s.After.Known && !s.After.Exists && !s.Before.Known {
				out = append(out, Issue{Path: p, Why: fmt.Sprintf("deleted at %s:%d and its content is in neither the transcript nor the host copy",
					filepath.Base(s.Op.Provenance.Transcript), s.Op.Provenance.Line),
					Check: "if it is needed, look for it in version control or backups"})
			}
		}
	}
	return out
}

// ReplayWithHistory replays the sources (host copies from base, or from the
// sessions' own directories when they exist here).
func ReplayWithHistory(ctx context.Context, sources []recov.Source, base string) (*recov.Replayed, error) {
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
		return nil, err
	}
	fsys := recov.NewOSFS()
	defer fsys.Close()
	return recov.Replay(ctx, sources, fsys, recov.Stage{Bases: m, History: true})
}

// decideVerdict states how the session ended, with its evidence.
func decideVerdict(in *Inspection) Verdict {
	sessions := in.Sessions
	if len(sessions) == 0 {
		return Verdict{State: "unknown", Summary: "no session", Evidence: []string{}}
	}
	main := sessions[0]
	v := Verdict{Evidence: []string{}}
	end := main.End
	open, lastAbort := in.lastOpenAndAborted(main.ID)
	for _, w := range main.Warnings {
		if w.Truncated() {
			v.Evidence = append(v.Evidence, w.String())
		}
	}
	switch {
	case main.EndState == manifest.EndTruncated:
		v.State = "truncated"
		v.Summary = "The transcript is cut off in the middle of a line: the session was still writing when it died."
	case open != nil:
		e := open
		v.State = "died-in-tool"
		v.Summary = fmt.Sprintf("The session died while a tool call was running: %s %s, started %s, %s before the transcript ends.",
			e.Tool, e.Target, e.Time.UTC().Format("2006-01-02 15:04:05Z"), end.Sub(e.Time).Round(time.Second))
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s:%d: call %s has no result", main.Transcript, e.Line, e.CallID))
	case lastAbort != nil && strings.HasPrefix(lastAbort.Text, "interrupted"):
		v.State = "interrupted"
		v.Summary = "The user interrupted the session."
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s:%d: %s", main.Transcript, lastAbort.Line, lastAbort.Text))
	case main.EndState == manifest.EndAborted || lastAbort != nil:
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

// failedShell is what a shell write whose command failed tells the reader.
const failedShell = "the command failed; the file was probably never written"

// allShellFailed reports whether a file's shell writes all failed (and it
// has some).
func allShellFailed(steps []recov.Step) bool {
	n := 0
	for _, s := range steps {
		if s.Op.Kind != manifest.KindShell {
			continue
		}
		if s.Op.Outcome != manifest.OutcomeFailed {
			return false
		}
		n++
	}
	return n > 0
}

// failedWrites lists the files that only failed, rejected or unfinished
// calls wrote to: replay has nothing of theirs, and the reader should know
// the agent tried.
func failedWrites(steps map[string][]recov.Step, have map[string]*recov.FileResult) []Issue {
	var out []Issue
	for p, ss := range steps {
		if have[p] != nil || len(ss) == 0 || anyApplied(ss) {
			// (A file that only an applied call named without a result
			// of its own is the source of a move or copy: read, not
			// written.)
			continue
		}
		last := ss[len(ss)-1]
		why := fmt.Sprintf("every call that wrote it %s (last: %s at %s:%d)", outcomeWords(ss), last.Op.Tool,
			filepath.Base(last.Op.Provenance.Transcript), last.Op.Provenance.Line)
		check := "nothing to recover: the agent's write did not happen"
		switch {
		case allShellFailed(ss):
			check = failedShell
		case last.Op.Outcome == manifest.OutcomeUnknown:
			check = "the call never finished: look on the machine where it ran whether the file was written"
		}
		out = append(out, Issue{Path: p, Why: why, Check: check})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out
}

// anyApplied reports whether a call that named the file ran.
func anyApplied(ss []recov.Step) bool {
	for _, s := range ss {
		if s.Op.Outcome == manifest.OutcomeApplied {
			return true
		}
	}
	return false
}

func outcomeWords(ss []recov.Step) string {
	seen := map[manifest.Outcome]bool{}
	var w []string
	for _, s := range ss {
		if !seen[s.Op.Outcome] {
			seen[s.Op.Outcome] = true
			w = append(w, string(s.Op.Outcome))
		}
	}
	return strings.Join(w, " or ")
}

// netDiff is a file's change over the whole session: from its start (or,
// for the destination of a move, the source's start) to its end.
func netDiff(f, from *recov.FileResult) string {
	start, name := f.Start, "a"+f.Path
	if from != nil && !f.Start.Exists {
		start, name = from.Start, "a"+from.Path
	}
	if !start.Known || !f.Final.Known {
		return ""
	}
	if !start.Exists {
		name = "/dev/null"
	}
	to := "b" + f.Path
	if !f.Final.Exists {
		to = "/dev/null"
	}
	return recov.UnifiedDiff(name, to, start.Text, f.Final.Text)
}

// oneLine is text on one line, cut to n characters.
func oneLine(s string, n int) string { return ellipsis(strings.Join(strings.Fields(s), " "), n) }
