package recover

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// shell replays a shell command that changed files. What a real shell
// parser could read exactly is replayed in the command's own order: a
// delete, move or copy of literal paths, a quoted heredoc written whole or
// appended, a touch. Any other write cannot be replayed, so the file it names
// keeps the last content known before it, graded stale, until evidence
// pins it again.
func (r *Reconstructor) shell(op *manifest.Op, replay bool) {
	if op.Effects == nil {
		r.shellLegacy(op, replay)
		return
	}
	switch {
	case replay:
		for _, e := range op.Effects {
			r.effect(op, e)
		}
	case op.Outcome == manifest.OutcomeFailed:
		// A single command that failed most likely changed nothing; in a
		// list of commands, any of those before the failure may have run.
		n := 0
		for _, e := range op.Effects {
			if e.Kind == manifest.ShellRun {
				n += 2 // a script that failed may have run any part of itself
				continue
			}
			n += len(e.Paths)
			if e.Bound {
				r.settleStash("") // a git stash pop that failed left its stash in doubt
			}
			if len(e.Patterns)+len(e.Specs) > 0 {
				// A pattern that matched one file and one that matched
				// none fail together (sed -i … *.go *.ts), having changed
				// the file: whatever it matched may have changed.
				matched, unsure := r.matching(compileGlobs(e.Patterns, e.Specs), e.Recursive || e.Kind == manifest.ShellMove, false)
				for _, p := range append(matched, unsure...) {
					for _, q := range append(r.under(p), p) {
						if f, known := r.files[r.key(q)]; known {
							before := len(f.res.Notes)
							r.staleFile(q, op, "a shell command that failed part-way may have changed it (%s)", firstLine(op.Command))
							if e.Bound {
								// As for one that succeeded (staleUnder): a
								// file the session only read is not its work.
								f.boundNotes += len(f.res.Notes) - before
							}
						}
					}
				}
			}
		}
		for _, e := range op.Effects {
			if e.Kind == manifest.ShellRun {
				continue
			}
			for _, p := range e.Paths {
				if _, known := r.files[r.key(p)]; n == 1 || !known {
					// A file nothing else speaks of gets no entry: what a
					// failed command may have left in it is unknowable.
					r.note(p, op, "a shell command that failed named it (%s); it probably did not change it", firstLine(op.Command))
				} else {
					r.staleFile(p, op, "a shell command that failed part-way may have changed it (%s)", firstLine(op.Command))
				}
			}
		}
	default:
		// Rejected calls never ran; unknown ones are graded by unknownOutcome.
		if op.Outcome == manifest.OutcomeRejected {
			for _, p := range op.Paths {
				r.note(p, op, "a shell command that was rejected named it (%s); it did not run", firstLine(op.Command))
			}
		}
	}
}

// note adds a remark to a file the replay already knows; a file only named
// by a command that did not run gets no entry of its own.
func (r *Reconstructor) note(p string, op *manifest.Op, format string, args ...any) {
	if f, ok := r.files[r.key(p)]; ok {
		f.res.Notes = append(f.res.Notes, where(op)+": "+fmt.Sprintf(format, args...))
	}
}

// staleFile marks a file as changed by something that cannot be replayed.
func (r *Reconstructor) staleFile(p string, op *manifest.Op, format string, args ...any) {
	f := r.file(p, op, false)
	why := where(op) + ": " + fmt.Sprintf(format, args...)
	if f.cur.Known && !f.cur.Exists {
		// The replay has no such file (deleted, or absent from the start),
		// yet a command changed it: it may exist now, holding anything.
		// "The last content known" would be the absence, and recovering it
		// would delete a host's copy on the strength of a guess.
		f.start(f.cur)
		f.cur, f.pinned, f.crlf, f.guess, f.stale = Content{}, false, false, false, ""
		f.res.Reason = why + "; the replay had no such file before it, so whether it exists now, and what it holds, is unknown"
		if n := len(f.res.Notes); n == 0 || f.res.Notes[n-1] != why {
			f.res.Notes = append(f.res.Notes, why)
		}
		return
	}
	f.stale = why + lastKnown
	if n := len(f.res.Notes); n == 0 || f.res.Notes[n-1] != why {
		f.res.Notes = append(f.res.Notes, why) // once per command, however often it names the file
	}
}

