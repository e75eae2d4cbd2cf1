package recover

import (
	"fmt"
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
// the git stash pop or apply that follows it, with nothing in between
// touching the files, brings them back as they were, and the pair changed
// nothing (agents stash to run the tests on the commit alone). Anything
// else settles it.
func (r *Reconstructor) bound(op *manifest.Op, e manifest.ShellEffect) {
	if e.Verb == "git checkout" && len(e.Paths) == 1 && r.knows(e.Paths[0]) {
		// git checkout X, where X is a file or directory: X is restored.
		r.effect(op, manifest.ShellEffect{Kind: e.Kind, Verb: e.Verb, Paths: e.Paths, Recursive: true, Cond: e.Cond})
		return
	}
	if !e.Cond {
		switch e.Verb {
		case "git stash":
			r.settleStash()
			r.stash = &stash{op: op, e: e, g: compileGlobs(nil, e.Specs)}
			return
		case "git stash pop", "git stash apply":
			if r.stash != nil && slices.Equal(r.stash.e.Specs, e.Specs) {
				r.stash = nil
				return
			}
		}
	}
	r.settleStash()
	r.staleUnder(op, e)
}

// knows says whether the replay knows a file or a directory at p.
func (r *Reconstructor) knows(p string) bool {
	_, ok := r.files[r.key(p)]
	return ok || r.isDir(p)
}

// settleStash grades what a git stash that no pop brought back, or one
// that something touched before its pop, left in doubt.
func (r *Reconstructor) settleStash() {
	if s := r.stash; s != nil {
		r.stash = nil
		r.staleUnder(s.op, s.e)
	}
}

// touch settles a pending git stash before the replay changes or reads a
// file at or under its places.
func (r *Reconstructor) touch(p string) {
	if r.stash == nil {
		return
	}
	if hit, _ := r.stash.g.match(p, true); hit != "" {
		r.settleStash()
	}
}

// staleUnder grades stale every file the replay knows that a bound effect
// may have changed.
func (r *Reconstructor) staleUnder(op *manifest.Op, e manifest.ShellEffect) {
	// Commands that reset tracked files bring back those the session
	// deleted; find and git clean only remove.
	back := strings.HasPrefix(e.Verb, "git ") && e.Verb != "git clean"
	matched, unsure := r.matching(compileGlobs(e.Patterns, e.Specs), true, back)
	all := append(matched, unsure...)
	where, rel := places(e.Specs)
	if len(all) == 0 {
		none := "is at or under"
		if rel == "that match" {
			none = "matches"
		}
		r.warnOnce(op, "a shell command changed files it does not name (%s: %s): no file of the transcript %s %s; what it changed is not recovered",
			e.Verb, firstLine(op.Command), none, where)
	} else {
		r.warnOnce(op, "a shell command changed files it does not name (%s: %s): the %d file(s) of the transcript %s %s are graded stale; any other file it changed is not recovered",
			e.Verb, firstLine(op.Command), len(all), rel, where)
	}
	for _, p := range all {
		r.staleFile(p, op, "a shell command may have changed it (%s: %s, which names its files only when it runs)", e.Verb, firstLine(op.Command))
	}
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
	back := strings.HasPrefix(e.Verb, "git ") && e.Verb != "git clean"
	matched, unsure := r.matching(compileGlobs(e.Patterns, e.Specs), true, back)
	for _, p := range append(matched, unsure...) {
		f := r.file(p, op, false)
		f.unknown = fmt.Sprintf("%s: the %s call that may have changed it (%s) never got its result; it %s", where(op), op.Tool, e.Verb, what)
	}
}
