package recover

import (
	"strings"
	"testing"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// FuzzRuneDiff: whatever the texts, and however low the bounds (so that the
// anchored and the replaced pieces are reached on small inputs), the diff
// spells both texts back, and is the same every time; so does the minimal
// diff, which is never longer.
func FuzzRuneDiff(f *testing.F) {
	f.Add("abcdefg", "abXdeYg", uint8(4))
	f.Add("aaaabbbb", "bbbbaaaa", uint8(2))
	f.Add("uvwxyz", "zyxwvu", uint8(1))
	f.Add("", "abc", uint8(0))
	f.Fuzz(func(t *testing.T, a, b string, bound uint8) {
		defer func(r, w int) { maxDiffRunes, maxDiffWork = r, w }(maxDiffRunes, maxDiffWork)
		maxDiffRunes = int(bound % 16)
		maxDiffWork = maxDiffRunes * maxDiffRunes * int(bound/16+1)
		ra, rb := []rune(a), []rune(b)
		spell := func(d []diffmatchpatch.Diff) (changed int) {
			var ga, gb strings.Builder
			for _, x := range d {
				if x.Type != diffmatchpatch.DiffInsert {
					ga.WriteString(x.Text)
				}
				if x.Type != diffmatchpatch.DiffDelete {
					gb.WriteString(x.Text)
				}
				if x.Type != diffmatchpatch.DiffEqual {
					changed += len([]rune(x.Text))
				}
			}
			if ga.String() != string(ra) || gb.String() != string(rb) {
				t.Fatalf("diff of %q and %q spells %q and %q", a, b, ga.String(), gb.String())
			}
			return changed
		}
		d := runeDiff(ra, rb)
		if n, m := spell(d), spell(minimalRuneDiff(ra, rb)); m > n {
			t.Fatalf("the minimal diff of %q and %q changes %d runes, the other %d", a, b, m, n)
		}
		again := runeDiff(ra, rb)
		if len(again) != len(d) {
			t.Fatalf("a second diff has %d parts, the first %d", len(again), len(d))
		}
		for i := range d {
			if d[i] != again[i] {
				t.Fatalf("a second diff differs at %d: %v, %v", i, d[i], again[i])
			}
		}
	})
}