// lastKnown ends the reason of a file a call changed beyond the replay.
const lastKnown = "; the recovered content is the last one known before it"

// effect replays one effect of a shell command that succeeded.
func (r *Reconstructor) effect(op *manifest.Op, e manifest.ShellEffect) {
	if e.Kind == manifest.ShellRun {
		return // read by runs before
	}
	if e.Bound {
		r.bound(op, e)
		return
	}
	if len(e.Patterns)+len(e.Specs) > 0 {
		r.globEffect(op, e)
		return
	}
	if e.Cond {
		// It may or may not have run: nothing about the files is certain.
		if len(e.Paths) == 0 && e.Kind != manifest.ShellTouch {
			r.warnOnce(op, "a shell command may have changed files it does not name (%s: %s): files it touched may differ from what is recovered", e.Verb, firstLine(op.Command))
		}
		paths := e.Paths
		if (e.Kind == manifest.ShellMove || e.Kind == manifest.ShellCopy) && len(paths) == 2 && (e.IntoDir || r.isDir(paths[1])) {
			// Into a directory: the file it may have made is in it.
			paths = []string{paths[0], path.Join(paths[1], path.Base(paths[0]))}
		}
		for _, p := range paths {
			r.staleFile(p, op, "a shell command may have changed it (%s, under a condition the transcript does not settle)", e.Verb)
		}
		return
	}
	switch e.Kind {
	case manifest.ShellDelete:
		for _, p := range e.Paths {
			r.shellDelete(op, p, e.Recursive)
		}
	case manifest.ShellMove, manifest.ShellCopy:
		if len(e.Paths) == 2 {
			r.transfer(op, e, e.Paths[0], e.Paths[1])
		}
	case manifest.ShellCreate:
		for _, p := range e.Paths {
			if e.Content == nil {
				r.staleFile(p, op, "written by a shell command (%s) whose content is not recorded", e.Verb)
				continue
			}
			f := r.file(p, op, false)
			r.writeWhole(f, *e.Content)
			f.res.Notes = append(f.res.Notes, fmt.Sprintf("%s: content taken from a shell command (%s)", where(op), firstLine(op.Command)))
		}
	case manifest.ShellAppend:
		for _, p := range e.Paths {
			f := r.file(p, op, true)
			if e.Content == nil || !f.cur.Known {
				r.staleFile(p, op, "a shell command appended to it (%s), and its content before is unknown", e.Verb)
				continue
			}
			f.start(f.cur)
			f.remember()
			f.cur = Content{Known: true, Exists: true, Text: f.cur.Text + *e.Content}
			f.remember()
			f.res.Ops++
			f.res.Notes = append(f.res.Notes, fmt.Sprintf("%s: content appended by a shell heredoc (%s)", where(op), firstLine(op.Command)))
		}
	case manifest.ShellTouch:
		for _, p := range e.Paths {
			f := r.file(p, op, true)
			if f.cur.Known && !f.cur.Exists {
				r.writeWhole(f, "") // touch creates an empty file
			}
		}
	default:
		if len(e.Paths) == 0 {
			// A formatter or task runner over files it does not name.
			r.warnOnce(op, "a shell command changed files it does not name (%s: %s): files it touched may differ from what is recovered", e.Verb, firstLine(op.Command))
		}
		for _, p := range e.Paths {
			if e.Recursive {
				// gofmt -w ., prettier --write src/: every file known
				// inside; git checkout -- src/ also brings back those the
				// replay has deleted there.
				inside := r.under
				if restores(e.Verb) {
					inside = r.underAll
				}
				for _, q := range inside(p) {
					r.staleFile(q, op, "changed by a shell command that cannot be replayed (%s: %s)", e.Verb, firstLine(op.Command))
				}
				if _, ok := r.files[r.key(p)]; !ok && !r.known(p) {
					continue // a directory, or nothing known: no entry of its own
				}
			}
			if op.Command == "" {
				// A tool that writes a file whose content the transcript
				// does not hold (a download, a create without its text).
				r.staleFile(p, op, "changed by the agent's %s call, whose content the transcript does not hold (%s)", op.Tool, e.Verb)
				continue
			}
			r.staleFile(p, op, "changed by a shell command that cannot be replayed (%s: %s)", e.Verb, firstLine(op.Command))
		}
	}
}

