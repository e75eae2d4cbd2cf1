package recover

import (
	"context"
	"sort"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
)

// Schema is the version of the recover report.
const Schema = "sandbox.recover/v1"

// Options configure a recovery.
type Options struct {
	// Dest re-roots every session's working directory onto this directory.
	Dest string
	// Maps are explicit prefix mappings; they win over Dest.
	Maps []Rule
	// Base, when set, is where the starting content of files is read from
	// (the session's cwd re-rooted onto it); by default the destination.
	Base           string
	DryRun         bool
	OnConflict     ConflictPolicy
	IncludeUnknown bool
}

// Input is one parsed transcript.
type Input struct {
	Session manifest.Session
	Ops     []manifest.Op
}

// Result is a finished (or dry-run) recovery.
type Result struct {
	Report Report
	Plans  []*FilePlan
	Files  []*FileResult
}

// Partial reports whether any file was left unrecovered.
func (r *Result) Partial() bool {
	s := r.Report.Summary
	return s.Conflicts+s.OutsideRoot+s.Unrecoverable > 0
}

// Recover reconstructs the files of inputs, plans them against the host and,
// unless opts.DryRun, applies the plan through fsys. An apply error leaves
// the host as it was and is returned with the result of the plan.
func Recover(ctx context.Context, inputs []Input, fsys FS, opts Options) (*Result, error) {
	if opts.OnConflict == "" {
		opts.OnConflict = OnConflictSkip
	}
	rules := append([]Rule{}, opts.Maps...)
	var baseRules []Rule
	for _, in := range inputs {
		if in.Session.Cwd == "" {
			continue
		}
		if opts.Dest != "" {
			rules = append(rules, Rule{From: in.Session.Cwd, To: opts.Dest})
		}
		if opts.Base != "" {
			baseRules = append(baseRules, Rule{From: in.Session.Cwd, To: opts.Base})
		}
	}
	m, err := NewMapper(dedupRules(rules))
	if err != nil {
		return nil, err
	}
	bm := m
	if opts.Base != "" {
		if bm, err = NewMapper(dedupRules(append(append([]Rule{}, opts.Maps...), baseRules...))); err != nil {
			return nil, err
		}
	}
	base := func(agent string) ([]byte, bool, bool) {
		t, ok := bm.Map(agent)
		if !ok {
			return nil, false, false
		}
		data, _, exists, err := fsys.ReadFile(t)
		if err != nil {
			return nil, false, false
		}
		return data, exists, true
	}
	ops := MergeOps(inputs)
	key := func(agent string) string {
		if t, ok := m.Map(agent); ok {
			return t.Path()
		}
		return agent
	}
	files, stats := Reconstruct(ops, base, ReconstructOptions{IncludeUnknown: opts.IncludeUnknown, Key: key})
	plans, err := Plan(files, m, fsys, opts.OnConflict)
	if err != nil {
		return nil, err
	}
	res := &Result{Plans: plans, Files: files}
	res.Report = buildReport(inputs, plans, stats, opts.DryRun)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	if err := Apply(ctx, plans, fsys); err != nil {
		res.Report.Summary.Written = 0
		return res, err
	}
	return res, nil
}

