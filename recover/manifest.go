package recover

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
)

// manifestFile returns a reconstructed file as a manifest entry, with its
// start and final content, and the sha256 of every state it went through
// when it was reconstructed with SHA256States (export does; the keyed
// hashes of a recovery mean nothing to another process, and are left out).
func manifestFile(f *FileResult) manifest.File {
	m := manifest.File{Path: f.Path, Sessions: f.Sessions, Confidence: string(f.Confidence), Ops: f.Ops,
		MovedFrom: f.MovedFrom, Reason: f.Reason, Drift: f.Drift, Fuzz: f.Fuzz, Notes: f.Notes, Base: f.Base,
		Start: manifest.NewState(f.Start.Known, f.Start.Exists, f.Start.Text, true, sum),
		Final: manifest.NewState(f.Final.Known, f.Final.Exists, f.Final.Text, true, sum)}
	if f.sha {
		for h := range f.states {
			m.States = append(m.States, fmt.Sprintf("%x", h))
		}
		sort.Strings(m.States)
	}
	return m
}

func fromState(s manifest.State, what, path string) (Content, error) {
	switch s.State {
	case manifest.StateUnknown, "":
		return Content{}, nil
	case manifest.StateAbsent:
		return Content{Known: true}, nil
	case manifest.StateContent:
		if s.Content == nil {
			return Content{}, nil // a digest without the content: unknown here
		}
		text, err := s.Text()
		if err != nil {
			return Content{}, fmt.Errorf("%s: %s content: %w", path, what, err)
		}
		if s.SHA256 != "" && sum(text) != s.SHA256 {
			return Content{}, fmt.Errorf("%s: %s content does not match its sha256 (the manifest was altered or truncated)", path, what)
		}
		return Content{Known: true, Exists: true, Text: text}, nil
	}
	return Content{}, fmt.Errorf("%s: %s state %q", path, what, s.State)
}

// fileFromManifest turns a manifest entry back into a reconstructed file.
func fileFromManifest(m manifest.File) (*FileResult, error) {
	f := &FileResult{Path: m.Path, Sessions: m.Sessions, Confidence: Confidence(m.Confidence), Ops: m.Ops,
		MovedFrom: m.MovedFrom, Reason: m.Reason, Drift: m.Drift, Fuzz: m.Fuzz, Notes: m.Notes, states: map[[32]byte]bool{}, sha: true,
		Kind: m.Kind, Outside: m.Outside, Base: m.Base}
	var err error
	if m.Redacted {
		// --redact put placeholders where the content had secrets: it is
		// not the file's (and no longer matches its sha256), so it is
		// graded redacted, and written only when asked to be.
		f.Start, f.Final = redactedState(m.Start), redactedState(m.Final)
		f.Confidence, f.Reason = Redacted, "the manifest's content was redacted (export --redact): the secrets are not in it"
		if ph, ok := manifest.IntroducedPlaceholder(f.Start.Text, f.Final.Text); ok {
			f.Reason = fmt.Sprintf("line %d holds the redaction placeholder %s: the manifest was redacted (export --redact), the secret is not in it", ph.Line, ph.Text)
		}
	} else {
		if f.Start, err = fromState(m.Start, "start", m.Path); err != nil {
			return nil, err
		}
		if f.Final, err = fromState(m.Final, "final", m.Path); err != nil {
			return nil, err
		}
	}
	for _, h := range m.States {
		// hex, not fmt.Sscanf("%x"): that fills no array, and every state
		// read back was dropped, so a host copy behind the session was a
		// conflict after an export that was an update after a recover.
		var k [32]byte
		if b, err := hex.DecodeString(h); err == nil && len(b) == len(k) {
			copy(k[:], b)
			f.states[k] = true
		}
	}
	if f.Confidence == "" {
		f.Confidence = Exact
	}
	if !f.Final.Known && f.Confidence != Unrecoverable {
		f.Confidence = Unrecoverable
		if f.Reason == "" {
			f.Reason = "the manifest does not carry the file's content"
		}
	}
	return f, nil
}

