package recover

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// A stash is a git stash of the whole work tree that no git stash pop or
// apply has brought back yet, and that nothing since has touched.
type stash struct {
	op *manifest.Op
	e  manifest.ShellEffect
	g  globs
}

// bound replays a command that changed files it chose when it ran (find
// -delete, git clean, git reset --hard, git checkout BRANCH, git merge …):
// every file the replay knows at or under its places is graded stale, as
// is every file there the replay has deleted when the command may bring
// tracked files back. A git stash of the whole tree is held back instead:
// the git stash pop or apply that follows it in the same tree, with
// nothing in between touching the files, brings them back as they were,
// and the pair changed nothing (agents stash to run the tests on the
// commit alone). Anything else settles it: a pop of another stash
// (stash@{1}), a drop or clear, a second stash of the same tree.
func (r *Reconstructor) bound(op *manifest.Op, e manifest.ShellEffect) {
	if e.Verb == "git checkout" && len(e.Paths) == 1 && r.knows(e.Paths[0]) {
		// git checkout X, where X is a file or directory: X is restored.
		r.effect(op, manifest.ShellEffect{Kind: e.Kind, Verb: e.Verb, Paths: e.Paths, Recursive: true, Cond: e.Cond})
		return
	}
	tree := strings.Join(e.Specs, "\x00")
	switch e.Verb {
	case "git stash drop", "git stash clear", "git stash store":
		// No file changed; the stash a pop would bring back is another.
		r.settleStash(tree)
		return
	case "git stash":
		r.settleStash(tree)
		if !e.Cond {
			if r.stashes == nil {
				r.stashes = map[string]*stash{}
			}
			r.stashes[tree] = &stash{op: op, e: e, g: compileGlobs(nil, e.Specs)}
			return
		}
	case "git stash pop", "git stash apply":
		if _, ok := r.stashes[tree]; ok && !e.Cond {
			delete(r.stashes, tree)
			return
		}
		r.settleStash(tree)
	default:
		r.settleStash("")
	}
	r.staleUnder(op, e)
}

// quiet reports whether the session only read a file, and commands that
// change files they do not name are all that may have changed it since: it
// is not the session's work, and not listed, but an edit made to it later
// is stale.
func (f *fstate) quiet() bool {
	return f.res.Ops == 0 && len(f.res.Notes) == f.boundNotes && f.unknown == "" && f.res.Reason == ""
}

// knows says whether the replay knows a file or a directory at p.
func (r *Reconstructor) knows(p string) bool {
	_, ok := r.files[r.key(p)]
	return ok || r.isDir(p)
}

// settleStash grades what a git stash of tree (every one, when tree is
// "") that no pop brought back, or one that something touched before its
// pop, left in doubt.
func (r *Reconstructor) settleStash(tree string) {
	for _, k := range slices.Sorted(maps.Keys(r.stashes)) {
		if s := r.stashes[k]; tree == "" || k == tree {
			delete(r.stashes, k)
			r.staleUnder(s.op, s.e)
		}
	}
}

// touch settles a pending git stash before the replay changes or reads a
// file at or under its places.
func (r *Reconstructor) touch(p string) {
	for k, s := range r.stashes {
		if hit, _ := s.g.match(p, true); hit != "" {
			r.settleStash(k)
		}
	}
}