func dedupRules(rules []Rule) []Rule {
	seen := map[Rule]bool{}
	var out []Rule
	for _, r := range rules {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// MergeOps merges the inputs' operations into one replay order: by time
// across transcripts, while each transcript keeps its own line order.
func MergeOps(inputs []Input) []manifest.Op {
	idx := make([]int, len(inputs))
	var out []manifest.Op
	for {
		best := -1
		for i, in := range inputs {
			if idx[i] >= len(in.Ops) {
				continue
			}
			if best < 0 || opTime(in, idx[i]).Before(opTime(inputs[best], idx[best])) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, inputs[best].Ops[idx[best]])
		idx[best]++
	}
}

func opTime(in Input, i int) time.Time {
	t := in.Ops[i].Provenance.Time
	if t.IsZero() {
		t = in.Session.Start
	}
	return t
}

// Report is the sandbox.recover/v1 document.
type Report struct {
	Schema   string             `json:"schema"`
	DryRun   bool               `json:"dry_run"`
	Sessions []SessionReport    `json:"sessions"`
	Files    []FileReport       `json:"files"`
	Summary  Summary            `json:"summary"`
	Warnings []manifest.Warning `json:"warnings"`
	// Error is set when the apply failed (and was rolled back).
	Error string `json:"error,omitempty"`
}

// SessionReport describes one transcript.
type SessionReport struct {
	ID         string `json:"id"`
	Agent      string `json:"agent"`
	Transcript string `json:"transcript"`
	Cwd        string `json:"cwd"`
	Ops        int    `json:"ops"`
	Warnings   int    `json:"warnings"`
	EndState   string `json:"end_state"`
}

// FileReport describes one file.
type FileReport struct {
	Path       string   `json:"path"`
	AgentPath  string   `json:"agent_path"`
	Action     Action   `json:"action"`
	Confidence string   `json:"confidence"`
	Ops        int      `json:"ops"`
	SHA256     string   `json:"sha256"`
	Reason     string   `json:"reason"`
	From       string   `json:"from,omitempty"`
	Backup     string   `json:"backup,omitempty"`
	Conflicts  int      `json:"conflicts,omitempty"`
	Drift      []string `json:"drift,omitempty"`
	Fuzz       []string `json:"fuzz,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// Summary counts the outcome.
type Summary struct {
	Ops                int `json:"ops"`
	OpsApplied         int `json:"ops_applied"`
	OpsFailedInSession int `json:"ops_failed_in_session"`
	OpsRejected        int `json:"ops_rejected"`
	OpsUnknown         int `json:"ops_unknown"`
	OpsShell           int `json:"ops_shell"`
	OpsDuplicate       int `json:"ops_duplicate"`
	Files              int `json:"files"`
	Written            int `json:"written"`
	Unchanged          int `json:"unchanged"`
	Conflicts          int `json:"conflicts"`
	OutsideRoot        int `json:"outside_root"`
	Unrecoverable      int `json:"unrecoverable"`
	Drift              int `json:"drift"`
}

func buildReport(inputs []Input, plans []*FilePlan, st Stats, dry bool) Report {
	r := Report{Schema: Schema, DryRun: dry, Sessions: []SessionReport{}, Files: []FileReport{}, Warnings: []manifest.Warning{}}
	for _, in := range inputs {
		s := in.Session
		r.Sessions = append(r.Sessions, SessionReport{ID: s.ID, Agent: string(s.Agent), Transcript: s.Transcript, Cwd: s.Cwd,
			Ops: len(in.Ops), Warnings: len(s.Warnings), EndState: string(s.EndState)})
		r.Warnings = append(r.Warnings, s.Warnings...)
	}
	r.Summary = Summary{Ops: st.Ops, OpsApplied: st.Applied, OpsFailedInSession: st.Failed, OpsRejected: st.Rejected,
		OpsUnknown: st.Unknown, OpsShell: st.Shell, OpsDuplicate: st.Duplicates}
	sort.SliceStable(plans, func(a, b int) bool { return plans[a].Path() < plans[b].Path() })
	for _, p := range plans {
		f := p.File
		fr := FileReport{Path: p.Path(), AgentPath: f.Path, Action: p.Action, Confidence: string(f.Confidence), Ops: f.Ops,
			SHA256: p.SHA256(), Reason: p.Reason, Conflicts: p.Conflicts, Drift: f.Drift, Fuzz: f.Fuzz, Notes: f.Notes}
		if p.From != nil {
			fr.From = p.From.Rel
		}
		if p.Backup != nil {
			fr.Backup = p.Backup.Rel
		}
		if fr.Reason == "" && len(f.Notes) > 0 {
			fr.Reason = f.Notes[len(f.Notes)-1]
		}
		r.Files = append(r.Files, fr)
		r.Summary.Files++
		r.Summary.Drift += len(f.Drift)
		if p.Written() && p.Mapped {
			r.Summary.Written++
		}
		switch p.Action {
		case ActUnchanged:
			r.Summary.Unchanged++
		case ActConflict:
			r.Summary.Conflicts++
		case ActOutsideRoot:
			r.Summary.OutsideRoot++
		case ActUnrecoverable:
			r.Summary.Unrecoverable++
		}
	}
	return r
}

// Diff returns the unified diff of what the plan does to the host file.
func Diff(p *FilePlan) string {
	if !p.Mapped {
		return ""
	}
	before := ""
	if p.Host.Exists {
		before = p.Host.Text
	}
	oldName, newName := "a/"+p.Target.Rel, "b/"+p.Target.Rel
	switch {
	case p.Action == ActMove && p.From != nil:
		oldName = "a/" + p.From.Rel
		before = ""
	case p.Backup != nil:
		newName = "b/" + p.Backup.Rel
		return UnifiedDiff(oldName, newName, before, p.File.Final.Text)
	case p.Action == ActConflict && !p.Write.Known:
		return UnifiedDiff(oldName, newName+" (recovered, not written)", before, p.File.Final.Text)
	}
	if !p.Write.Known {
		return ""
	}
	after := p.Write.Text
	if !p.Write.Exists {
		newName, after = "/dev/null", ""
	}
	if !p.Host.Exists {
		oldName = "/dev/null"
	}
	return UnifiedDiff(oldName, newName, before, after)
}