// ApplyManifest plans and applies a manifest. A manifest that carries the
// session's operations (sandbox export) is replayed exactly as recover
// replays the transcript, against the destination's copies, so the same
// session gives the same plan, actions and bytes either way; its files
// section only adds what the operations cannot tell (a redacted file is
// never written; a file the exporter could pin better keeps its grade).
// A manifest of files only (the simple form) is planned and applied one file
// at a time, so one of any size applies with one file's content in memory.
// each, when set, sees every plan before it is applied (to print its diff).
// A failure rolls back through the journals, leaving the host as it was.
func ApplyManifest(ctx context.Context, r io.Reader, fsys FS, opts Options, each func(*FilePlan)) (*Result, error) {
	if opts.OnConflict == "" {
		opts.OnConflict = OnConflictSkip
	}
	res := &Result{}
	rep := &res.Report
	*rep = Report{Schema: Schema, DryRun: opts.DryRun, Sessions: []SessionReport{}, Files: []FileReport{}, Warnings: []manifest.Warning{}}
	var m, bm *Mapper
	claimed := map[Target]string{}
	a := &applier{fsys: fsys}
	if !opts.DryRun {
		a.journals = newJournalSet(fsys, time.Now(), opts.JournalKey)
		res.Journals = a.journals
	}
	var sessions []manifest.Session
	var ops []manifest.Op
	unlock := func() {}
	defer func() { unlock() }()
	replay := map[string]*FileResult{} // manifest files that override the replay
	var applyErr error
	rd := manifest.Reader{
		Op: func(op manifest.Op) error {
			ops = append(ops, op)
			return nil
		},
		Sessions: func(ss []manifest.Session) error {
			sessions = ss
			rules := append([]Rule{}, opts.Maps...)
			for i := range ss {
				cwd := ss[i].Cwd
				if cwd == "" && len(ops) == 0 {
					cwd = manifest.RelativeRoot // the simple form's relative paths
				}
				if opts.Dest != "" && !mappedBy(opts.Maps, cwd) {
					rules = append(rules, Rule{From: cwd, To: opts.Dest})
				}
			}
			var err error
			if len(ops) > 0 {
				// A manifest of sessions: one project per destination, as recover.
				if rules, err = hostRules(ss, opts); err != nil {
					return err
				}
			}
			if m, err = NewMapper(dedupRules(rules)); err != nil {
				return err
			}
			u, err := lockRules(ctx, opts, rules)
			if err != nil {
				return err
			}
			unlock = u
			bm, err = baseMapper(ss, opts, m)
			return err
		},
		File: func(mf manifest.File) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := fileFromManifest(mf)
			if err != nil {
				return err
			}
			if len(ops) > 0 {
				replay[f.Path] = f
				return nil
			}
			p := planOne(f, m, fsys, opts.OnConflict, opts.Redacted, claimed)
			if !opts.DryRun {
				if err := a.apply(p); errors.Is(err, errChanged) {
					changed(p)
				} else if err != nil {
					addFile(rep, p)
					applyErr = a.fail(p.Target, err)
					return applyErr
				}
			}
			if each != nil {
				each(p)
			}
			addFile(rep, p)
			if opts.DryRun {
				return nil
			}
			// The content is written: keep only the report.
			p.Host.Text, p.Write.Text, f.Final.Text, f.Start.Text = "", "", "", ""
			return nil
		},
	}
	if err := rd.Read(r); err != nil {
		if applyErr != nil {
			rep.Summary.Written = 0
			return res, applyErr
		}
		if a.journals != nil && len(a.journals.Written()) > 0 {
			// A manifest that breaks off part way: undo what it already wrote.
			ae := a.fail(Target{Root: opts.Dest, Rel: "."}, err)
			rep.Summary.Written = 0
			return res, ae
		}
		var pe *ProjectsError
		var be *BusyError
		if errors.As(err, &pe) || errors.As(err, &be) {
			return nil, err
		}
		return res, fmt.Errorf("reading the manifest: %w", err)
	}
	if len(ops) == 0 {
		for _, s := range sessions {
			rep.Sessions = append(rep.Sessions, SessionReport{ID: s.ID, Agent: string(s.Agent), Transcript: s.Transcript, Cwd: s.Cwd,
				Warnings: len(s.Warnings), EndState: string(s.EndState)})
			rep.Warnings = append(rep.Warnings, s.Warnings...)
		}
		if a.journals != nil {
			for _, j := range a.journals.Written() {
				rep.Journals = append(rep.Journals, j.Dir())
			}
		}
		return res, nil
	}
	return replayManifest(ctx, res, sessions, ops, replay, m, bm, fsys, opts, each)
}

