package shellcmd

import (
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxPath is the longest path reported; anything longer is not a path an
// agent meant (PATH_MAX on Linux is 4096).
const maxPath = 4096

// arg is one word of a command.
type arg struct {
	word *syntax.Word
	val  string // the word after quote removal, when lit
	lit  bool   // the word expands to val alone: no expansion but of a variable bound to a literal
	text string // the word as written, for Vague entries
	spec bool   // val is a pattern the command expands itself (see pathspecs)
}

// literal returns the value of w after quote removal when w is a literal:
// made only of plain text, single quotes and double quotes without
// expansions, with no glob, brace expansion or tilde for the shell to
// expand. Anything else may name other files than it spells.
func literal(w *syntax.Word) (string, bool) {
	v, _, ok := literalIn(w, nil, false)
	return v, ok
}

// literalIn is literal, where a parameter expansion of a variable that vars
// binds is taken to be the variable's value (see scope.vars): $f, ${f}
// and "$f", alone or joined to the rest of the word at a slash or a blank
// ("src/$f", "$dir/$f", "rm $f"). Unquoted, the value must be one that
// word splitting and pathname expansion leave alone.
//
// With glob set, a word that is literal but for unquoted *, ? and [ is
// returned as the pattern the shell matches file names against, every
// quoted or escaped *, ?, [ and \ escaped with a backslash; globbed says
// that it holds one.
func literalIn(w *syntax.Word, vars []binding, glob bool) (v string, globbed, ok bool) {
	if w == nil || len(w.Parts) == 0 {
		return "", false, false
	}
	// The common case, a plain word, needs no copy.
	if len(w.Parts) == 1 && !glob {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.ContainsAny(p.Value, "\\*?[{~") {
				return p.Value, false, lossless(p.Value)
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return p.Value, false, lossless(p.Value)
			}
		}
	}
	var b strings.Builder
	// shape keeps what brace expansion looks at: the unquoted braces,
	// commas and dots, with every other byte as 'x'.
	var shape []byte
	// edges are where the value of a variable meets other text.
	var edges []int
	// quote writes a byte the shell takes as itself: escaped in a pattern
	// when pattern matching would read it otherwise.
	quote := func(c byte) {
		if glob && (c == '*' || c == '?' || c == '[' || c == '\\') {
			b.WriteByte('\\')
			shape = append(shape, 'x')
		}
		b.WriteByte(c)
		shape = append(shape, 'x')
	}
	subst := func(p *syntax.ParamExp, quoted bool) bool {
		v, ok := lookup(vars, p)
		if !ok || !quoted && (v == "" || strings.ContainsAny(v, unsplit)) {
			return false
		}
		edges = append(edges, b.Len(), b.Len()+len(v))
		for i := range len(v) {
			quote(v[i])
		}
		return true
	}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			for j := 0; j < len(v); j++ {
				c := v[j]
				switch {
				case c == '\\' && j+1 < len(v):
					j++
					if v[j] != '\n' {
						quote(v[j])
					}
				case c == '*' || c == '?' || c == '[':
					if !glob {
						return "", false, false
					}
					globbed = true
					b.WriteByte(c)
					shape = append(shape, 'x')
				case c == '~' && (i == 0 && j == 0 || j > 0 && (v[j-1] == '=' || v[j-1] == ':')):
					// Tilde expansion: at the start of a word, and after = or :
					// in words that look like assignments (dd of=~/x).
					return "", false, false
				default:
					b.WriteByte(c)
					if c == '{' || c == '}' || c == ',' || c == '.' {
						shape = append(shape, c)
					} else {
						shape = append(shape, 'x')
					}
				}
			}
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				return "", false, false // $'…' escapes: not decoded here
			}
			for i := range len(p.Value) {
				quote(p.Value[i])
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if p, ok := q.(*syntax.ParamExp); ok && subst(p, true) {
					continue
				}
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false, false
				}
				dquoted(l.Value, quote)
			}
		case *syntax.ParamExp:
			if !subst(p, false) {
				return "", false, false
			}
		default:
			return "", false, false
		}
	}
	if braces(shape) {
		return "", false, false
	}
	s := b.String()
	for _, e := range edges {
		// Joined at a slash or a blank ("$d/$f", bash -c "rm $f"), a
		// value and the text around it cannot make a word the prefilter
		// would not see: none of its needles holds either, and each side
		// is in the script as written. Joined at anything else ($f.bak,
		// ${c}m), they could.
		if e > 0 && e < len(s) && !joint(s[e-1]) && !joint(s[e]) {
			return "", false, false
		}
	}
	if glob && !globbed {
		return "", false, false
	}
	return s, globbed, lossless(s)
}

