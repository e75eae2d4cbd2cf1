package recover

import (
	"crypto/sha256"
	"path"
	"slices"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
)

// maxRunDepth bounds how deep scripts run by scripts are read, so that a
// script that runs itself ends; maxRuns how many runs one command's
// scripts are read for, so that scripts that run each other many times
// cannot make the reading grow as a power of their size.
const (
	maxRunDepth = 4
	maxRuns     = 256
)

// treeEffect is what a script not read did: anything below dir.
func treeEffect(verb, dir string, cond bool) []manifest.ShellEffect {
	var sub manifest.Op
	shellcmd.Fill(&sub, shellcmd.Result{Effects: []shellcmd.Effect{{Kind: shellcmd.Write, Verb: verb, Specs: []string{"*"}, Recursive: true, Bound: true, Cond: cond}}}, dir, joinAbs)
	return sub.Effects
}

// runs returns op with each script it runs (bash r.sh, ./r.sh, python3
// fix.py) replaced by what the script does, read from the content the
// replay knows for it at this point: the session wrote it. A script whose
// content the transcript never showed is, like any program it does not
// show, left unread; one whose content is in doubt (stale, or touched by a
// call that never got its result) changed files it does not name.
func (r *Reconstructor) runs(op *manifest.Op) *manifest.Op {
	if !slices.ContainsFunc(op.Effects, func(e manifest.ShellEffect) bool {
		return e.Kind == manifest.ShellRun || e.Kind == manifest.ShellTask
	}) {
		return op
	}
	cp := *op
	fresh, budget := false, maxRuns
	cp.Effects = r.expand(op.Effects, 0, &fresh, &budget)
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
func (r *Reconstructor) expand(effs []manifest.ShellEffect, depth int, fresh *bool, budget *int) []manifest.ShellEffect {
	out := make([]manifest.ShellEffect, 0, len(effs))
	for i, e := range effs {
		if e.Kind == manifest.ShellTask {
			// A task, read from its definition as it is now: what it
			// changes, in place of it.
			*fresh = true
			out = append(out, r.expand(r.task(e), depth+1, fresh, budget)...)
			continue
		}
		out = append(out, e) // a run stays, for a failure to tell
		if e.Kind != manifest.ShellRun {
			continue
		}
		if len(e.Paths) < 2 {
			continue
		}
		script, dir := e.Paths[0], e.Paths[1]
		text, known, doubt := r.scriptText(effs[:i], script)
		if !known {
			continue // not a file of the session's: unread, as any program
		}
		if doubt {
			// Its content as it ran is not known: files it does not name,
			// said at every run.
			*fresh = true
			out = append(out, manifest.ShellEffect{Kind: manifest.ShellWrite, Verb: e.Verb + " " + path.Base(script), Cond: e.Cond})
			continue
		}
		if *budget--; depth >= maxRunDepth || *budget < 0 {
			// Too deep or too many: it may have changed anything below
			// where it ran.
			*fresh = true
			out = append(out, treeEffect(e.Verb+" script", dir, e.Cond)...)
			continue
		}
		seen := sha256.Sum256([]byte(script + "\x00" + text))
		read, ok := r.read[seen]
		*fresh = *fresh || !ok // a content not read before says what it cannot name
		if !ok || read.verb != e.Verb || read.dir != dir || !slices.Equal(read.operands, e.Paths[2:]) {
			res := shellcmd.ReadScript(e.Verb, script, text, e.Paths[2:])
			var sub manifest.Op
			shellcmd.Fill(&sub, res, dir, joinAbs)
			read = scriptRead{verb: e.Verb, dir: dir, operands: e.Paths[2:], effects: sub.Effects}
			if r.read == nil {
				r.read = map[[32]byte]scriptRead{}
			}
			r.read[seen] = read
		}
		out = append(out, vagueOnce(r.expand(read.effects, depth+1, fresh, budget), path.Base(script), e.Cond)...)
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

// scriptText returns the content a script has when it runs after before,
// the effects of the same command that come first (cat > r.sh <<'EOF' … EOF
// then bash r.sh; mv, cp, rm of it): whether it is known, and whether it is
// in doubt (stale, of unknown outcome, changed in a way not replayed, or
// under a condition).
func (r *Reconstructor) scriptText(before []manifest.ShellEffect, script string) (text string, known, doubt bool) {
	content := func(p string) (string, bool, bool) {
		f, ok := r.files[r.key(p)]
		if !ok || !f.cur.Known || !f.cur.Exists {
			return "", false, false // not a file of the session's: unread, as any program
		}
		return f.cur.Text, true, f.stale != "" || f.unknown != ""
	}
	text, known, doubt = content(script)
	for j, e := range before {
		names := slices.Contains(e.Paths, script)
		switch e.Kind {
		case manifest.ShellRun:
			continue
		case manifest.ShellCreate:
			if names {
				text, known = "", true
				if e.Content != nil {
					text = *e.Content
				}
				doubt = e.Content == nil || e.Cond
			}
		case manifest.ShellAppend:
			if names {
				if e.Content != nil {
					text += *e.Content
				}
				doubt = doubt || !known || e.Content == nil || e.Cond
				known = true
			}
		case manifest.ShellDelete:
			if names || e.Recursive && slices.ContainsFunc(e.Paths, func(d string) bool { return strings.HasPrefix(script, d+"/") }) {
				if known = e.Cond; e.Cond {
					doubt = true
				}
			}
		case manifest.ShellMove, manifest.ShellCopy:
			if len(e.Paths) != 2 {
				doubt = doubt || names
				continue
			}
			dst := e.Paths[1]
			if e.IntoDir || r.isDir(dst) {
				dst = path.Join(dst, path.Base(e.Paths[0]))
			}
			switch {
			case dst == script:
				text, known, doubt = r.scriptText(before[:j], e.Paths[0])
				doubt = doubt || e.Cond
			case e.Kind == manifest.ShellMove && e.Paths[0] == script:
				if known = e.Cond; e.Cond {
					doubt = true
				}
			}
		default:
			doubt = doubt || names
		}
	}
	return text, known, doubt
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

// task returns what a task effect does, its definition (or the linter's
// configuration) read as the replay knows the files now, every effect
// under the task's own condition.
func (r *Reconstructor) task(e manifest.ShellEffect) []manifest.ShellEffect {
	if len(e.Paths) == 0 || len(e.Args) == 0 {
		return nil
	}
	dir := e.Paths[0]
	var sub manifest.Op
	shellcmd.Fill(&sub, shellcmd.ReadTask(e.Args, dir, r.projectFile), dir, joinAbs)
	for i := range sub.Effects {
		sub.Effects[i].Cond = sub.Effects[i].Cond || e.Cond
	}
	return sub.Effects
}

// projectFile reads a project's file (a Makefile, a mise.toml, a
// golangci-lint configuration) as it is now: the content the replay knows
// for it, or else the host's copy, which is read once. A file the replay
// knows to be absent is absent, whatever the host holds.
func (r *Reconstructor) projectFile(p string) (string, bool) {
	if f, ok := r.files[r.key(p)]; ok && f.cur.Known {
		return f.cur.Text, f.cur.Exists
	}
	if r.base == nil {
		return "", false
	}
	if c, ok := r.hostFiles[p]; ok {
		return c.Text, c.Exists
	}
	data, exists, ok := r.base(p)
	c := Content{Known: ok, Exists: ok && exists && len(data) <= shellcmd.MaxScript}
	if c.Exists {
		c.Text = string(data)
	}
	if r.hostFiles == nil {
		r.hostFiles = map[string]Content{}
	}
	r.hostFiles[p] = c
	return c.Text, c.Exists
}