// replayManifest replays a manifest's operations as recover replays a
// transcript, then plans and applies the files as recover does.
func replayManifest(ctx context.Context, res *Result, sessions []manifest.Session, ops []manifest.Op, fromFiles map[string]*FileResult,
	m, bm *Mapper, fsys FS, opts Options, each func(*FilePlan)) (*Result, error) {
	if m == nil {
		return res, errors.New("reading the manifest: operations without sessions")
	}
	src := &manifestOps{ops: ops, counts: make([]int, len(sessions)), index: map[string]int{}}
	for i, s := range sessions {
		src.index[s.ID] = i
	}
	r, err := Replay(ctx, []Source{src}, fsys, Stage{Ends: m, Bases: bm, IncludeUnknown: opts.IncludeUnknown, Sessions: sessions})
	if err != nil {
		return res, err
	}
	files, stats, counts := r.Files, r.Stats, src.counts
	for i, f := range files {
		// A replay that found a placeholder the session wrote stays redacted
		// whatever grade the files section claims (a manifest exported
		// before the grade existed says exact).
		if mf, ok := fromFiles[f.Path]; ok && (mf.Confidence.rank() > f.Confidence.rank() && f.Confidence != Redacted || isRedacted(mf)) {
			files[i] = mf
		}
	}
	plans, err := plan(files, m, fsys, opts.OnConflict, opts.Redacted)
	if err != nil {
		return res, err
	}
	res.Plans, res.Files, res.warnings = plans, files, r.Warnings
	if each != nil {
		for _, p := range plans {
			each(p)
		}
	}
	return finishRun(ctx, res, sessions, counts, stats, fsys, opts, res.Journals)
}

// isRedacted tells a manifest file whose content holds redaction
// placeholders (--redact replaced secrets, or the transcript it was
// exported from was redacted): its grade wins over the replay's, whose
// operations were redacted with it.
func isRedacted(f *FileResult) bool { return f.Confidence == Redacted }

// redactedState reads a state whose content --redact changed: its sha256
// is the original's, and cannot be checked.
func redactedState(s manifest.State) Content {
	switch s.State {
	case manifest.StateAbsent:
		return Content{Known: true}
	case manifest.StateContent:
		if text, err := s.Text(); err == nil && s.Content != nil {
			return Content{Known: true, Exists: true, Text: text}
		}
	}
	return Content{}
}

// manifestOps is a Source over a manifest's operations, already in replay
// order, that lets each go once it is replayed and counts them by session.
type manifestOps struct {
	ops    []manifest.Op
	i      int
	counts []int
	index  map[string]int
}

func (s *manifestOps) Header() manifest.Session  { return manifest.Session{} }
func (s *manifestOps) Session() manifest.Session { return manifest.Session{} }

func (s *manifestOps) Next() (manifest.Op, bool) {
	if s.i >= len(s.ops) {
		return manifest.Op{}, false
	}
	op := s.ops[s.i]
	s.ops[s.i] = manifest.Op{} // replayed: let it go
	s.i++
	if n, ok := s.index[op.Session]; ok {
		s.counts[n]++
	}
	return op, true
}
