package recover

import (
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Merge3 merges ours and theirs, both derived from base, line by line, as
// git merge-file does (its default: merge style, zealous conflicts with
// alphanumeric-free gaps folded in), so that a recovered file reads the same
// as the merge a developer would have got from git.
//
// Each side is diffed against base and its hunks compacted (slid along runs
// of equal lines to one canonical place), so that one change made on both
// sides is found at the same base lines and taken once. A region only one
// side changed takes that side; a region both changed alike is taken once;
// changes that overlap or touch are a conflict, narrowed to the lines where
// the two sides differ and written between markers labelled oursLabel and
// theirsLabel. conflicts counts the regions between markers.
//
// The line diffs are sergi/go-diff's. Where two diffs are equally short but
// pair different lines (base "a b", ours "b a"), it may pick another than
// git's, and the merge then differs from git's as those diffs do.
func Merge3(base, ours, theirs, oursLabel, theirsLabel string) (merged string, conflicts int) {
	return merge3(base, ours, theirs, oursLabel, theirsLabel, diffLines)
}

// merge3 is Merge3 with the line diff it runs on base and each side, and on
// the two sides of a conflict, given: the tests hold the rest to git's by
// handing it git's own diffs.
func merge3(base, ours, theirs, oursLabel, theirsLabel string, diff func(x, y []string) []change) (string, int) {
	b, o, t := splitLinesKeep(base), splitLinesKeep(ours), splitLinesKeep(theirs)
	co, ct := diff(b, o), diff(b, t)
	switch {
	case len(co) == 0:
		return theirs, 0
	case len(ct) == 0:
		return ours, 0
	}
	hunks := mergeHunks(co, ct, len(b), o, t)
	hunks = refineConflicts(hunks, o, t, diff)
	hunks = foldConflicts(hunks, o)
	return writeMerge(hunks, b, o, t, oursLabel, theirsLabel)
}

// change is one hunk of a line diff: lines [a, a+an) of the first file
// became lines [b, b+bn) of the second.
type change struct{ a, an, b, bn int }

// diffLines is the diff from x to y as compacted hunks: diffmatchpatch finds
// which lines changed, compact places each run of changed lines.
func diffLines(x, y []string) []change {
	cx, cy := changedLines(x, y)
	compact(x, cx, cy)
	compact(y, cy, cx)
	return hunksOf(cx, cy)
}

// changedLines marks the lines of x and y that the line diff deletes and
// inserts: those discard sets aside, and those diffmatchpatch's minimal
// diff of the rest deletes and inserts. Each slice has a false sentinel before and after the
// lines: line i is at index i+1.
func changedLines(x, y []string) (cx, cy []bool) {
	cx, cy = make([]bool, len(x)+2), make([]bool, len(y)+2)
	rx, ry, table, ok := linesToRunes(x, y)
	if !ok {
		head, tail := commonEnds(x, y)
		for i := head; i < len(x)-tail; i++ {
			cx[i+1] = true
		}
		for i := head; i < len(y)-tail; i++ {
			cy[i+1] = true
		}
		return cx, cy
	}
	kx, ky := discard(rx, ry, len(table), cx, cy)
	i, j := 0, 0
	for _, d := range minimalRuneDiff(pick(rx, kx), pick(ry, ky)) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			for ; n > 0; n-- {
				cx[kx[i]+1] = true
				i++
			}
		case diffmatchpatch.DiffInsert:
			for ; n > 0; n-- {
				cy[ky[j]+1] = true
				j++
			}
		}
	}
	return cx, cy
}

// pick is the runes of r at the indexes at.
func pick(r []rune, at []int) []rune {
	out := make([]rune, len(at))
	for k, i := range at {
		out[k] = r[i]
	}
	return out
}

