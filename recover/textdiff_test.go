package recover

import (
	"strings"
	"testing"
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
