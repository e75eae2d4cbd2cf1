package recover

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/agentsandbox/sandbox/manifest"
)

// MatchMode chooses how an update's context is located.
type MatchMode int

const (
	// Faithful reproduces codex's seek_sequence: four passes (exact,
	// trailing whitespace, surrounding whitespace, Unicode punctuation
	// normalised), first match wins. It is right only on the exact content
	// the agent saw.
	Faithful MatchMode = iota
	// Strict is for content that may have drifted (a host copy): the same
	// passes, but a match must be unique from the search start, and any pass
	// past exact is reported as fuzz.
	Strict
)

// UpdateError is an update whose chunks do not apply.
type UpdateError struct {
	Path string
	Msg  string
}

func (e *UpdateError) Error() string { return e.Msg }

// ApplyChunks applies an Update hunk's chunks to content with codex's
// semantics (formats/codex.md §4.3): chunks are located in order, a chunk
// with only added lines appends at the end of the file, replacements are
// made from last to first, and the result ends with exactly one newline.
// CRLF content keeps its line endings. fuzz counts the chunks matched past
// the exact pass.
func ApplyChunks(content, path string, chunks []manifest.Chunk, mode MatchMode) (out string, fuzz int, err error) {
	crlf := strings.Contains(content, "\r\n") && strings.Count(content, "\r\n") == strings.Count(content, "\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	held := splitLines(content)
	defer putLines(held)
	lines := *held
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var repls []repl
	idx := 0
	for _, c := range chunks {
		if c.Context != nil {
			at, pass, err := seek(lines, []string{*c.Context}, idx, false, mode)
			if err != nil {
				return "", fuzz, &UpdateError{path, fmt.Sprintf("Failed to find context '%s' in %s%s", *c.Context, path, err.Error())}
			}
			if at < 0 {
				return "", fuzz, &UpdateError{path, fmt.Sprintf("Failed to find context '%s' in %s", *c.Context, path)}
			}
			if pass > 0 {
				fuzz++
			}
			idx = at + 1
		}
		if len(c.OldLines) == 0 {
			at := len(lines)
			if at > 0 && lines[at-1] == "" {
				at--
			}
			repls = append(repls, repl{at, 0, c.NewLines})
			continue
		}
		pattern, with := c.OldLines, c.NewLines
		at, pass, err := seek(lines, pattern, idx, c.EOF, mode)
		if at < 0 && err == nil && pattern[len(pattern)-1] == "" {
			pattern = pattern[:len(pattern)-1]
			if len(with) > 0 && with[len(with)-1] == "" {
				with = with[:len(with)-1]
			}
			at, pass, err = seek(lines, pattern, idx, c.EOF, mode)
		}
		if err != nil {
			return "", fuzz, &UpdateError{path, fmt.Sprintf("Failed to find expected lines in %s%s:\n%s", path, err.Error(), strings.Join(c.OldLines, "\n"))}
		}
		if at < 0 {
			return "", fuzz, &UpdateError{path, fmt.Sprintf("Failed to find expected lines in %s:\n%s", path, strings.Join(c.OldLines, "\n"))}
		}
		if pass > 0 {
			fuzz++
		}
		repls = append(repls, repl{at, len(pattern), with})
		idx = at + len(pattern)
	}
	sort.SliceStable(repls, func(a, b int) bool { return repls[a].start < repls[b].start })
	if out, ok := assemble(content, lines, repls); ok {
		if crlf {
			out = strings.ReplaceAll(out, "\n", "\r\n")
		}
		return out, fuzz, nil
	}
	out = applyReverse(slices.Clone(lines), repls) // it edits the list in place: not the pool's
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return out, fuzz, nil
}

// lineSlices recycles the line lists of ApplyChunks: splitting a whole
// file for every patch made a fresh list each time, a third of what a
// Codex replay allocated.
var lineSlices = sync.Pool{New: func() any { return new([]string) }}

// splitLines is strings.Split(content, "\n") into a list from the pool
// (in one pass: Split counts the lines first); putLines gives it back.
func splitLines(content string) *[]string {
	p := lineSlices.Get().(*[]string)
	lines := (*p)[:0]
	for {
		i := strings.IndexByte(content, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, content[:i])
		content = content[i+1:]
	}
	*p = append(lines, content)
	return p
}

// putLines clears a list of splitLines (its strings would keep old file
// contents alive) and returns it to the pool, unless a large file made it
// too long to keep. Nothing writes past its length (applyReverse edits a
// copy), so only that much is cleared: clearing to its capacity cost every
// later patch of a session the length of its longest file.
func putLines(p *[]string) {
	if cap(*p) > 1<<14 {
		return
	}
	clear(*p)
	lineSlices.Put(p)
}

// applyReverse makes the replacements one at a time, last first, and
// joins the lines, ending with exactly one newline.
func applyReverse(lines []string, repls []repl) string {
	for i := len(repls) - 1; i >= 0; i-- {
		r := repls[i]
		tail := append([]string{}, lines[r.start+r.n:]...)
		lines = append(append(lines[:r.start], r.with...), tail...)
	}
	if len(lines) == 0 || lines[len(lines)-1] != "" {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// repl is one chunk's replacement: lines [start, start+n) become with.
type repl struct {
	start, n int
	with     []string
}

// assemble returns what the replacements (in order of their start) make of
// lines, the lines of content, joined by newlines and ending with exactly
// one: the lines between two replacements are copied from content in one
// piece, not a line at a time, and the file is not rebuilt once per chunk.
// ok is false when two replacements overlap (an append at the end after a
// chunk that took the last, empty, line): the caller then applies them one
// at a time, last first.
func assemble(content string, lines []string, repls []repl) (_ string, ok bool) {
	size, end := len(content)+1, 0
	for _, r := range repls {
		if r.start < end {
			return "", false
		}
		end = r.start + r.n
		for _, w := range r.with {
			size += len(w) + 1
		}
	}
	var b strings.Builder
	b.Grow(size)
	elems, last := 0, ""
	put := func(s string, lastOf string) {
		if elems > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		elems++
		last = lastOf
	}
	// lines[i] starts at content[off]; lines[a:z] joined is content[off(a):off(z)-1].
	off, next := 0, 0
	skip := func(to int) {
		for _, l := range lines[next:to] {
			off += len(l) + 1
		}
		next = to
	}
	for _, r := range repls {
		if r.start > next {
			from := off
			skip(r.start)
			put(content[from:off-1], lines[r.start-1])
		}
		for _, w := range r.with {
			put(w, w)
		}
		skip(r.start + r.n)
	}
	if len(lines) > next {
		from := off
		skip(len(lines))
		put(content[from:off-1], lines[len(lines)-1])
	}
	if elems > 0 && last != "" {
		b.WriteByte('\n') // the empty last line Join would end with
	}
	return b.String(), true
}

var normalizers = []func(string) string{
	func(s string) string { return s },
	func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) },
	strings.TrimSpace,
	func(s string) string { return normalizePunct(strings.TrimSpace(s)) },
}

// seek finds pattern in lines from start (formats/codex.md §4.4). It returns
// the index or -1, and the pass that matched (0 = exact). In Strict mode a
// pattern found twice in the first pass that finds it is an ambiguity error.
func seek(lines, pattern []string, start int, eof bool, mode MatchMode) (int, int, error) {
	if len(pattern) == 0 {
		return start, 0, nil
	}
	if len(pattern) > len(lines) {
		return -1, 0, nil
	}
	from := start
	if eof {
		from = len(lines) - len(pattern)
	}
	for pass, norm := range normalizers {
		first, count := -1, 0
		for i := from; i <= len(lines)-len(pattern); i++ {
			ok := true
			for j, p := range pattern {
				if norm(lines[i+j]) != norm(p) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			if mode == Faithful {
				return i, pass, nil
			}
			if first < 0 {
				first = i
			}
			count++
		}
		if count > 1 {
			return -1, pass, fmt.Errorf(" (ambiguous: the lines occur %d times; refusing to pick one)", count)
		}
		if count == 1 {
			return first, pass, nil
		}
	}
	return -1, 0, nil
}

func normalizePunct(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			return '-'
		case '\u2018', '\u2019', '\u201A', '\u201B':
			return '\''
		case '\u201C', '\u201D', '\u201E', '\u201F':
			return '"'
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, s)
}