// discard marks changed, before any diff, the lines git's xdiff marks so:
// past the common first and last lines, a line the other file does not
// have, and a line the other file has many times (at least about the square
// root of this file's length) that sits among such lines. It returns the
// lines left to diff (their indexes). Which lines a diff pairs, when several
// pairings are as short, depends on the lines it is given; given these, it
// pairs them as git's does more often, so a merge reads as git's more often
// (and where the second kind makes git's diff longer than need be, this one
// is as long).
func discard(rx, ry []rune, distinct int, cx, cy []bool) (kx, ky []int) {
	head, tail := commonEnds(rx, ry)
	count := func(r []rune) []int32 {
		m := make([]int32, distinct)
		for _, c := range r {
			m[runeIndex(c)]++
		}
		return m
	}
	nx, ny := count(rx), count(ry)
	keep := func(r []rune, other []int32, c []bool) []int {
		lim := 1
		for n := len(r); n > 0; n >>= 2 {
			lim <<= 1
		}
		lim = min(lim, 1024)
		end := len(r) - tail
		// kind: 0 no match, 1 a few, 2 many.
		kind := make([]byte, end-head)
		for i := head; i < end; i++ {
			switch n := int(other[runeIndex(r[i])]); {
			case n == 0:
				kind[i-head] = 0
			case n >= lim:
				kind[i-head] = 2
			default:
				kind[i-head] = 1
			}
		}
		kept := make([]int, 0, len(r))
		for i := 0; i < head; i++ {
			kept = append(kept, i)
		}
		for k := range kind {
			if kind[k] == 1 || kind[k] == 2 && !amidUnmatched(kind, k) {
				kept = append(kept, head+k)
			} else {
				c[head+k+1] = true
			}
		}
		for i := end; i < len(r); i++ {
			kept = append(kept, i)
		}
		return kept
	}
	return keep(rx, ny, cx), keep(ry, nx, cy)
}

// amidUnmatched tells whether line k, one the other file has many times,
// sits in a run of such lines and lines the other file lacks, with some of
// the latter on both sides and making up more than a quarter of the run
// (looked at up to 100 lines either way).
func amidUnmatched(kind []byte, k int) bool {
	const window, ratio = 100, 4
	lo, hi := max(0, k-window), min(len(kind)-1, k+window)
	var none, many int
	count := func(from, step, stop int) bool {
		n := 0
		for i := from; i != stop+step; i += step {
			if kind[i] == 0 {
				n++
				none++
			} else if kind[i] == 2 {
				many++
			} else {
				break
			}
		}
		return n > 0
	}
	many = 2 // line k, counted once for each side
	if k == lo || !count(k-1, -1, lo) {
		return false
	}
	if k == hi || !count(k+1, 1, hi) {
		return false
	}
	return many*ratio < many+none
}

// group is a run of changed lines [start, end) of one file, empty where the
// file has none between two unchanged lines.
type group struct{ start, end int }

// firstGroup is the group before the file's first unchanged line.
func firstGroup(c []bool) group {
	g := group{}
	for c[g.end+1] {
		g.end++
	}
	return g
}

// next moves g to the group after the unchanged line that ends it; false at
// the end of the file (n lines).
func (g *group) next(c []bool, n int) bool {
	if g.end == n {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; c[g.end+1]; g.end++ {
	}
	return true
}

// prev moves g to the group before the unchanged line that starts it; false
// at the start of the file.
func (g *group) prev(c []bool) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; c[g.start]; g.start-- {
	}
	return true
}

// slideUp moves g one line up when the line before it equals its last line,
// taking in any changed lines it then touches.
func (g *group) slideUp(lines []string, c []bool) bool {
	if g.start == 0 || lines[g.start-1] != lines[g.end-1] {
		return false
	}
	g.start--
	g.end--
	c[g.start+1], c[g.end+1] = true, false
	for c[g.start] {
		g.start--
	}
	return true
}

// slideDown moves g one line down when the line after it equals its first
// line, taking in any changed lines it then touches.
func (g *group) slideDown(lines []string, c []bool) bool {
	if g.end == len(lines) || lines[g.start] != lines[g.end] {
		return false
	}
	c[g.start+1], c[g.end+1] = false, true
	g.start++
	g.end++
	for c[g.end+1] {
		g.end++
	}
	return true
}

