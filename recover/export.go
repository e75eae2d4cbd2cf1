package recover

import (
	"context"
	"sort"

	"github.com/agentsandbox/sandbox/manifest"
)

// Export replays the sources as Recover does and writes the export
// manifest: the operations as they stream by, then the sessions and every
// file's reconstruction. Host copies (for files the transcripts hold no
// evidence of) are read through the mapping of opts (--base, --dest, --map).
// redact, when set, replaces likely secrets before anything is written.
func Export(ctx context.Context, sources []Source, fsys FS, opts Options, w *manifest.Writer, redact *manifest.Redactor) (Stats, error) {
	headers := headersOf(sources)
	rules := append([]Rule{}, opts.Maps...)
	for _, h := range headers {
		if h.Cwd == "" {
			continue
		}
		switch {
		case opts.Base != "":
			rules = append(rules, Rule{From: h.Cwd, To: opts.Base})
		case opts.Dest != "":
			rules = append(rules, Rule{From: h.Cwd, To: opts.Dest})
		case opts.Repo != "":
			rules = append(rules, Rule{From: h.Cwd, To: opts.Repo})
		}
	}
	m, err := NewMapper(dedupRules(rules))
	if err != nil {
		return Stats{}, err
	}
	// The start commit, where the repository of the host copies holds it:
	// the manifest then carries the start recover would use.
	starts, err := findStarts(headers, rules, opts)
	if err != nil {
		return Stats{}, err
	}
	tee := &opWriter{w: w, redact: redact}
	r, err := Replay(ctx, sources, fsys, Stage{Ends: m, Bases: m, Starts: starts, BaseName: baseName(opts),
		IncludeUnknown: opts.IncludeUnknown, SHA256States: true, Each: tee.add})
	if err != nil {
		return Stats{}, err
	}
	if tee.err != nil {
		return Stats{}, tee.err
	}
	sessions, files, st := r.Sessions, r.Files, r.Stats
	sort.SliceStable(files, func(a, b int) bool { return files[a].Path < files[b].Path })
	out := make([]manifest.File, 0, len(files))
	for _, f := range files {
		mf := manifestFile(f)
		if redact != nil {
			redact.File(&mf)
		}
		out = append(out, mf)
	}
	var reds []manifest.Redaction
	if redact != nil {
		reds = redact.Redactions()
		if reds == nil {
			reds = []manifest.Redaction{}
		}
	}
	return st, w.Close(sessions, out, reds)
}

type opWriter struct {
	w      *manifest.Writer
	redact *manifest.Redactor
	err    error
}

func (t *opWriter) add(op *manifest.Op) {
	// The replay saw op first: redaction must not change what is
	// reconstructed.
	if t.err != nil {
		return
	}
	if t.redact != nil {
		c := *op
		c.Evidence = append([]manifest.Evidence{}, op.Evidence...)
		c.Edits = append([]manifest.Edit{}, op.Edits...)
		if op.Patch != nil {
			p := *op.Patch
			p.Hunks = append([]manifest.Hunk{}, op.Patch.Hunks...)
			for i := range p.Hunks {
				chunks := make([]manifest.Chunk, len(p.Hunks[i].Chunks))
				for j, ch := range p.Hunks[i].Chunks {
					ch.OldLines = append([]string{}, ch.OldLines...)
					ch.NewLines = append([]string{}, ch.NewLines...)
					chunks[j] = ch
				}
				p.Hunks[i].Chunks = chunks
			}
			c.Patch = &p
		}
		if op.Notebook != nil {
			nb := *op.Notebook
			c.Notebook = &nb
		}
		t.redact.Op(&c)
		op = &c
	}
	t.err = t.w.Op(*op)
}
