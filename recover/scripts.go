package recover

import (
	"crypto/sha256"
	"path"
	"slices"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/shellcmd"
)

// maxRunDepth bounds how deep scripts run by scripts are read, so that a
// script that runs itself ends.
const maxRunDepth = 4

// runs returns op with each script it runs (bash r.sh, ./r.sh, python3
// fix.py) replaced by what the script does, read from the content the
// replay knows for it at this point: the session wrote it. A script whose
// content the transcript never showed is, like any program it does not
// show, left unread; one whose content is in doubt (stale, or touched by a
// call that never got its result) changed files it does not name.
func (r *Reconstructor) runs(op *manifest.Op) *manifest.Op {
	if !slices.ContainsFunc(op.Effects, func(e manifest.ShellEffect) bool { return e.Kind == manifest.ShellRun }) {
		return op
	}
	cp := *op
	fresh := false
	cp.Effects = r.expand(op.Effects, 0, &fresh)
	if !fresh {
		r.hushed = &cp
	}
	cp.Paths = slices.Clone(op.Paths)
	for _, e := range cp.Effects {
		if e.Kind == manifest.ShellRun {
			continue
		}
		for _, p := range e.Paths {
			if !slices.Contains(cp.Paths, p) {
				cp.Paths = append(cp.Paths, p)
			}
		}
	}
	return &cp
}

// expand replaces the run effects in effs by their scripts' effects; it
// sets fresh when one of the scripts had not been read before as it is.
func (r *Reconstructor) expand(effs []manifest.ShellEffect, depth int, fresh *bool) []manifest.ShellEffect {
	out := make([]manifest.ShellEffect, 0, len(effs))
	for _, e := range effs {
		out = append(out, e) // a run stays, for a failure to tell
		if e.Kind != manifest.ShellRun {
			continue
		}
		if len(e.Paths) < 2 {
			continue
		}
		script, dir := e.Paths[0], e.Paths[1]
		f, ok := r.files[r.key(script)]
		if !ok || !f.cur.Known || !f.cur.Exists {
			continue // not a file of the session's: unread, as any program
		}
		verb := e.Verb + " " + path.Base(script)
		if depth >= maxRunDepth || f.stale != "" || f.unknown != "" {
			out = append(out, manifest.ShellEffect{Kind: manifest.ShellWrite, Verb: verb, Cond: e.Cond})
			continue
		}
		seen := sha256.Sum256([]byte(script + "\x00" + f.cur.Text))
		if r.scripts == nil {
			r.scripts = map[[32]byte]bool{}
		}
		if !r.scripts[seen] {
			r.scripts[seen] = true
			*fresh = true
		}
		read, ok := r.read[seen]
		if !ok || read.verb != e.Verb || read.dir != dir || !slices.Equal(read.operands, e.Paths[2:]) {
			res := shellcmd.ReadScript(e.Verb, path.Base(script), f.cur.Text, e.Paths[2:])
			var sub manifest.Op
			shellcmd.Fill(&sub, res, dir, joinAbs)
			read = scriptRead{verb: e.Verb, dir: dir, operands: e.Paths[2:], effects: sub.Effects}
			if r.read == nil {
				r.read = map[[32]byte]scriptRead{}
			}
			r.read[seen] = read
		}
		out = append(out, vagueOnce(r.expand(read.effects, depth+1, fresh), path.Base(script), e.Cond)...)
	}
	return out
}

// vagueOnce makes the writes of a script that name no file one effect,
// said once, in the script's name; every effect of a run under a
// condition is under it too.
func vagueOnce(effs []manifest.ShellEffect, script string, cond bool) []manifest.ShellEffect {
	out := effs[:0:0]
	at, all := -1, true
	var verbs []string
	for _, e := range effs {
		e.Cond = e.Cond || cond
		if e.Kind == manifest.ShellWrite && !e.Bound && len(e.Paths)+len(e.Patterns)+len(e.Specs) == 0 {
			if !slices.Contains(verbs, e.Verb) {
				verbs = append(verbs, e.Verb)
			}
			all = all && e.Cond
			if at < 0 {
				at = len(out)
				out = append(out, e)
			}
			continue
		}
		out = append(out, e)
	}
	if at >= 0 {
		out[at].Verb = strings.Join(verbs, ", ")
		if !strings.Contains(out[at].Verb, " in ") {
			out[at].Verb += " in " + script // said once, for the script nearest the command
		}
		out[at].Cond = all
	}
	return out
}

// scriptRead is what a script's content does when run by verb in dir with
// operands, kept for its next run (the last one read, per content).
type scriptRead struct {
	verb, dir string
	operands  []string
	effects   []manifest.ShellEffect
}

// joinAbs resolves a path a script names against the directory it runs in.
func joinAbs(cwd, p string) string {
	if path.IsAbs(p) || cwd == "" {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}