// joint reports whether c may stand where a variable's value meets
// other text in a word.
func joint(c byte) bool { return c == '/' || c == ' ' || c == '\t' || c == '\n' }

// unsplit are the bytes that an unquoted expansion may not hold: word
// splitting cuts at blanks, and pathname expansion reads the others as a
// pattern (with extglob, "(" too).
const unsplit = " \t\n*?[\\("

// lossless reports whether s holds no U+FFFD, which stands in the parsed
// script for bytes that were not UTF-8: a word holding one is not what the
// command spelled.
func lossless(s string) bool { return !strings.ContainsRune(s, utf8.RuneError) }

// braces reports whether shape, the unquoted structure of a word, holds a
// brace expansion: an opening brace, then a comma or "..", then a closing
// brace. It may say yes to a word bash leaves alone; that only makes the
// word Vague.
func braces(shape []byte) bool {
	open := strings.IndexByte(string(shape), '{')
	if open < 0 {
		return false
	}
	rest := string(shape[open+1:])
	end := strings.LastIndexByte(rest, '}')
	if end < 0 {
		return false
	}
	inner := rest[:end]
	return strings.Contains(inner, ",") || strings.Contains(inner, "..")
}

// maxBraceWords bounds the words the brace expansions of one command (or
// one word of a loop) may make; past it a word is kept as written, which
// is not literal, so vague.
const maxBraceWords = 1024

// braceWords returns the words bash's brace expansion, which comes before
// every other expansion, makes of wd: a{b,c}d is abd and acd, {1..3} is 1,
// 2 and 3, {a..e..2} is a, c and e, and a word it leaves empty is dropped
// ({-i,} is -i alone). It returns nil when wd has no brace expansion, or
// would make more than maxBraceWords words. The braces are read by
// mvdan.cc/sh's own reading (syntax.SplitBraces, expand.BracesSeq), which
// is its interpreter's: quoted and escaped braces and commas are text, a
// {x} with no comma or .. is itself, and an unclosed brace is text.
func braceWords(wd *syntax.Word) []*syntax.Word {
	if !slices.ContainsFunc(wd.Parts, func(p syntax.WordPart) bool {
		l, ok := p.(*syntax.Lit)
		return ok && strings.IndexByte(l.Value, '{') >= 0
	}) {
		return nil
	}
	cp := &syntax.Word{Parts: slices.Clone(wd.Parts)}
	if !syntax.SplitBraces(cp) || !slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	}) {
		return nil
	}
	var out []*syntax.Word
	for x, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) == maxBraceWords {
			return nil
		}
		if !emptyWord(x) {
			out = append(out, x)
		}
	}
	return out
}

// emptyWord reports whether wd is nothing but unquoted empty text, which
// brace expansion leaves of an empty alternative ({a,b,}): bash drops such
// a word, where a quoted empty one ("") stays an operand.
func emptyWord(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		if l, ok := p.(*syntax.Lit); !ok || l.Value != "" {
			return false
		}
	}
	return true
}

// braceWords is braceWords where the script's shell makes brace
// expansion: nil in one run by sh (see walker.posix).
func (w *walker) braceWords(wd *syntax.Word) []*syntax.Word {
	if w.posix {
		return nil
	}
	return braceWords(wd)
}

