package recover

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// globEffect replays an effect on files named by patterns (rm build/*.o,
// sed -i src/*.go, mv src/*.ts lib/, git rm 'src/*.go'): the pattern
// matched every file there was when it ran, and of those the replay knows
// some. Each is replayed as if named literally, except where the shell's
// own reading of the pattern is in doubt (** without knowing globstar, a
// git pathspec that leaves untracked files alone): there the file is
// stale. Files it matched that the transcript never spoke of are not
// recovered, and a warning says so.
func (r *Reconstructor) globEffect(op *manifest.Op, e manifest.ShellEffect) {
	g := compileGlobs(e.Patterns, e.Specs)
	lit := e
	lit.Patterns, lit.Specs = nil, nil
	var matched, unsure []string
	switch e.Kind {
	case manifest.ShellMove, manifest.ShellCopy:
		// mv takes directories whole, cp -r too; a file the replay has
		// absent was not there to match.
		matched, unsure = r.matching(g, e.Kind == manifest.ShellMove || e.Recursive, false)
	case manifest.ShellDelete:
		matched, unsure = r.matching(g, e.Recursive, false)
	default:
		// git checkout and git restore match the index: a file the replay
		// has deleted comes back, unknown. Any other write matches only
		// files that are there.
		matched, unsure = r.matching(g, e.Recursive, restores(e.Verb))
	}
	pats := append(append([]string{}, e.Patterns...), e.Specs...)
	r.warnOnce(op, "a shell command (%s: %s) named files by a pattern (%s): it is replayed on the %d file(s) of the transcript that match; any other file it matched is not recovered",
		e.Verb, firstLine(op.Command), strings.Join(pats, " "), len(matched)+len(unsure))
	for _, p := range unsure {
		r.staleFile(p, op, "a shell command may have changed it (%s: %s, a pattern whose matches are not certain)", e.Verb, firstLine(op.Command))
	}
	if (e.Kind == manifest.ShellMove || e.Kind == manifest.ShellCopy) && len(e.Paths) == 1 && (e.IntoDir || len(matched) > 1 || r.isDir(e.Paths[0])) {
		r.landedUnknown(op, e, g, matched)
	}
	if len(matched) == 0 {
		return
	}
	switch e.Kind {
	case manifest.ShellMove, manifest.ShellCopy:
		if len(e.Paths) != 1 {
			return
		}
		for _, m := range matched {
			one := lit
			// Several sources go into a directory; one goes into it when it
			// is one, else becomes it (transfer tells).
			one.Paths, one.IntoDir = []string{m, e.Paths[0]}, e.IntoDir || len(matched) > 1
			r.effect(op, one)
		}
	case manifest.ShellDelete:
		if len(e.Specs) > 0 {
			// git rm removes tracked files only: one the session made may
			// never have been added.
			var sure []string
			for _, p := range matched {
				if f, ok := r.files[r.key(p)]; ok && f.res.Start.Known && !f.res.Start.Exists {
					r.staleFile(p, op, "a shell command may have deleted it (%s: %s; the file was made in the session and may not be tracked)", e.Verb, firstLine(op.Command))
					continue
				}
				sure = append(sure, p)
			}
			matched = sure
		}
		lit.Paths = matched
		r.effect(op, lit)
	case manifest.ShellWrite:
		lit.Paths = matched
		r.effect(op, lit)
	}
}

// landedUnknown grades the files of the destination directory of mv or cp
// of a pattern that a source the transcript does not know may have become:
// those whose name the pattern's last component matches, but for the ones
// the matches it knows land on. One the replay has absent may exist now,
// one it has may hold something else.
func (r *Reconstructor) landedUnknown(op *manifest.Op, e manifest.ShellEffect, g globs, matched []string) {
	dir := strings.TrimSuffix(e.Paths[0], "/")
	landed := map[string]bool{}
	for _, m := range matched {
		landed[r.key(path.Join(dir, path.Base(m)))] = true
	}
	var hit []string
	for k, f := range r.files {
		if landed[k] || path.Dir(f.res.Path) != dir {
			continue
		}
		base := path.Base(f.res.Path)
		for _, comps := range g.shell {
			if comps[len(comps)-1].match(base) {
				hit = append(hit, f.res.Path)
				break
			}
		}
	}
	sort.Strings(hit)
	for _, p := range hit {
		r.staleFile(p, op, "a shell command may have put a file the transcript does not know here (%s: %s)", e.Verb, firstLine(op.Command))
	}
}