// staleUnder grades stale every file the replay knows that a bound effect
// may have changed.
func (r *Reconstructor) staleUnder(op *manifest.Op, e manifest.ShellEffect) {
	all := r.boundMatches(e)
	specs := e.Specs
	if strings.HasSuffix(e.Verb, " script") {
		specs = r.matchedSpecs(specs, all) // of the many names code spells, those that matter
	}
	where, rel := places(specs)
	n := 0
	for _, p := range all {
		f := r.files[r.key(p)]
		if !f.quiet() {
			n++
		}
		before := len(f.res.Notes)
		r.staleFile(p, op, "a shell command may have changed it (%s: %s, which names its files only when it runs)", e.Verb, firstLine(op.Command))
		f.boundNotes += len(f.res.Notes) - before
	}
	if n == 0 {
		none := "is at or under"
		if rel == "that match" {
			none = "matches"
		}
		r.warnOnce(op, "a shell command changed files it does not name (%s: %s): no file the session changed %s %s; what it changed is not recovered",
			e.Verb, firstLine(op.Command), none, where)
	} else {
		r.warnOnce(op, "a shell command changed files it does not name (%s: %s): the %d file(s) the session changed %s %s may differ, and none of them is graded exact; any other file it changed is not recovered",
			e.Verb, firstLine(op.Command), n, rel, where)
	}
}

// matchedSpecs keeps the places of specs (p and p/*, or patterns) at or
// under which one of files is, or all of them when none is.
func (r *Reconstructor) matchedSpecs(specs, files []string) []string {
	var out []string
	for _, s := range specs {
		g := compileGlobs(nil, []string{s})
		for _, p := range files {
			if hit, _ := g.match(p, true); hit != "" {
				out = append(out, s)
				break
			}
		}
	}
	if len(out) == 0 {
		return specs
	}
	return out
}

// boundMatches lists the files the replay knows that a bound effect may
// have changed: those at or under its places, and those it has deleted
// there when the command may make them again.
func (r *Reconstructor) boundMatches(e manifest.ShellEffect) []string {
	matched, unsure := r.matching(compileGlobs(e.Patterns, e.Specs), true, makes(e.Verb))
	return append(matched, unsure...)
}

// makes reports whether a command that changes files it does not name may
// make one the replay has deleted: git commands that reset tracked files
// bring them back, archives and copies may hold them, a redirection makes
// its file. Those that only remove (find -delete, git clean, rm "$f") or
// edit in place (sed -i "$f") do not.
func makes(verb string) bool {
	switch verb {
	case "git clean", "git rm", "git rm -r", "git mv", "find -delete", "rm", "rm -r", "unlink":
		return false
	}
	if strings.HasPrefix(verb, "git ") || verb == "tar -x" || verb == "unzip" || verb == "redirect" || strings.HasSuffix(verb, " script") {
		return true
	}
	switch strings.Fields(strings.TrimPrefix(strings.TrimPrefix(verb, "find -exec "), "find -execdir ") + " x")[0] {
	case "cp", "mv", "install", "rsync", "ln", "tee", "dd":
		return true
	}
	return false
}

// places names the places of a bound effect's specs as a user wrote them,
// and how a file stands to them: the directories and files at or under
// which it acts (p and p/*), or the patterns files match (rm "$f.txt":
// *.txt, anywhere).
func places(specs []string) (names, rel string) {
	var out []string
	rel = "at or under"
	for _, s := range specs {
		s = strings.TrimSuffix(s, "/*")
		if meta(s) {
			rel = "that match"
		}
	}
	for _, s := range specs {
		if rel == "at or under" {
			s = unescapeGlob(strings.TrimSuffix(s, "/*"))
		} else {
			s = strings.TrimSuffix(s, "/*") // *.go/* with *.go: said once
			if strings.HasPrefix(s, "/*") {
				s = s[1:] // a name that starts anywhere
			}
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, ", "), rel
}

// meta reports whether a pattern holds a *, ? or [ that is not escaped.
func meta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// unescapeGlob drops the backslashes that make a pattern's bytes literal.
func unescapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// boundUnknown grades a bound effect of a call that never got its result:
// whether it ran is unknown, so is every file it may have changed.
func (r *Reconstructor) boundUnknown(op *manifest.Op, e manifest.ShellEffect, what string) {
	for _, p := range r.boundMatches(e) {
		f := r.file(p, op, false)
		f.unknown = fmt.Sprintf("%s: the %s call that may have changed it (%s) never got its result; it %s", where(op), op.Tool, e.Verb, what)
	}
}