// known reports whether the replay (or the host) has a file at p.
func (r *Reconstructor) known(p string) bool {
	if f, ok := r.files[r.key(p)]; ok && f.cur.Known {
		return f.cur.Exists
	} else if ok && f.res.Ops > 0 {
		return true // changed by the session, content unknown
	}
	_, exists, ok := r.base(p)
	return ok && exists
}

// under returns the agent paths of the files the replay knows inside dir,
// in a stable order.
func (r *Reconstructor) under(dir string) []string { return r.inside(dir, false) }

// restores reports whether a write of verb brings back files that were
// deleted (git checkout and git restore from the index), where any other
// write changes only files that are there.
func restores(verb string) bool { return verb == "git checkout" || verb == "git restore" }

// underAll is under with the files the replay has deleted inside dir.
func (r *Reconstructor) underAll(dir string) []string { return r.inside(dir, true) }

// inside lists the files of the replay inside dir, sorted: with deleted,
// also those it has absent.
func (r *Reconstructor) inside(dir string, deleted bool) []string {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var out []string
	for _, f := range r.files {
		if strings.HasPrefix(f.res.Path, prefix) && (deleted || f.cur.Exists || !f.cur.Known) {
			out = append(out, f.res.Path)
		}
	}
	sort.Strings(out)
	return out
}

// shellDelete replays rm of p. A file nobody knows of (not in the replay,
// not on the host) gets no entry: there is nothing to recover or delete.
// With -r, the files the replay knows inside p go too; files on the host
// that the session never touched are left alone.
func (r *Reconstructor) shellDelete(op *manifest.Op, p string, recursive bool) {
	if recursive {
		for _, q := range r.under(p) {
			r.deleteFile(op, q)
		}
	}
	if !r.known(p) {
		return
	}
	r.deleteFile(op, p)
}

func (r *Reconstructor) deleteFile(op *manifest.Op, p string) {
	f := r.file(p, op, true)
	f.start(f.cur)
	f.res.Ops++
	f.remember()
	f.cur, f.pinned, f.crlf = Content{Known: true}, true, false
	f.stale = ""
	f.res.Notes = append(f.res.Notes, fmt.Sprintf("%s: deleted by a shell command (%s)", where(op), firstLine(op.Command)))
}

// isDir reports whether p is a directory as far as the replay and the host
// can tell.
func (r *Reconstructor) isDir(p string) bool {
	if len(r.under(p)) > 0 {
		return true
	}
	return r.opts.IsDir != nil && r.opts.IsDir(p)
}

// transfer replays mv or cp of src to dst: a file, or the files the replay
// knows inside a directory.
func (r *Reconstructor) transfer(op *manifest.Op, e manifest.ShellEffect, src, dst string) {
	if e.IntoDir || r.isDir(dst) {
		dst = path.Join(dst, path.Base(src))
	}
	if r.known(src) {
		r.transferFile(op, e, src, dst)
		return
	}
	files := r.under(src)
	for _, q := range files {
		r.transferFile(op, e, q, dst+strings.TrimPrefix(q, strings.TrimSuffix(src, "/")))
	}
	switch {
	case len(files) > 0:
	case r.known(dst):
		// Whatever src was, dst was replaced by something unknown.
		r.staleFile(dst, op, "replaced by a shell command (%s) whose source is unknown here", e.Verb)
	case strings.Contains(path.Base(src), ".") && strings.Contains(path.Base(dst), "."):
		// Brought in from a file the replay knows nothing of (outside the
		// session's files, or never read): dst exists now, and what it
		// holds is unknown. Left out, it vanished from the report. (Only
		// names with an extension: a source the replay knows nothing of
		// may be a directory, which is not one file to list.)
		r.arrive(op, e, src, dst)
	}
}