// warnOnce adds a warning about op, unless it is the one added last: a
// loop's body, read once per word, says it once.
func (r *Reconstructor) warnOnce(op *manifest.Op, format string, args ...any) {
	if op == r.hushed {
		return
	}
	w := manifest.Warning{File: op.Provenance.Transcript, Line: op.Provenance.Line, Offset: op.Provenance.Offset, Message: fmt.Sprintf(format, args...)}
	if n := len(r.warnings); n > 0 && r.warnings[n-1].String() == w.String() {
		return
	}
	r.warnings = append(r.warnings, w)
}

// globs are compiled patterns: shell globs one regexp per path component,
// specs one regexp each.
type globs struct {
	shell [][]comp
	// dirOnly says a shell glob ended in a slash: it matches directories.
	dirOnly []bool
	// deep says a shell glob holds **, which bash reads as * unless
	// globstar is set (zsh always reads it as any depth).
	deep  []bool
	specs []*regexp.Regexp
	// prefix is a directory every match lies in: the patterns' longest
	// common start before any metacharacter, cut at a slash. A file
	// outside it is passed over without a regexp.
	prefix string
}

func compileGlobs(shell, specs []string) globs {
	var g globs
	for _, p := range shell {
		dirOnly := strings.HasSuffix(p, "/") && p != "/"
		comps := strings.Split(strings.TrimSuffix(p, "/"), "/")
		res := make([]comp, len(comps))
		ok := true
		for i, c := range comps {
			if res[i], ok = compileComp(c); !ok {
				break
			}
		}
		if ok {
			g.shell = append(g.shell, res)
			g.dirOnly = append(g.dirOnly, dirOnly)
			g.deep = append(g.deep, strings.Contains(p, "**"))
		}
	}
	for _, s := range specs {
		if re, err := regexp.Compile(specRegexp(s)); err == nil {
			g.specs = append(g.specs, re)
		}
	}
	for i, p := range append(append([]string{}, shell...), specs...) {
		lit := p[:strings.IndexAny(p+"*", `*?[\`)]
		lit = lit[:strings.LastIndexByte(lit, '/')+1]
		if i == 0 {
			g.prefix = lit
			continue
		}
		for !strings.HasPrefix(lit, g.prefix) {
			g.prefix = g.prefix[:strings.LastIndexByte(strings.TrimSuffix(g.prefix, "/"), '/')+1]
		}
	}
	return g
}

// comp is one component of a shell glob: a literal, or a regexp.
type comp struct {
	lit   string
	re    *regexp.Regexp
	dot   bool // the pattern starts with a dot, so matches a leading one
	star2 bool // the component is **
}

func compileComp(c string) (comp, bool) {
	if !strings.ContainsAny(c, `*?[\`) {
		return comp{lit: c}, true
	}
	re, err := regexp.Compile("^" + globRegexp(c, false) + "$")
	if err != nil {
		return comp{}, false
	}
	return comp{re: re, dot: strings.HasPrefix(c, ".") || strings.HasPrefix(c, `\.`), star2: c == "**"}, true
}

// match matches one path component: a leading dot only by a dot.
func (c comp) match(s string) bool {
	if c.re == nil {
		return s == c.lit
	}
	if strings.HasPrefix(s, ".") && !c.dot {
		return false
	}
	return c.re.MatchString(s)
}

// matching returns what the patterns match among the files the replay
// knows to exist (with absent, also those it has deleted), in a stable
// order: the files themselves, or with recursive, the directories they lie
// in when a pattern matches one (rm -r dist/*). unsure are files that match
// only if ** crosses directories.
func (r *Reconstructor) matching(g globs, recursive, absent bool) (matched, unsure []string) {
	seen := map[string]bool{}
	for _, f := range r.files {
		if f.cur.Known && !f.cur.Exists && !absent {
			continue // not there when the command ran: no pattern matched it
		}
		name := f.res.Path
		hit, deepHit := g.match(name, recursive)
		switch {
		case hit != "" && !seen[hit]:
			seen[hit] = true
			matched = append(matched, hit)
		case hit == "" && deepHit && !seen[name]:
			seen[name] = true
			unsure = append(unsure, name)
		}
	}
	sort.Strings(matched)
	sort.Strings(unsure)
	return matched, unsure
}

// match says which path a file's name matches as (itself, or the
// directory above it that a shell glob matched), or, when none, whether
// a ** that bash may read deeper matches it.
func (g globs) match(name string, recursive bool) (hit string, deep bool) {
	if !strings.HasPrefix(name, g.prefix) {
		return "", false
	}
	for i, comps := range g.shell {
		if m, ok := globPrefix(comps, g.dirOnly[i], name, recursive); ok {
			return m, false
		}
		if g.deep[i] && deepMatch(comps, name, recursive) {
			deep = true
		}
	}
	for _, re := range g.specs {
		if re.MatchString(name) || recursive && specUnder(re, name) {
			return name, false
		}
	}
	return "", deep
}

// globPrefix matches name against a shell glob component by component, as
// pathname expansion does: * and ? never match a slash nor a leading dot.
// With recursive (or a glob ending in a slash, which matches directories
// only), a match of the leading components names a directory the command
// took whole; that directory is returned.
func globPrefix(comps []comp, dirOnly bool, name string, recursive bool) (string, bool) {
	nc := strings.Split(name, "/")
	if len(nc) < len(comps) || len(nc) > len(comps) && !recursive && !dirOnly || dirOnly && len(nc) == len(comps) {
		return "", false
	}
	for i, c := range comps {
		if !c.match(nc[i]) {
			return "", false
		}
	}
	return strings.Join(nc[:len(comps)], "/"), true
}

// deepMatch matches name reading a component that is ** as any number of
// directories (globstar, zsh).
func deepMatch(comps []comp, name string, recursive bool) bool {
	nc := strings.Split(name, "/")
	failed := map[[2]int]bool{} // so that many ** cost a product, not a power
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		if i == len(comps) {
			return j == len(nc) || recursive
		}
		if failed[[2]int{i, j}] {
			return false
		}
		defer func() { failed[[2]int{i, j}] = true }() // only reached again if it failed
		if comps[i].star2 {
			for k := j; k <= len(nc); k++ {
				if walk(i+1, k) {
					return true
				}
			}
			return false
		}
		return j < len(nc) && comps[i].match(nc[j]) && walk(i+1, j+1)
	}
	return walk(0, 0)
}

// specUnder reports whether re matches a directory name lies in.
func specUnder(re *regexp.Regexp, name string) bool {
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '/' && re.MatchString(name[:i]) {
			return true
		}
	}
	return false
}

// globRegexp turns a glob into the body of a regular expression: * any run
// of bytes (but a slash, unless deep), ? one byte, [...] a class as bash
// reads it ([!…] and [^…] negated, ] first taken as itself, [:upper:] and
// the other POSIX classes), \x the byte x; an unclosed [ is itself.
func globRegexp(p string, deep bool) string {
	any, one := `[^/]*`, `[^/]`
	if deep {
		any, one = `.*`, `.`
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '*':
			if deep && strings.HasPrefix(p[i:], "**/") {
				b.WriteString(`(?:.*/)?`) // **/ matches no directory too
				i += 2
				continue
			}
			b.WriteString(any)
		case '?':
			b.WriteString(one)
		case '\\':
			if i+1 < len(p) {
				i++
			}
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		case '[':
			if class, n, ok := bracket(p[i:]); ok {
				b.WriteString(class)
				i += n - 1
				continue
			}
			b.WriteString(`\[`)
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	return b.String()
}

// bracket reads a bash bracket expression at the start of p: the regexp
// class it stands for and how many bytes it takes.
func bracket(p string) (string, int, bool) {
	i := 1
	neg := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		neg = true
		i++
	}
	var b strings.Builder
	first := true
	for i < len(p) {
		c := p[i]
		switch {
		case c == ']' && !first:
			cls := "[" + b.String() + "]"
			if neg {
				cls = "[^/" + b.String() + "]"
			}
			return cls, i + 1, true
		case c == '[' && i+1 < len(p) && p[i+1] == ':':
			end := strings.Index(p[i+2:], ":]")
			if end < 0 {
				return "", 0, false
			}
			b.WriteString(p[i : i+2+end+2])
			i += 2 + end + 2
		case c == '\\' && i+1 < len(p):
			b.WriteString(regexp.QuoteMeta(p[i+1 : i+2]))
			i += 2
		case c == '-' && !first && i+1 < len(p) && p[i+1] != ']':
			b.WriteByte('-')
			i++
		default:
			if c == '/' {
				return "", 0, false // a slash ends no class: the [ is itself
			}
			if strings.IndexByte(`\^-[]`, c) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
			i++
		}
		first = false
	}
	return "", 0, false
}

// specRegexp turns a pattern a command expands itself (a git pathspec, a
// prettier glob) into a regular expression in which * and ** match any
// run of bytes, slashes included, and **/ also no directory at all: a
// wider match than the command's own where they differ, which only makes
// more files stale.
func specRegexp(p string) string {
	return "^" + globRegexp(p, true) + "$"
}