// compact places each run of changed lines of one file (lines, marked in c;
// o marks the other file's) where git's xdiff places it: slid down as far as
// runs of equal lines allow, merging with the runs it meets, unless it can
// line up with changed lines of the other file, in which case it goes to the
// lowest such place. The same insertion or deletion, wherever the diff
// found it, so lands on the same lines, and the changed lines of the two
// files stay paired in groups.
func compact(lines []string, c, o []bool) {
	n, no := len(lines), len(o)-2
	g, og := firstGroup(c), firstGroup(o)
	for {
		if g.end != g.start {
			var earliestEnd, matching int
			for {
				size := g.end - g.start
				matching = -1
				for g.slideUp(lines, c) {
					og.prev(o)
				}
				earliestEnd = g.end
				if og.end > og.start {
					matching = g.end
				}
				for g.slideDown(lines, c) {
					og.next(o, no)
					if og.end > og.start {
						matching = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			if g.end != earliestEnd && matching != -1 {
				for og.end == og.start {
					g.slideUp(lines, c)
					og.prev(o)
				}
			}
		}
		if !g.next(c, n) {
			return
		}
		og.next(o, no)
	}
}

// hunksOf turns the marks of two files into hunks, each a group of changed
// lines of the first file and the group paired with it in the second.
func hunksOf(cx, cy []bool) []change {
	var out []change
	i, j := 0, 0
	nx, ny := len(cx)-2, len(cy)-2
	for i < nx || j < ny {
		if !cx[i+1] && !cy[j+1] {
			i, j = i+1, j+1
			continue
		}
		h := change{a: i, b: j}
		for cx[i+1] {
			i++
		}
		for cy[j+1] {
			j++
		}
		h.an, h.bn = i-h.a, j-h.b
		out = append(out, h)
	}
	return out
}

// A hunk of the merge: base lines [i0, i0+c0) are ours' lines [i1, i1+c1)
// and theirs' lines [i2, i2+c2). Where the merge takes ours everywhere but
// in its hunks, mode says what each hunk holds.
type mergeHunk struct {
	mode           int
	i0, c0, i1, c1 int
	i2, c2         int
}

const (
	hunkConflict = 0 // the two sides differ: markers
	hunkOurs     = 1 // only ours changed: ours' lines
	hunkTheirs   = 2 // only theirs changed: theirs' lines
	hunkSame     = 4 // a conflict whose sides turned out equal: ours' lines
)

// add appends h to hs, or extends the last hunk to cover it when they
// touch, as a conflict unless both are the same kind.
func add(hs []mergeHunk, h mergeHunk) []mergeHunk {
	if n := len(hs); n > 0 {
		m := &hs[n-1]
		if h.i1 <= m.i1+m.c1 || h.i2 <= m.i2+m.c2 {
			if h.mode != m.mode {
				m.mode = hunkConflict
			}
			m.c0 = h.i0 + h.c0 - m.i0
			m.c1 = h.i1 + h.c1 - m.i1
			m.c2 = h.i2 + h.c2 - m.i2
			return hs
		}
	}
	return append(hs, h)
}

// mergeHunks walks the two diffs (co: base to ours, ct: base to theirs) in
// base order. A hunk that ends before the other side's next one starts is
// that side's alone; the same hunk on both sides (same base lines, same new
// lines) needs nothing, since the merge copies ours; anything else that
// overlaps or touches is a conflict over the base lines either side
// changed.
func mergeHunks(co, ct []change, nb int, o, t []string) []mergeHunk {
	var hs []mergeHunk
	for len(co) > 0 && len(ct) > 0 {
		x, y := co[0], ct[0]
		switch {
		case x.a+x.an < y.a:
			hs = add(hs, mergeHunk{mode: hunkOurs, i0: x.a, c0: x.an, i1: x.b, c1: x.bn, i2: y.b - y.a + x.a, c2: x.an})
			co = co[1:]
			continue
		case y.a+y.an < x.a:
			hs = add(hs, mergeHunk{mode: hunkTheirs, i0: y.a, c0: y.an, i1: x.b - x.a + y.a, c1: y.an, i2: y.b, c2: y.bn})
			ct = ct[1:]
			continue
		}
		if x.a != y.a || x.an != y.an || x.bn != y.bn || !sameLines(o[x.b:x.b+x.bn], t[y.b:y.b+y.bn]) {
			off := x.a - y.a
			ffo := off + x.an - y.an
			h := mergeHunk{i0: x.a, i1: x.b, i2: y.b}
			if off > 0 {
				h.i0 -= off
				h.i1 -= off
			} else {
				h.i2 += off
			}
			h.c0 = x.a + x.an - h.i0
			h.c1 = x.b + x.bn - h.i1
			h.c2 = y.b + y.bn - h.i2
			if ffo < 0 {
				h.c0 -= ffo
				h.c1 -= ffo
			} else {
				h.c2 += ffo
			}
			hs = add(hs, h)
		}
		xe, ye := x.a+x.an, y.a+y.an
		if xe >= ye {
			ct = ct[1:]
		}
		if ye >= xe {
			co = co[1:]
		}
	}
	// Past the other side's last hunk, its lines are base's shifted by
	// what it added in all.
	for _, x := range co {
		hs = add(hs, mergeHunk{mode: hunkOurs, i0: x.a, c0: x.an, i1: x.b, c1: x.bn, i2: x.a + len(t) - nb, c2: x.an})
	}
	for _, y := range ct {
		hs = add(hs, mergeHunk{mode: hunkTheirs, i0: y.a, c0: y.an, i1: y.a + len(o) - nb, c1: y.an, i2: y.b, c2: y.bn})
	}
	return hs
}

func sameLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// refineConflicts narrows each conflict to the hunks of a diff between its
// two sides: the lines both sides wrote alike are merged, not shown twice.
// A conflict whose sides are equal is no conflict.
func refineConflicts(hs []mergeHunk, o, t []string, diff func(x, y []string) []change) []mergeHunk {
	out := hs[:0:0]
	for _, m := range hs {
		if m.mode != hunkConflict || m.c1 == 0 || m.c2 == 0 {
			out = append(out, m)
			continue
		}
		d := diff(o[m.i1:m.i1+m.c1], t[m.i2:m.i2+m.c2])
		if len(d) == 0 {
			m.mode = hunkSame
			out = append(out, m)
			continue
		}
		for _, c := range d {
			out = append(out, mergeHunk{mode: hunkConflict, i0: m.i0, c0: m.c0, i1: m.i1 + c.a, c1: c.an, i2: m.i2 + c.b, c2: c.bn})
		}
	}
	return out
}

// foldConflicts joins two conflicts when what lies between them is three
// lines or fewer, or holds no letter or digit: one conflict reads more
// easily than two around a brace.
func foldConflicts(hs []mergeHunk, o []string) []mergeHunk {
	if len(hs) == 0 {
		return hs
	}
	out := hs[:1]
	for _, n := range hs[1:] {
		m := &out[len(out)-1]
		begin, end := m.i1+m.c1, n.i1
		if m.mode != hunkConflict || n.mode != hunkConflict || end-begin > 3 && hasAlnum(o[begin:end]) {
			out = append(out, n)
			continue
		}
		m.c1 = n.i1 + n.c1 - m.i1
		m.c2 = n.i2 + n.c2 - m.i2
	}
	return out
}

// hasAlnum tells whether any line holds an ASCII letter or digit.
func hasAlnum(lines []string) bool {
	for _, l := range lines {
		for i := 0; i < len(l); i++ {
			if c := l[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				return true
			}
		}
	}
	return false
}

// writeMerge writes ours with the hunks in place: theirs' lines where only
// theirs changed, markers around a conflict.
func writeMerge(hs []mergeHunk, b, o, t []string, oursLabel, theirsLabel string) (string, int) {
	var out strings.Builder
	n := 0
	for _, l := range o {
		n += len(l)
	}
	out.Grow(n + n/8)
	conflicts := 0
	i := 0
	for _, m := range hs {
		switch m.mode {
		case hunkConflict:
			conflicts++
			eol := "\n"
			if crlfAround(b, o, t, m) {
				eol = "\r\n"
			}
			writeLines(&out, o[i:m.i1])
			out.WriteString("<<<<<<< " + oursLabel + eol)
			writeSide(&out, o[m.i1:m.i1+m.c1], eol)
			out.WriteString("=======" + eol)
			writeSide(&out, t[m.i2:m.i2+m.c2], eol)
			out.WriteString(">>>>>>> " + theirsLabel + eol)
		case hunkOurs:
			writeLines(&out, o[i:m.i1+m.c1])
		case hunkTheirs:
			writeLines(&out, o[i:m.i1])
			writeLines(&out, t[m.i2:m.i2+m.c2])
		default:
			continue // ours' lines, copied with what follows
		}
		i = m.i1 + m.c1
	}
	writeLines(&out, o[i:])
	return out.String(), conflicts
}

func writeLines(b *strings.Builder, lines []string) {
	for _, l := range lines {
		b.WriteString(l)
	}
}

// writeSide writes one side of a conflict, its last line ended with eol
// when it has no newline, so that the marker after it starts a line.
func writeSide(b *strings.Builder, lines []string, eol string) {
	writeLines(b, lines)
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		b.WriteString(eol)
	}
}

// crlfAround tells whether the markers of conflict m end in CRLF, as git
// decides it: the line before the conflict in ours and in theirs (or their
// first line) must not end in a bare LF, and base's first line must end in
// CRLF. Markers in a CRLF file so keep its line endings.
func crlfAround(b, o, t []string, m mergeHunk) bool {
	return crlfAt(o, max(m.i1-1, 0)) != 0 && crlfAt(t, max(m.i2-1, 0)) != 0 && crlfAt(b, 0) == 1
}

// crlfAt tells whether line i ends in CRLF: 1 yes, 0 no, -1 cannot tell
// (no lines, or only one without a newline). A last line without a newline
// is judged by the line before it.
func crlfAt(lines []string, i int) int {
	crlf := func(l string) int {
		if strings.HasSuffix(l, "\r\n") {
			return 1
		}
		return 0
	}
	switch {
	case len(lines) == 0:
		return -1
	case i < len(lines)-1 || strings.HasSuffix(lines[i], "\n"):
		return crlf(lines[i])
	case i == 0:
		return -1
	default:
		return crlf(lines[i-1])
	}
}
