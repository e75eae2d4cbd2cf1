package shellcmd

import (
	"path"
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
		me := manifest.ShellEffect{Kind: manifest.ShellEffectKind(e.Kind), Verb: e.Verb, Recursive: e.Recursive, IntoDir: e.IntoDir, Cond: e.Cond, Bound: e.Bound, Args: e.Args}
		if e.Kind == Create || e.Kind == Append {
			c := e.Content
			me.Content = &c
		}
		for _, p := range e.Paths {
			abs := resolve(cwd, p)
			me.Paths = append(me.Paths, abs)
			if e.Kind == Run || e.Kind == Task {
				continue // the script and its operands, where a task runs: not what it changes
			}
			if !seen[abs] {
				seen[abs] = true
				op.Paths = append(op.Paths, abs)
			}
		}
		for _, p := range e.Patterns {
			if q, ok := joinCwd(cwd, p); ok {
				me.Patterns = append(me.Patterns, q)
			}
		}
		for _, p := range e.Specs {
			if q, ok := joinCwd(cwd, p); ok {
				me.Specs = append(me.Specs, q)
			}
		}
		if len(e.Patterns)+len(e.Specs) > 0 && len(me.Patterns)+len(me.Specs) == 0 && len(me.Paths) == 0 {
			// Patterns that cannot be placed: files it does not name.
			me = manifest.ShellEffect{Kind: manifest.ShellWrite, Verb: e.Verb, Cond: e.Cond}
		}
		verb := e.Verb
		if e.Kind == Run && len(e.Paths) > 0 {
			verb = "runs " + path.Base(e.Paths[0])
		}
		if !slices.Contains(verbs, verb) {
			verbs = append(verbs, verb)
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

// joinCwd makes a pattern absolute against the command's directory, whose
// own *, ?, [ and \ stand for themselves, keeping a final slash (a pattern
// of directories only). A Windows directory, where \ separates, takes
// no pattern.
func joinCwd(cwd, p string) (string, bool) {
	dirOnly := strings.HasSuffix(p, "/")
	if !path.IsAbs(p) {
		if cwd == "" || !path.IsAbs(cwd) || strings.Contains(cwd, `\`) {
			return "", false
		}
		p = escapeGlob(cwd) + "/" + p
	}
	p = path.Clean(p)
	if dirOnly && p != "/" {
		p += "/"
	}
	return p, true
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
