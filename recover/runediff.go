package recover

import (
	"sort"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// maxDiffRunes bounds the lines (runes) diffmatchpatch diffs at once, the
// common first and last ones left out: its work grows with their square
// (10,000 wholly different lines a side took 0.5 s here, twice as many
// 1.8 s). maxDiffWork bounds the sum of those squares over one diff.
var (
	maxDiffRunes = 20000
	maxDiffWork  = maxDiffRunes * maxDiffRunes
)

// runeDiff is diffmatchpatch's diff of a and b (each line one rune),
// bounded by the size of the inputs, not by a clock: diffmatchpatch stops
// at a deadline (a second by default) and returns a coarser diff, so the
// same two texts gave another dry-run diff, and another three-way merge, on
// a loaded machine. Up to maxDiffRunes differing lines it is
// diffmatchpatch's own diff, its deadline out of reach. Past that, the lines
// that occur once on each side and in the same order on both (the longest
// such sequence: patience diff's anchors) cut the middle into pieces, each
// diffed the same way while the work allows; a piece past it, or with no
// anchor, is replaced whole, which is right if not minimal.
func runeDiff(a, b []rune) []diffmatchpatch.Diff {
	return (&diffRun{}).diff(a, b, true)
}

// minimalRuneDiff is runeDiff without diffmatchpatch's half-match speedup,
// which cuts both texts at a long common run and can so give a longer diff
// than need be ("} _ c } _" to "_ c _ } _ c": 5 lines, not 3). A three-way
// merge pairs lines as git's does only on diffs as short as git's.
func minimalRuneDiff(a, b []rune) []diffmatchpatch.Diff {
	return (&diffRun{minimal: true}).diff(a, b, true)
}

// diffRun is one diff's work so far (the sum of the squares bounded by
// maxDiffWork) and whether it is to be minimal.
type diffRun struct {
	work    int
	minimal bool
}

func (r *diffRun) diff(a, b []rune, anchor bool) []diffmatchpatch.Diff {
	work := &r.work
	head, tail := commonEnds(a, b)
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if n := len(ma) + len(mb); len(ma) == 0 || len(mb) == 0 || n <= maxDiffRunes && *work+n*n <= maxDiffWork {
		if len(ma) > 0 && len(mb) > 0 {
			*work += n * n
		}
		// All of a and b, not only their middle: diffmatchpatch's cleanup
		// slides edits across the common ends, and a diff it gave before
		// must read the same.
		dmp := diffmatchpatch.New()
		dmp.DiffTimeout = time.Hour // out of reach: the bound above keeps the work to about half a second
		if r.minimal {
			dmp.DiffTimeout = 0 // no deadline, and so no half-match either
		}
		return dmp.DiffMainRunes(a, b, false)
	}
	var out []diffmatchpatch.Diff
	if head > 0 {
		out = append(out, diffmatchpatch.Diff{Type: diffmatchpatch.DiffEqual, Text: string(a[:head])})
	}
	if anchor {
		out = append(out, r.anchored(ma, mb)...)
	} else {
		out = append(out, replaced(ma, mb)...)
	}
	if tail > 0 {
		out = append(out, diffmatchpatch.Diff{Type: diffmatchpatch.DiffEqual, Text: string(a[len(a)-tail:])})
	}
	return out
}

// replaced is the diff that deletes a and inserts b.
func replaced(a, b []rune) []diffmatchpatch.Diff {
	var out []diffmatchpatch.Diff
	if len(a) > 0 {
		out = append(out, diffmatchpatch.Diff{Type: diffmatchpatch.DiffDelete, Text: string(a)})
	}
	if len(b) > 0 {
		out = append(out, diffmatchpatch.Diff{Type: diffmatchpatch.DiffInsert, Text: string(b)})
	}
	return out
}

// anchored diffs a and b piece by piece between their anchors: the longest
// sequence of lines that occur once in a and once in b, in the same order
// in both. The pieces are diffed without anchoring again, so the whole
// stays within a few passes over the lines.
func (r *diffRun) anchored(a, b []rune) []diffmatchpatch.Diff {
	type seen struct{ a, b, at int } // occurrences in a and b, and where in b
	count := map[rune]*seen{}
	for _, r := range a {
		if c := count[r]; c != nil {
			c.a++
		} else {
			count[r] = &seen{a: 1}
		}
	}
	for j, r := range b {
		if c := count[r]; c != nil {
			c.b++
			c.at = j
		}
	}
	once := func(r rune) (int, bool) {
		c := count[r]
		return c.at, c.a == 1 && c.b == 1
	}
	// The candidates in a's order, with their place in b; the anchors are
	// the longest increasing run of those places (patience sorting).
	type pair struct{ i, j int }
	var cand []pair
	for i, r := range a {
		if j, ok := once(r); ok {
			cand = append(cand, pair{i, j})
		}
	}
	if len(cand) == 0 {
		return replaced(a, b)
	}
	tops := []int{}                // index in cand of the top of each pile
	prev := make([]int, len(cand)) // the top of the pile before, when placed
	for k, c := range cand {
		p := sort.Search(len(tops), func(x int) bool { return cand[tops[x]].j >= c.j })
		prev[k] = -1
		if p > 0 {
			prev[k] = tops[p-1]
		}
		if p == len(tops) {
			tops = append(tops, k)
		} else {
			tops[p] = k
		}
	}
	seq := make([]pair, len(tops))
	for k, x := len(tops)-1, tops[len(tops)-1]; k >= 0; k, x = k-1, prev[x] {
		seq[k] = cand[x]
	}
	var out []diffmatchpatch.Diff
	i, j := 0, 0
	for _, s := range seq {
		out = append(out, r.diff(a[i:s.i], b[j:s.j], false)...)
		out = append(out, diffmatchpatch.Diff{Type: diffmatchpatch.DiffEqual, Text: string(a[s.i : s.i+1])})
		i, j = s.i+1, s.j+1
	}
	return append(out, r.diff(a[i:], b[j:], false)...)
}
