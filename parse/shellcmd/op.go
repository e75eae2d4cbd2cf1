package shellcmd

import (
	"slices"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// Fill records what r says a shell command did on op, a shell operation
// whose command ran in cwd: its effects in order, with every path resolved
// by resolve (the parser's own rule for the agent's paths), every path in
// op.Paths, and a note that names the verbs and any target that cannot be
// told. Directories are left out: they are never files.
func Fill(op *manifest.Op, r Result, cwd string, resolve func(cwd, p string) string) {
	op.Effects = []manifest.ShellEffect{}
	seen := map[string]bool{}
	var verbs []string
	for _, e := range r.Effects {
		if e.Kind == Dir {
			continue
		}
		me := manifest.ShellEffect{Kind: manifest.ShellEffectKind(e.Kind), Verb: e.Verb, Recursive: e.Recursive, IntoDir: e.IntoDir, Cond: e.Cond}
		if e.Kind == Create || e.Kind == Append {
			c := e.Content
			me.Content = &c
		}
		for _, p := range e.Paths {
			abs := resolve(cwd, p)
			me.Paths = append(me.Paths, abs)
			if !seen[abs] {
				seen[abs] = true
				op.Paths = append(op.Paths, abs)
			}
		}
		for _, p := range e.Patterns {
			me.Patterns = append(me.Patterns, resolve(cwd, p))
		}
		for _, p := range e.Specs {
			me.Specs = append(me.Specs, resolve(cwd, p))
		}
		if !slices.Contains(verbs, e.Verb) {
			verbs = append(verbs, e.Verb)
		}
		op.Effects = append(op.Effects, me)
	}
	var b strings.Builder
	b.WriteString("shell command")
	if len(verbs) > 0 {
		b.WriteString(" (" + strings.Join(verbs, ", ") + ")")
	}
	if len(r.Vague) > 0 {
		b.WriteString("; changes files it does not name literally: " + strings.Join(r.Vague, " "))
	}
	if r.Err != nil {
		b.WriteString("; not read as bash (" + firstLineOf(r.Err.Error()) + "): its targets are unknown")
	}
	op.Note = b.String()
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
