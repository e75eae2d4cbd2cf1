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
// the ones it has not seen deleted. Each is replayed as if named literally.
// Files it matched that the transcript never spoke of are not recovered,
// and a warning says so.
func (r *Reconstructor) globEffect(op *manifest.Op, e manifest.ShellEffect) {
	matched := r.matching(e.Patterns, e.Specs, e.Recursive)
	pats := append(append([]string{}, e.Patterns...), e.Specs...)
	w := manifest.Warning{File: op.Provenance.Transcript, Line: op.Provenance.Line, Offset: op.Provenance.Offset,
		Message: fmt.Sprintf("a shell command (%s: %s) named files by a pattern (%s): it is replayed on the %d file(s) of the transcript that match; any other file it matched is not recovered",
			e.Verb, firstLine(op.Command), strings.Join(pats, " "), len(matched))}
	if n := len(r.warnings); n == 0 || r.warnings[n-1] != w {
		r.warnings = append(r.warnings, w) // a loop's body read once per word says it once
	}
	if len(matched) == 0 {
		return
	}
	lit := e
	lit.Patterns, lit.Specs = nil, nil
	switch e.Kind {
	case manifest.ShellMove, manifest.ShellCopy:
		if len(e.Paths) != 1 {
			return
		}
		for _, m := range matched {
			one := lit
			one.Paths, one.IntoDir = []string{m, e.Paths[0]}, true
			r.effect(op, one)
		}
	case manifest.ShellDelete, manifest.ShellWrite:
		lit.Paths = matched
		r.effect(op, lit)
	}
}

// matching returns what the patterns match among the files the replay
// knows to exist (or whose content it does not know), in a stable order:
// the files themselves, or with recursive, the directories they lie in
// when a pattern matches one (rm -r dist/*).
func (r *Reconstructor) matching(shell, specs []string, recursive bool) []string {
	var res []*regexp.Regexp
	for _, s := range specs {
		if re, err := regexp.Compile(specRegexp(s, recursive)); err == nil {
			res = append(res, re)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range r.files {
		if f.cur.Known && !f.cur.Exists {
			continue // not there when the command ran: no pattern matched it
		}
		name := f.res.Path
		hit := ""
		for _, p := range shell {
			if m, ok := globPrefix(p, name, recursive); ok {
				hit = m
				break
			}
		}
		for _, re := range res {
			if hit == "" && re.MatchString(name) {
				hit = name
			}
		}
		if hit != "" && !seen[hit] {
			seen[hit] = true
			out = append(out, hit)
		}
	}
	sort.Strings(out)
	return out
}

// globPrefix matches name against a shell glob component by component, as
// pathname expansion does: * and ? never match a slash nor a leading dot,
// [!…] is a negated class. With recursive, a match of the leading
// components names a directory the command took whole; that directory is
// returned.
func globPrefix(pattern, name string, recursive bool) (string, bool) {
	pc := strings.Split(pattern, "/")
	nc := strings.Split(name, "/")
	if len(nc) < len(pc) || len(nc) > len(pc) && !recursive {
		return "", false
	}
	for i, p := range pc {
		if !componentMatch(p, nc[i]) {
			return "", false
		}
	}
	return strings.Join(nc[:len(pc)], "/"), true
}

// componentMatch matches one path component against one pattern component.
func componentMatch(p, s string) bool {
	if strings.HasPrefix(s, ".") && !strings.HasPrefix(p, ".") && !strings.HasPrefix(p, `\.`) {
		return p == s // a leading dot is matched only by a dot
	}
	ok, err := path.Match(bashClass(p), s)
	return err == nil && ok
}

// bashClass spells bash's negated class [!…] as path.Match does, [^…].
func bashClass(p string) string {
	if !strings.Contains(p, "[!") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		b.WriteByte(c)
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteByte(p[i])
		case c == '[' && i+1 < len(p) && p[i+1] == '!':
			b.WriteByte('^')
			i++
		}
	}
	return b.String()
}

// specRegexp turns a pattern a command expands itself (a git pathspec, a
// prettier glob) into a regular expression in which * and ** match any
// run of bytes, slashes included: a wider match than the command's own
// where they differ, which only makes more files stale. With recursive,
// a match of a directory takes everything under it.
func specRegexp(p string, recursive bool) string {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString("[^/]")
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		case '[':
			end := strings.IndexByte(p[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	if recursive {
		b.WriteString("(/.*)?")
	}
	b.WriteString("$")
	return b.String()
}