// arrive records dst as made by mv or cp from src, a file whose content is
// unknown here.
func (r *Reconstructor) arrive(op *manifest.Op, e manifest.ShellEffect, src, dst string) {
	r.land(op, e, src, dst, nil)
}

func (r *Reconstructor) transferFile(op *manifest.Op, e manifest.ShellEffect, src, dst string) {
	if r.key(src) == r.key(dst) {
		return
	}
	r.land(op, e, src, dst, r.file(src, op, true))
}

// land records dst as made by mv or cp of src: from is the replay's file
// for src (a move leaves it deleted), or nil for a file the replay knows
// nothing of, whose content is then unknown and which is not tracked.
func (r *Reconstructor) land(op *manifest.Op, e manifest.ShellEffect, src, dst string, from *fstate) {
	to := r.file(dst, op, true)
	to.start(to.cur)
	to.res.Ops++
	to.remember()
	content, unknown := Content{}, to.unknown
	if from != nil {
		content, unknown = from.cur, from.unknown
		to.pinned, to.crlf, to.stale = from.pinned, from.crlf, from.stale
	} else {
		to.pinned, to.crlf, to.stale = false, false, ""
	}
	to.cur, to.unknown = content, unknown
	to.remember()
	verb := "copied"
	if e.Kind == manifest.ShellMove {
		verb = "moved"
		if from != nil {
			to.res.MovedFrom = from.res.Path
			from.start(from.cur)
			from.res.Ops++
			from.remember()
			from.cur, from.pinned, from.crlf, from.stale = Content{Known: true}, true, false, ""
		}
	}
	switch {
	case from == nil:
		to.res.Reason = fmt.Sprintf("%s: %s here from %s, whose content is unknown", where(op), verb, src)
	case !content.Known:
		to.res.Reason = fmt.Sprintf("%s: %s from %s, whose content is unknown", where(op), verb, src)
	}
	to.res.Notes = append(to.res.Notes, fmt.Sprintf("%s: %s from %s by a shell command (%s)", where(op), verb, src, firstLine(op.Command)))
}

// unknownOutcome grades every file a call of unknown outcome touched: it may
// or may not have run, so nothing after it is proven.
func (r *Reconstructor) unknownOutcome(op *manifest.Op, replayed bool) {
	what := "was not replayed (--unknown apply replays it)"
	if replayed {
		what = "was replayed as if it had run (--unknown apply)"
	}
	for _, p := range touched(op) {
		f := r.file(p, op, false)
		f.unknown = fmt.Sprintf("%s: the %s call that touched it never got its result; it %s", where(op), op.Tool, what)
	}
	for _, e := range op.Effects {
		if e.Bound {
			r.settleStash("")
			r.boundUnknown(op, e, what)
		}
	}
}

// shellLegacy handles a shell op from a manifest written before shell
// effects were recorded: exact heredoc content is evidence, and every other
// file it names is stale.
func (r *Reconstructor) shellLegacy(op *manifest.Op, applied bool) {
	withEvidence := map[string]bool{}
	if applied {
		for _, e := range op.Evidence {
			switch e.Kind {
			case manifest.EvidencePost:
				c := e.Content
				r.effect(op, manifest.ShellEffect{Kind: manifest.ShellCreate, Verb: "heredoc", Paths: []string{e.Path}, Content: &c})
				withEvidence[e.Path] = true
			case manifest.EvidenceAppend:
				c := e.Content
				r.effect(op, manifest.ShellEffect{Kind: manifest.ShellAppend, Verb: "heredoc", Paths: []string{e.Path}, Content: &c})
				withEvidence[e.Path] = true
			}
		}
	}
	if !applied {
		return
	}
	for _, p := range op.Paths {
		if !withEvidence[p] {
			r.staleFile(p, op, "changed by a shell command that cannot be replayed (%s)", firstLine(op.Command))
		}
	}
}
