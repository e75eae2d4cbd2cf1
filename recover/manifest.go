package recover

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
)

// ManifestFile returns a reconstructed file as a manifest entry, with its
// start and final content.
func ManifestFile(f *FileResult) manifest.File {
	m := manifest.File{Path: f.Path, Sessions: f.Sessions, Confidence: string(f.Confidence), Ops: f.Ops,
		MovedFrom: f.MovedFrom, Reason: f.Reason, Drift: f.Drift, Fuzz: f.Fuzz, Notes: f.Notes,
		Start: manifest.NewState(f.Start.Known, f.Start.Exists, f.Start.Text, true, sum),
		Final: manifest.NewState(f.Final.Known, f.Final.Exists, f.Final.Text, true, sum)}
	for h := range f.states {
		m.States = append(m.States, fmt.Sprintf("%x", h))
	}
	sort.Strings(m.States)
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

// FileFromManifest turns a manifest entry back into a reconstructed file.
func FileFromManifest(m manifest.File) (*FileResult, error) {
	f := &FileResult{Path: m.Path, Sessions: m.Sessions, Confidence: Confidence(m.Confidence), Ops: m.Ops,
		MovedFrom: m.MovedFrom, Reason: m.Reason, Drift: m.Drift, Fuzz: m.Fuzz, Notes: m.Notes, states: map[[32]byte]bool{}}
	if m.Redacted {
		// Its content is placeholders, not the file's (and no longer matches its sha256).
		f.Confidence = Unrecoverable
		f.Reason = "the manifest's content was redacted: it is not the file's, and is not written"
		return f, nil
	}
	var err error
	if f.Start, err = fromState(m.Start, "start", m.Path); err != nil {
		return nil, err
	}
	if f.Final, err = fromState(m.Final, "final", m.Path); err != nil {
		return nil, err
	}
	for _, h := range m.States {
		var k [32]byte
		if _, err := fmt.Sscanf(h, "%x", &k); err == nil {
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

// ApplyManifest plans and applies a manifest one file at a time, so a
// manifest of any size is applied with one file's content in memory. each,
// when set, sees every plan before it is applied (to print its diff). A
// failure rolls back through the journals, leaving the host as it was.
func ApplyManifest(ctx context.Context, r io.Reader, fsys FS, opts Options, each func(*FilePlan)) (*Result, error) {
	if opts.OnConflict == "" {
		opts.OnConflict = OnConflictSkip
	}
	res := &Result{}
	rep := &res.Report
	*rep = Report{Schema: Schema, DryRun: opts.DryRun, Sessions: []SessionReport{}, Files: []FileReport{}, Warnings: []manifest.Warning{}}
	var m *Mapper
	claimed := map[Target]string{}
	a := &applier{fsys: fsys}
	if !opts.DryRun {
		a.journals = NewJournalSet(fsys, time.Now())
		res.Journals = a.journals
	}
	var applyErr error
	rd := manifest.Reader{
		Op: func(op manifest.Op) error {
			st := &rep.Summary
			st.Ops++
			switch {
			case op.Kind == manifest.KindObserve:
				st.Ops--
				st.Observations++
			case op.Kind == manifest.KindShell:
				st.OpsShell++
			}
			switch op.Outcome {
			case manifest.OutcomeApplied:
				if op.Kind != manifest.KindObserve {
					st.OpsApplied++
				}
			case manifest.OutcomeFailed:
				st.OpsFailedInSession++
			case manifest.OutcomeRejected:
				st.OpsRejected++
			default:
				st.OpsUnknown++
			}
			return nil
		},
		Sessions: func(ss []manifest.Session) error {
			rules := append([]Rule{}, opts.Maps...)
			for _, s := range ss {
				rep.Sessions = append(rep.Sessions, SessionReport{ID: s.ID, Agent: string(s.Agent), Transcript: s.Transcript, Cwd: s.Cwd,
					Warnings: len(s.Warnings), EndState: string(s.EndState)})
				rep.Warnings = append(rep.Warnings, s.Warnings...)
				if opts.Dest != "" {
					from := s.Cwd
					if from == "" {
						from = "/"
					}
					rules = append(rules, Rule{From: from, To: opts.Dest})
				}
			}
			var err error
			m, err = NewMapper(dedupRules(rules))
			return err
		},
		File: func(mf manifest.File) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := FileFromManifest(mf)
			if err != nil {
				return err
			}
			if !path.IsAbs(f.Path) && opts.Dest != "" {
				// The simple form may name files relative to the destination.
				f.Path = "/" + f.Path
			}
			p := planOne(f, m, fsys, opts.OnConflict, claimed)
			if each != nil {
				each(p)
			}
			addFile(rep, p)
			if opts.DryRun {
				return nil
			}
			if err := a.apply(p); err != nil {
				applyErr = a.fail(p.Target, err)
				return applyErr
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
		if len(a.journals.Written()) > 0 {
			// A manifest that breaks off part way: undo what it already wrote.
			ae := a.fail(Target{Root: opts.Dest, Rel: "."}, err)
			rep.Summary.Written = 0
			return res, ae
		}
		return res, fmt.Errorf("reading the manifest: %w", err)
	}
	for _, j := range a.journals.Written() {
		rep.Journals = append(rep.Journals, j.Dir())
	}
	return res, nil
}
