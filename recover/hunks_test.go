package recover

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/lines"
)

// hunkText writes a hunk as a unified diff does.
func hunkText(h Hunk) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	for _, l := range h.Lines {
		b.WriteByte(l.Kind)
		b.WriteString(l.Text)
		if !strings.HasSuffix(l.Text, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return b.String()
}

// gitApplyHunks applies the hunks take says yes to onto a with git apply,
// as a patch of those hunks only.
func gitApplyHunks(t *testing.T, git, a string, hunks []Hunk, take []bool) string {
	t.Helper()
	if !slices.Contains(take, true) {
		return a // an empty patch
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	var patch strings.Builder
	patch.WriteString("--- a/f\n+++ b/f\n")
	for i, h := range hunks {
		if take[i] {
			patch.WriteString(hunkText(h))
		}
	}
	cmd := exec.Command(git, "apply", "--whitespace=nowarn", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(patch.String())
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, patch.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// checkHunks holds Hunks and ApplyHunks to what they promise: every hunk
// taken gives b, none gives a, the diff printed is the hunks, and each
// subset pick chooses is what git apply makes of a patch of those hunks.
func checkHunks(t *testing.T, git, a, b string, pick uint64) {
	t.Helper()
	hunks := Hunks(a, b)
	all := make([]bool, len(hunks))
	none := make([]bool, len(hunks))
	for i := range all {
		all[i] = true
	}
	if got := ApplyHunks(a, hunks, all); got != b {
		t.Fatalf("every hunk of %q → %q gives %q", a, b, got)
	}
	if got := ApplyHunks(a, hunks, none); got != a {
		t.Fatalf("no hunk of %q → %q gives %q", a, b, got)
	}
	if (len(hunks) == 0) != (a == b) {
		t.Fatalf("%d hunks for %q → %q", len(hunks), a, b)
	}
	var printed strings.Builder
	for _, h := range hunks {
		printed.WriteString(hunkText(h))
	}
	if d := UnifiedDiff("a/f", "b/f", a, b); d != "" && !strings.HasSuffix(d, printed.String()) {
		t.Fatalf("the diff printed is not the hunks:\n%s\nhunks:\n%s", d, printed.String())
	}
	if len(hunks) == 0 || git == "" || a == "" || strings.IndexByte(a+b, 0) >= 0 || strings.Contains(a+b, "\r") {
		return // git apply takes NUL for binary and a CR for its own
	}
	take := make([]bool, len(hunks))
	for i := range take {
		take[i] = pick>>(i%64)&1 == 1
	}
	if got, want := ApplyHunks(a, hunks, take), gitApplyHunks(t, git, a, hunks, take); got != want {
		t.Fatalf("hunks %v of %q → %q: %q, git apply %q", take, a, b, got, want)
	}
}

func TestHunks(t *testing.T) {
	git := needGit(t)
	cases := []struct{ a, b string }{
		{lines.Numbered(40, nil), lines.Numbered(40, map[int]string{2: "two\n", 35: "thirty-five\n"})},
		{lines.Numbered(40, nil), lines.Numbered(40, map[int]string{1: "", 20: "x\ny\nz\n", 40: "end"})},
		{lines.Numbered(10, nil), lines.Numbered(10, map[int]string{3: "", 9: "nine\n"})},
		{"a\nb", "a\nb\nc\n"},
		{"a\nb\n", "a\nb"},
		{"", "new\n"},
		{"old\n", ""},
		{"same\n", "same\n"},
	}
	for _, c := range cases {
		for pick := range uint64(8) {
			checkHunks(t, git, c.a, c.b, pick)
		}
	}
	h := Hunks(cases[0].a, cases[0].b)
	if len(h) != 2 || h[0].Added() != 1 || h[0].Removed() != 1 || h[1].OldStart != 32 {
		t.Errorf("hunks %+v", h)
	}
}

func FuzzHunks(f *testing.F) {
	git := needGit(f)
	f.Add("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n", "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n", uint64(1))
	f.Add("x\n", "y\n", uint64(0))
	f.Add("1\n2\n3\n", "1\n3\n4", uint64(3))
	f.Fuzz(func(t *testing.T, a, b string, pick uint64) {
		if len(a) > 4000 || len(b) > 4000 {
			return
		}
		checkHunks(t, git, a, b, pick)
	})
}
