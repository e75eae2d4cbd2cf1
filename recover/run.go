package recover

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
)

// Schema is the version of the recover report.
const Schema = "sandbox.recover/v1"

// Options configure a recovery.
type Options struct {
	// Dest re-roots every session's working directory onto this directory.
	Dest string
	// JournalKey seals the journal an apply writes (see KeyFunc): required
	// to write anything.
	JournalKey KeyFunc
	// Maps are explicit prefix mappings; they win over Dest.
	Maps []Rule
	// Base, when set, is where the starting content of files is read from
	// (the session's cwd re-rooted onto it); by default the destination.
	Base string
	// BaseRev, when set, names a revision (--base git:REV) whose tree holds
	// the files as the sessions started, below a start commit the
	// transcript names and above the host.
	BaseRev string
	// Repo is the git repository to look for the start commit in; by
	// default the one holding the destination.
	Repo           string
	DryRun         bool
	OnConflict     ConflictPolicy
	IncludeUnknown bool
	// Redacted says whether files graded redacted are written (skip, the
	// default, lists them).
	Redacted RedactedPolicy
	// LockDir is where destination locks are taken (the state directory);
	// empty: no lock.
	LockDir string
	// LockWait, when set, is told once that another sandbox is writing to
	// a destination, and the lock is then waited for (until the context
	// ends) instead of refused with the *BusyError: a harness run bringing
	// an agent's work back must not give up for a lock held a moment.
	LockWait func(*BusyError)
	// DestPerSession puts each project (sessions that share a working
	// directory) into its own folder of Dest, named after its first session.
	DestPerSession bool
	// Filter, when set, keeps only the files whose path relative to the
	// destination it accepts (--path).
	Filter func(rel string) bool
}