// expandBraces returns words with each brace expansion made (braceWords),
// or false when they would be more than limit.
func (w *walker) expandBraces(words []*syntax.Word, limit int) ([]*syntax.Word, bool) {
	if len(words) > limit {
		return nil, false
	}
	var out []*syntax.Word // nil until a word expands
	n := 0                 // the words made so far
	for i, wd := range words {
		exp := w.braceWords(wd)
		n += max(len(exp), 1)
		if n+len(words)-i-1 > limit {
			return nil, false
		}
		if exp == nil {
			if out != nil {
				out = append(out, wd)
			}
			continue
		}
		if out == nil {
			out = append(make([]*syntax.Word, 0, len(words)+len(exp)), words[:i]...)
		}
		out = append(out, exp...)
	}
	if out == nil {
		return words, true
	}
	return out, true
}

// printed returns how a Vague entry shows s: its first line, cut to a
// length a report can hold.
func printed(s string) string {
	const max = 200
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if len(s) > max {
		i := max
		for i > 0 && s[i]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			i--
		}
		s, cut = s[:i], true
	}
	if cut {
		s += "…"
	}
	return s
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// dquoted gives each byte a literal inside double quotes stands for: a
// backslash escapes only $, `, ", \ and a newline (which it removes).
func dquoted(v string, byteOf func(byte)) {
	for j := 0; j < len(v); j++ {
		c := v[j]
		if c == '\\' && j+1 < len(v) && strings.IndexByte("$`\"\\\n", v[j+1]) >= 0 {
			j++
			if v[j] == '\n' {
				continue
			}
			c = v[j]
		}
		byteOf(c)
	}
}

// maybeIn returns the pattern that bounds what a word whose value is not
// fully known may name: its literal text as itself, each expansion whose
// value is unknown ($f, "$(cmd)", ~) as * (as in a git pathspec, where *
// also matches a slash). A word that starts with an unknown value may name
// a file anywhere: its pattern starts at the root (rm "$f.txt" is /*.txt).
// ok is false when nothing but slashes is literal ("$d/$f"), which bounds
// nothing.
func maybeIn(w *syntax.Word, vars []binding) (string, bool) {
	if w == nil || len(w.Parts) == 0 {
		return "", false
	}
	var b strings.Builder
	lits := 0
	lit := func(c byte) {
		if c == '*' || c == '?' || c == '[' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		if c != '/' {
			lits++
		}
	}
	star := func() {
		if s := b.String(); !strings.HasSuffix(s, "*") {
			b.WriteByte('*')
		}
	}
	param := func(p *syntax.ParamExp, quoted bool) {
		if v, ok := lookup(vars, p); ok && (quoted || v != "" && !strings.ContainsAny(v, unsplit)) {
			for i := range len(v) {
				lit(v[i])
			}
			return
		}
		star()
	}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			for j := 0; j < len(v); j++ {
				switch c := v[j]; {
				case c == '\\' && j+1 < len(v):
					j++
					if v[j] != '\n' {
						lit(v[j])
					}
				case c == '*' || c == '?' || c == '[':
					// A glob of its own: the pathspec's reading is wider.
					b.WriteByte(c)
				case c == '~' && i == 0 && j == 0:
					star()
				case c == '{' || c == '}':
					return "", false // brace words are expanded before they get here
				default:
					lit(c)
				}
			}
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				star()
				continue
			}
			for j := range len(p.Value) {
				lit(p.Value[j])
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					dquoted(q.Value, lit)
				case *syntax.ParamExp:
					param(q, true)
				default:
					star()
				}
			}
		case *syntax.ParamExp:
			param(p, false)
		default:
			star()
		}
	}
	s := b.String()
	if lits == 0 || !lossless(s) || len(s) > maxPath {
		return "", false
	}
	if strings.HasPrefix(s, "*") {
		s = "/" + s
	}
	return s, true
}
