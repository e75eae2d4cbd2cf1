package recover

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMerge3(t *testing.T) {
	base := "a\nb\nc\nd\ne\n"
	cases := []struct {
		name, ours, theirs, want string
		conflicts                int
	}{
		{"disjoint", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", 0},
		{"same change", "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n", 0},
		{"only theirs", base, "a\nb\nX\nd\ne\n", "a\nb\nX\nd\ne\n", 0},
		{"clash", "a\nb\nO\nd\ne\n", "a\nb\nT\nd\ne\n", "a\nb\n<<<<<<< host\nO\n=======\nT\n>>>>>>> recovered\nd\ne\n", 1},
		{"insert both ends", "top\n" + base, base + "end\n", "top\n" + base + "end\n", 0},
		{"no final newline", "a\nb\nc\nd\ne", base, "a\nb\nc\nd\ne", 0},
	}
	for _, c := range cases {
		got, n := Merge3(base, c.ours, c.theirs, "host", "recovered")
		if got != c.want || n != c.conflicts {
			t.Errorf("%s: got %q (%d conflicts), want %q (%d)", c.name, got, n, c.want, c.conflicts)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n"
	got := UnifiedDiff("a/f", "b/f", a, b)
	for _, want := range []string{"--- a/f\n+++ b/f\n", "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n", "@@ -10,3 +10,4 @@\n 10\n 11\n 12\n+13\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if UnifiedDiff("a", "b", a, a) != "" {
		t.Error("equal texts gave a diff")
	}
	if got := UnifiedDiff("a", "b", "", "x\n"); !strings.Contains(got, "@@ -0,0 +1 @@") && !strings.Contains(got, "@@ -0,0 +1,1 @@") {
		t.Errorf("creation diff: %s", got)
	}
}

// numbered is n distinct lines, "prefix i".
func numbered(prefix string, from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// TestManyDistinctLines: diffmatchpatch's own line numbering panicked past
// 55,295 distinct lines (it ran into the surrogates), so a file of 60,000
// lines crashed the dry run's diff and the three-way merge. Every size must
// diff and merge, up to more distinct lines than there are runes.
func TestManyDistinctLines(t *testing.T) {
	for _, n := range []int{55295, 55296, 60000, 200000, 1200000} {
		a := numbered("old", 0, n)
		b := "a new first line\n" + numbered("old", 0, n/2) + "changed in the middle\n" + numbered("old", n/2+1, n-n/2-1) + "a new last line"
		edits := lineEdits(a, b)
		if got := applyEdits(a, edits); got != b {
			t.Fatalf("%d lines: the edits do not turn a into b", n)
		}
		if d := UnifiedDiff("f", "f", a, b); !strings.Contains(d, "+a new first line") || !strings.Contains(d, "+a new last line") ||
			!strings.Contains(d, "+changed in the middle") {
			t.Fatalf("%d lines: the diff misses the changes: %.300s", n, d)
		}
		theirs := numbered("old", 0, n-1) + "theirs at the end\n"
		merged, conflicts := Merge3(a, b, theirs, "ours", "theirs")
		if n > utf8.MaxRune {
			// More distinct lines than runes: one edit each side, so one
			// conflict over the whole file, both sides in it.
			if conflicts != 1 || !strings.Contains(merged, "theirs at the end") || !strings.Contains(merged, "a new first line") {
				t.Fatalf("%d lines: %d conflicts", n, conflicts)
			}
			continue
		}
		if conflicts != 1 || !strings.Contains(merged, "theirs at the end") || !strings.HasPrefix(merged, "a new first line\n") {
			t.Fatalf("%d lines: %d conflicts, merged starts %.200q", n, conflicts, merged)
		}
	}
}