// lockRules takes the write lock of every destination the rules map onto,
// held from the plan to the last write (none for a dry run); with
// opts.LockWait, a busy destination is waited for.
func lockRules(ctx context.Context, opts Options, rules []Rule) (func(), error) {
	if opts.DryRun || opts.LockDir == "" {
		return func() {}, nil
	}
	var roots []string
	for _, r := range rules {
		roots = append(roots, r.To)
	}
	for said := false; ; said = true {
		unlock, err := LockDests(opts.LockDir, roots)
		var busy *BusyError
		if opts.LockWait == nil || !errors.As(err, &busy) {
			return unlock, err
		}
		if !said {
			opts.LockWait(busy)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ProjectsError refuses to replay sessions of different working
// directories into one destination: their files would mix.
type ProjectsError struct {
	// Cwds are the distinct working directories, each with a session.
	Cwds [][2]string
}

func (e *ProjectsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the selected sessions worked in %d different directories, and one --dest would mix their files:", len(e.Cwds))
	for _, c := range e.Cwds {
		fmt.Fprintf(&b, " %s (session %s);", c[0], c[1])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// destRules maps every session's working directory onto the destination:
// all onto Dest when they share one, each project onto its own folder with
// DestPerSession, and an error otherwise. Sessions an explicit --map covers
// are left to it.
func destRules(headers []manifest.Session, opts Options) ([]Rule, error) {
	if opts.Dest == "" {
		return nil, nil
	}
	var cwds [][2]string
	seen := map[string]string{}
	for _, h := range headers {
		if h.Cwd == "" || mappedBy(opts.Maps, h.Cwd) {
			continue
		}
		if _, ok := seen[h.Cwd]; !ok {
			seen[h.Cwd] = h.ID
			cwds = append(cwds, [2]string{h.Cwd, h.ID})
		}
	}
	var rules []Rule
	switch {
	case len(cwds) <= 1 && !opts.DestPerSession:
		for _, c := range cwds {
			rules = append(rules, Rule{From: c[0], To: opts.Dest})
		}
	case opts.DestPerSession:
		for _, c := range cwds {
			rules = append(rules, Rule{From: c[0], To: filepath.Join(opts.Dest, FolderName(c[1]))})
		}
	default:
		return nil, &ProjectsError{Cwds: cwds}
	}
	return rules, nil
}

// mappedBy reports whether an explicit rule covers dir.
func mappedBy(rules []Rule, dir string) bool {
	for _, r := range rules {
		if dir == r.From || strings.HasPrefix(dir, strings.TrimSuffix(r.From, "/")+"/") {
			return true
		}
	}
	return false
}

// FolderName makes a session id safe as one path element (a folder of
// --dest-per-session, a report's file name).
func FolderName(id string) string {
	out := []rune{}
	for _, c := range id {
		if c == '/' || c == '\\' || c == 0 || c < ' ' {
			c = '_'
		}
		out = append(out, c)
	}
	s := string(out)
	if s == "" || s == "." || s == ".." {
		s = "session"
	}
	return s
}

// Source is one transcript's session and operations, read as a stream so
// that a transcript of any size is replayed in bounded memory.
type Source interface {
	// Header returns the session's identity and working directory; it may
	// wait for the transcript's first lines to be read.
	Header() manifest.Session
	// Next returns the next operation in line order, or false at the end.
	Next() (manifest.Op, bool)
	// Session returns the complete session (end state, warnings) once Next
	// has returned false.
	Session() manifest.Session
}

// SliceSource is a Source over operations already in memory.
type SliceSource struct {
	S   manifest.Session
	Ops []manifest.Op
	i   int
}

// Header implements Source.
func (s *SliceSource) Header() manifest.Session { return s.S }

// Session implements Source.
func (s *SliceSource) Session() manifest.Session { return s.S }

// Next implements Source.
func (s *SliceSource) Next() (manifest.Op, bool) {
	if s.i >= len(s.Ops) {
		return manifest.Op{}, false
	}
	s.i++
	return s.Ops[s.i-1], true
}

// Result is a finished (or dry-run) recovery.
type Result struct {
	Report Report
	Plans  []*FilePlan
	Files  []*FileResult
	// Journals are where the apply recorded its changes.
	Journals *JournalSet
	// Starts are the start commits found for the sessions.
	Starts *Starts
	// NotWritable, when set, lists the files a write would be refused
	// (a dry run says so; a real run is refused before its first write).
	NotWritable *NotWritableError
	// warnings from the replay, for the report.
	warnings []manifest.Warning
}

// Partial reports whether any file was left unrecovered.
func (r *Result) Partial() bool {
	s := r.Report.Summary
	return s.Conflicts+s.OutsideRoot+s.Unrecoverable+s.Skipped+s.LostCalls > 0
}

// Recover replays the operations of sources (merged in time order), plans
// the files against the host and, unless opts.DryRun, applies the plan
// through fsys. An apply error leaves the host as it was and is returned
// with the result of the plan.
func Recover(ctx context.Context, sources []Source, fsys FS, opts Options) (*Result, error) {
	p, err := Prepare(ctx, sources, fsys, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if opts.DryRun {
		return p.Preview(ctx), nil
	}
	return p.Apply(ctx)
}

// Prepared is a recovery replayed and planned against the host, not yet
// applied: Preview reports it as a dry run does, Apply writes it. The
// transcripts are read once, whichever is called, and the destinations
// stay locked against another recovery until Close.
type Prepared struct {
	res      *Result
	sessions []manifest.Session
	counts   []int
	stats    Stats
	fsys     FS
	opts     Options
	unlock   func()
}

// Prepare replays the operations of sources (merged in time order) and
// plans the files against the host, reading through fsys and writing
// nothing.
func Prepare(ctx context.Context, sources []Source, fsys FS, opts Options) (*Prepared, error) {
	if opts.OnConflict == "" {
		opts.OnConflict = OnConflictSkip
	}
	headers := headersOf(sources)
	rules, err := hostRules(headers, opts)
	if err != nil {
		return nil, err
	}
	m, err := NewMapper(dedupRules(rules))
	if err != nil {
		return nil, err
	}
	unlock, err := lockRules(ctx, opts, rules)
	if err != nil {
		return nil, err
	}
	p := &Prepared{fsys: fsys, opts: opts, unlock: unlock}
	fail := func(err error) (*Prepared, error) {
		p.Close()
		return nil, err
	}
	bm, err := baseMapper(headers, opts, m)
	if err != nil {
		return fail(err)
	}
	starts, err := findStarts(headers, rules, opts)
	if err != nil {
		return fail(err)
	}
	r, err := Replay(ctx, sources, fsys, Stage{Ends: m, Bases: bm, Starts: starts, BaseName: baseName(opts), IncludeUnknown: opts.IncludeUnknown})
	if err != nil {
		return fail(err)
	}
	p.sessions, p.counts = r.Sessions, r.Counts
	files, stats := r.Files, r.Stats
	files = filterFiles(files, m, opts.Filter)
	plans, err := plan(files, m, fsys, opts.OnConflict, opts.Redacted)
	if err != nil {
		return fail(err)
	}
	p.stats = stats
	p.res = &Result{Plans: plans, Files: files, warnings: r.Warnings, Starts: starts}
	return p, nil
}

// Preview is the result of the prepared recovery as a dry run reports it:
// nothing is written.
func (p *Prepared) Preview(ctx context.Context) *Result {
	res := *p.res
	opts := p.opts
	opts.DryRun = true
	out, _ := finishRun(ctx, &res, p.sessions, p.counts, p.stats, p.fsys, opts, newJournalSet(p.fsys, time.Now(), opts.JournalKey))
	out.Starts.report(&out.Report)
	return out
}

// Apply writes the prepared recovery through its fsys, journaled; a file
// that changed on the host since the plan is reported as the conflict it
// became, and an apply error leaves the host as it was.
func (p *Prepared) Apply(ctx context.Context) (*Result, error) {
	res := *p.res
	return p.write(ctx, &res)
}

// write applies res's plans, journaled, and reports them.
func (p *Prepared) write(ctx context.Context, res *Result) (*Result, error) {
	opts := p.opts
	opts.DryRun = false
	out, err := finishRun(ctx, res, p.sessions, p.counts, p.stats, p.fsys, opts, newJournalSet(p.fsys, time.Now(), opts.JournalKey))
	if out != nil {
		out.Starts.report(&out.Report)
	}
	return out, err
}

// Choice is what a review took of one file's plan.
type Choice struct {
	// Take writes the file; a file not taken is left as it is on the host
	// (reported as left).
	Take bool
	// Hunks, when set for a Hunkable plan, takes only the hunks of its
	// Hunks that say yes: the file is written as the host's copy with
	// those hunks applied.
	Hunks []bool
}

// ApplyChosen writes the prepared recovery as a review chose it: the
// files choices takes (some only in part), through the same journaled,
// atomic apply as Apply; every other file that would be written is left
// and reported as left. The source of a move is kept when its destination
// is left.
func (p *Prepared) ApplyChosen(ctx context.Context, choices map[*FilePlan]Choice) (*Result, error) {
	res := *p.res
	res.Plans = make([]*FilePlan, len(p.res.Plans))
	byAgent := map[string]*FilePlan{}
	for i, pl := range p.res.Plans {
		c := *pl
		res.Plans[i], byAgent[c.File.Path] = &c, &c
		ch := choices[pl]
		switch {
		case !pl.Written():
		case !ch.Take:
			c.Action, c.Write, c.Backup = ActLeft, Content{}, nil
			c.Reason = "left in review"
		case ch.Hunks != nil && pl.Hunkable():
			hunks := pl.Hunks()
			taken := 0
			for i := range hunks {
				if i < len(ch.Hunks) && ch.Hunks[i] {
					taken++
				}
			}
			switch taken {
			case len(hunks):
			case 0:
				c.Action, c.Write = ActLeft, Content{}
				c.Reason = "left in review (no hunk taken)"
			default:
				c.Write = Content{Known: true, Exists: true, Text: ApplyHunks(pl.hostText(), hunks, ch.Hunks)}
				c.Action = ActUpdate
				if !pl.Host.Exists {
					c.Action = ActCreate
				}
				c.Reason = fmt.Sprintf("%d of %d hunks taken in review: the host's copy with those hunks", taken, len(hunks))
			}
		}
	}
	keepSources(res.Plans, byAgent)
	return p.write(ctx, &res)
}

// Plans are the prepared recovery's file plans, in path order: what
// Preview reports and ApplyChosen's choices are keyed by.
func (p *Prepared) Plans() []*FilePlan { return p.res.Plans }

// Warnings are the replay's own warnings (ReplayWarnings of its results).
func (p *Prepared) Warnings() []manifest.Warning { return p.res.warnings }

// Close releases the destinations' locks.
func (p *Prepared) Close() {
	if p.unlock != nil {
		p.unlock()
		p.unlock = nil
	}
}

// ReplayWarnings are the warnings of the replay itself (commands whose
// targets it cannot name, patterns), beside the transcripts' own.
func (r *Result) ReplayWarnings() []manifest.Warning { return r.warnings }

// finishRun applies a recovery's plans (unless it is a dry run) and builds
// its report from what was done: a file that changed on the host between
// the plan and its write is reported as the conflict it became.
func finishRun(ctx context.Context, res *Result, sessions []manifest.Session, counts []int, stats Stats, fsys FS, opts Options, journals *JournalSet) (*Result, error) {
	var err error
	res.NotWritable = unwritable(res.Plans, fsys)
	switch {
	case !opts.DryRun && res.NotWritable != nil:
		err = res.NotWritable
	case !opts.DryRun:
		res.Journals = journals
		if err = apply(ctx, res.Plans, fsys, journals); err == nil {
			for _, j := range journals.Written() {
				if merr := j.markApplied(); merr != nil {
					err = merr
				}
			}
		}
	}
	res.Report = buildReport(sessions, counts, res.Plans, stats, opts.DryRun)
	res.Report.Warnings = append(res.Report.Warnings, res.warnings...)
	if err != nil {
		res.Report.Summary.Written = 0
		return res, err
	}
	for _, j := range journals.Written() {
		res.Report.Journals = append(res.Report.Journals, j.Dir())
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

// mergeInto hands the sources' operations to each in one replay order: by
// time across transcripts, while each transcript keeps its own line order.
// It returns how many operations each source had.
func mergeInto(ctx context.Context, sources []Source, headers []manifest.Session, each func(*manifest.Op)) ([]int, error) {
	counts := make([]int, len(sources))
	heads := make([]*manifest.Op, len(sources))
	next := func(i int) {
		if op, ok := sources[i].Next(); ok {
			if op.Provenance.Time.IsZero() {
				op.Provenance.Time = headers[i].Start
			}
			heads[i] = &op
			counts[i]++
		} else {
			heads[i] = nil
		}
	}
	for i := range sources {
		next(i)
	}
	for n := 0; ; n++ {
		if n&255 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		best := -1
		for i, h := range heads {
			if h != nil && (best < 0 || h.Provenance.Time.Before(heads[best].Provenance.Time)) {
				best = i
			}
		}
		if best < 0 {
			return counts, nil
		}
		each(heads[best])
		next(best)
	}
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
	// Interrupted is set when ^C or TERM cut the command short: the
	// report is not the whole of it.
	Interrupted bool `json:"interrupted,omitempty"`
	// Journals are the journal directories the apply wrote (for undo).
	Journals []string `json:"journals,omitempty"`
	// Validation is the result of --validate, when it ran.
	Validation any `json:"validation,omitempty"`
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
	// GitCommit and GitBranch are what the transcript recorded of its
	// checkout; Base is the start commit used (git:<short hash>) and
	// BaseNote how it was found, or why none was.
	GitCommit string `json:"git_commit,omitempty"`
	GitBranch string `json:"git_branch,omitempty"`
	Model     string `json:"model,omitempty"`
	Base      string `json:"base,omitempty"`
	BaseNote  string `json:"base_note,omitempty"`
}

// FileReport describes one file.
type FileReport struct {
	Path      string `json:"path"`
	AgentPath string `json:"agent_path"`
	// Kind is the kind of artefact, for a file an agent exported as one.
	Kind       string `json:"kind,omitempty"`
	Action     Action `json:"action"`
	Confidence string `json:"confidence"`
	Ops        int    `json:"ops"`
	SHA256     string `json:"sha256"`
	Reason     string `json:"reason"`
	From       string `json:"from,omitempty"`
	Backup     string `json:"backup,omitempty"`
	Conflicts  int    `json:"conflicts,omitempty"`
	// HostLines names the lines of a merge's result that are the host's
	// own changes ("12-14, 40"): they were never in the transcript.
	HostLines string   `json:"host_lines,omitempty"`
	Drift     []string `json:"drift,omitempty"`
	Fuzz      []string `json:"fuzz,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// Base names where the file's starting content came from:
	// "transcript", "git:<short hash>", "host" or "--base" (empty when
	// it is unknown).
	Base string `json:"base"`
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
	// Skipped counts files left alone on purpose: a change of unknown
	// outcome, or the source of a move whose destination was not written.
	Skipped int `json:"skipped"`
	// Left counts files a review chose not to write (sandbox review).
	Left int `json:"left,omitempty"`
	// Stale counts files a shell command changed in a way that could not
	// be replayed; UnknownOutcome those a call of unknown outcome touched;
	// Redacted those whose content or path holds a redaction placeholder.
	Stale          int `json:"stale"`
	UnknownOutcome int `json:"unknown_outcome"`
	Redacted       int `json:"redacted"`
	Drift          int `json:"drift"`
	// Observations counts file states the transcripts show without changing
	// them (full reads, backups); EvidenceChecks counts how often evidence was
	// compared with the replay, EvidenceMismatches how often it disagreed.
	Observations       int `json:"observations"`
	EvidenceChecks     int `json:"evidence_checks"`
	EvidenceMismatches int `json:"evidence_mismatches"`
	// LostCalls counts lines that could not be read and hold a call that
	// may have changed files they do not name (cut before or inside the
	// names): what they changed is missing from the report, so the run is
	// partial.
	LostCalls int `json:"lost_calls,omitempty"`
}

func buildReport(sessions []manifest.Session, counts []int, plans []*FilePlan, st Stats, dry bool) Report {
	r := Report{Schema: Schema, DryRun: dry, Sessions: []SessionReport{}, Files: []FileReport{}, Warnings: []manifest.Warning{}}
	lost := 0
	for i, s := range sessions {
		r.Sessions = append(r.Sessions, SessionReport{ID: s.ID, Agent: string(s.Agent), Transcript: s.Transcript, Cwd: s.Cwd,
			Ops: counts[i], Warnings: len(s.Warnings), EndState: string(s.EndState), GitCommit: s.GitCommit, GitBranch: s.GitBranch, Model: s.Model})
		r.Warnings = append(r.Warnings, s.Warnings...)
		for _, w := range s.Warnings {
			if w.Unnamed {
				lost++
			}
		}
	}
	r.Summary = Summary{LostCalls: lost, Ops: st.Ops, OpsApplied: st.Applied, OpsFailedInSession: st.Failed, OpsRejected: st.Rejected,
		OpsUnknown: st.Unknown, OpsShell: st.Shell, OpsDuplicate: st.Duplicates, Observations: st.Observations,
		EvidenceChecks: st.Checks, EvidenceMismatches: st.Mismatches}
	sort.SliceStable(plans, func(a, b int) bool { return plans[a].Path() < plans[b].Path() })
	for _, p := range plans {
		addFile(&r, p)
	}
	return r
}

// addFile adds a file's plan to a report.
func addFile(r *Report, p *FilePlan) {
	f := p.File
	fr := FileReport{Path: p.Path(), AgentPath: strings.TrimPrefix(f.Path, manifest.RelativeRoot+"/"), Kind: f.Kind, Action: p.Action, Confidence: string(p.Grade()), Base: f.Base, Ops: f.Ops,
		SHA256: p.SHA256(), Reason: p.Reason, Conflicts: p.Conflicts, HostLines: p.HostLines, Drift: f.Drift, Fuzz: f.Fuzz, Notes: f.Notes}
	if p.From != nil {
		fr.From = p.From.Rel
	}
	if p.Backup != nil {
		fr.Backup = p.Backup.Rel
	}
	if fr.Reason == "" && (f.Confidence == Stale || f.Confidence == UnknownOutcome || f.Confidence == Redacted) {
		fr.Reason = f.Reason // the grade's reason comes first
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
	case ActSkipped:
		r.Summary.Skipped++
	case ActLeft:
		r.Summary.Left++
	}
	switch f.Confidence {
	case Stale:
		r.Summary.Stale++
	case UnknownOutcome:
		r.Summary.UnknownOutcome++
	case Redacted:
		r.Summary.Redacted++
	}
}

// diff returns the unified diff of what the plan does to the host file.
func diff(p *FilePlan) string {
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
