package recover

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	sgdiff "github.com/sourcegraph/go-diff/diff"
)

// needGit ends a test that needs git: a skip that says so, or under CI=true
// (where git is installed) a failure, so the comparison with git never
// quietly does not run.
func needGit(t testing.TB) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err == nil {
		return git
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("CI=true, but git is not installed: %v", err)
	}
	t.Skipf("git is not installed (%v): the merge is compared with git merge-file", err)
	return ""
}

// gitMerge is git merge-file -p on the three texts, labelled ours, base and
// theirs: the merge and its conflicts (git's exit code, at most 127). No
// configuration is read, so merge.conflictStyle cannot change the markers.
func gitMerge(t testing.TB, git, base, ours, theirs string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"base": base, "ours": ours, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(git, "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() <= 127:
		return out.String(), exit.ExitCode()
	}
	t.Fatalf("git merge-file: %v: %s", err, stderr.String())
	return "", 0
}

// mergeLines is the alphabet FuzzMerge3Git builds texts from: code's most
// repeated lines, so that a block inserted or deleted can be placed in
// several ways.
var mergeLines = []string{"}", "", "{", "a", "b", "return nil", "\t}", "if err != nil {", "c", "d", "}\r", "x := 1"}

// mergeProg builds base, ours and theirs from prog: base from the alphabet,
// then each side edited (insert, delete, replace, or insert a block both
// sides share), each text maybe without its final newline.
type mergeProg struct {
	b []byte
	i int
}

func (p *mergeProg) next() int {
	if p.i >= len(p.b) {
		return 0
	}
	p.i++
	return int(p.b[p.i-1])
}

func (p *mergeProg) lines(n int) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = mergeLines[p.next()%len(mergeLines)]
	}
	return out
}

func (p *mergeProg) texts() (base, ours, theirs string) {
	b := p.lines(p.next() % 24)
	shared := p.lines(1 + p.next()%4)
	side := func() string {
		s := append([]string(nil), b...)
		for n := p.next() % 5; n > 0; n-- {
			op, at, k := p.next()%5, p.next()%(len(s)+1), p.next()%4
			end := min(len(s), at+k)
			switch op {
			case 0: // insert
				s = append(s[:at], append(p.lines(1+k), s[at:]...)...)
			case 1: // delete
				s = append(s[:at], s[end:]...)
			case 2: // replace
				s = append(s[:at], append(p.lines(1+p.next()%3), s[end:]...)...)
			default: // the block both sides insert
				s = append(s[:at], append(append([]string(nil), shared...), s[at:]...)...)
			}
		}
		return joinLines(s, p.next()%8 == 0)
	}
	base = joinLines(b, p.next()%8 == 0)
	return base, side(), side()
}

// joinLines ends every line with a newline, the last one too unless bare.
func joinLines(lines []string, bare bool) string {
	if len(lines) == 0 {
		return ""
	}
	s := strings.Join(lines, "\n")
	if !bare {
		s += "\n"
	}
	return s
}

// The smallest shape a session hit: both sides insert NEW and a closing
// brace after the second block, one changes the first line, the other the
// last. The diffs found NEW at two places and the merge wrote it twice.
const (
	minBase   = "a\n}\n\nb\n}\n\nc\n}\n\nd\n"
	minOurs   = "A\n}\n\nb\n}\n\nNEW\n}\n\nc\n}\n\nd\n"
	minTheirs = "a\n}\n\nb\n}\n\nNEW\n}\n\nc\n}\n\nD\n"
	minWant   = "A\n}\n\nb\n}\n\nNEW\n}\n\nc\n}\n\nD\n"
)

// FuzzMerge3Git holds Merge3 to git merge-file: the same conflicts and the
// same bytes, markers included. The texts are base, ours and theirs as given
// when prog is empty; otherwise prog builds them from lines that repeat
// (braces, blank lines), where a diff can place one change in several ways.
//
// Compaction makes every placement of one change the same, but two diffs can
// also be equally short and pair different lines (base "a b", ours "b a"
// keeps either line), and which one a Myers diff picks is its own choice:
// sergi/go-diff's and git's xdiff's differ on a few inputs in a hundred
// built here. Where the merges differ, the merge is run again on git's own
// line diffs (git diff --no-index: xdiff's Myers, compacted), which must
// then give git merge-file's bytes: the difference is the diff's, never the
// merge's.
func FuzzMerge3Git(f *testing.F) {
	git := needGit(f)
	for _, c := range mergeShapes {
		f.Add(c.base, c.ours, c.theirs, []byte(nil))
	}
	f.Add("func f() {\n\treturn nil\n}\n", "func f() {\n\tx()\n\treturn nil\n}\n\nfunc g() {\n}\n", "func f() {\n\treturn nil\n}\n\nfunc g() {\n}\n", []byte(nil))
	f.Add("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n", []byte(nil))
	f.Add("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", "a\r\nX\r\nc\r\n", []byte(nil))
	f.Add("a\nb", "a\nb\nc", "a\nb\nd", []byte(nil))
	f.Add("", "", "", []byte{9, 0, 1, 3, 0, 1, 4, 0, 1, 2, 1, 10, 3, 6, 1, 1, 2, 1, 3, 4, 1, 3, 6, 1, 1, 2, 1})
	f.Add("", "", "", []byte("\x10\x00\x01\x0b\x05\x00\x01\x07\x00\x04\x00\x01\x0b\x00\x01\x02\x00\x01\x03\x03\x02\x03\x09\x01\x01\x05\x04\x02"))
	f.Fuzz(func(t *testing.T, base, ours, theirs string, prog []byte) {
		if len(prog) > 0 {
			p := mergeProg{b: prog}
			base, ours, theirs = p.texts()
		}
		if strings.IndexByte(base+ours+theirs, 0) >= 0 {
			return // git will not merge what it takes for binary
		}
		b, o, th := splitLinesKeep(base), splitLinesKeep(ours), splitLinesKeep(theirs)
		checkDiff(t, b, o)
		checkDiff(t, b, th)
		got, n := Merge3(base, ours, theirs, "ours", "theirs")
		want, wn := gitMerge(t, git, base, ours, theirs)
		if got == want && min(n, 127) == wn {
			return
		}
		// The diffs differ, but only in which lines they pair: each side's is
		// as long as git's.
		for _, side := range []string{ours, theirs} {
			if mine, gits := diffLines(b, splitLinesKeep(side)), gitDiff(t, git, base, side); diffSize(mine) != diffSize(gits) {
				t.Fatalf("the diff of %q and %q is %v, git's %v", base, side, mine, gits)
			}
		}
		viaGit, vn := merge3(base, ours, theirs, "ours", "theirs", func(x, y []string) []change {
			return gitDiff(t, git, strings.Join(x, ""), strings.Join(y, ""))
		})
		if viaGit != want || min(vn, 127) != wn {
			t.Fatalf("on git's diffs Merge3 gave %d conflicts:\n%s\ngit merge-file %d:\n%s\nbase %q\nours %q\ntheirs %q", vn, viaGit, wn, want, base, ours, theirs)
		}
		t.Logf("sergi/go-diff and git diff differently: Merge3 gave %d conflicts, git %d", n, wn)
	})
}

// checkDiff requires diffLines to be a diff from x to y, and as short as
// the diff it compacted: compaction only slides hunks.
func checkDiff(t *testing.T, x, y []string) {
	t.Helper()
	d := diffLines(x, y)
	var out []string
	pos, cost := 0, 0
	for k, c := range d {
		if c.a < pos || k > 0 && c.a == pos || c.an+c.bn == 0 {
			t.Fatalf("hunk %v of %v is empty, or not after the one before it", c, d)
		}
		out = append(append(out, x[pos:c.a]...), y[c.b:c.b+c.bn]...)
		if len(out) != c.b+c.bn {
			t.Fatalf("hunk %v of %v is not where the lines before it end", c, d)
		}
		pos = c.a + c.an
		cost += c.an + c.bn
	}
	out = append(out, x[pos:]...)
	if !reflect.DeepEqual(out, y) && !(len(out) == 0 && len(y) == 0) {
		t.Fatalf("diff %v of %q does not give %q", d, x, y)
	}
	cx, cy := changedLines(x, y)
	for _, c := range append(cx, cy...) {
		if c {
			cost--
		}
	}
	if cost != 0 {
		t.Fatalf("compaction changed the size of the diff %v of %q and %q", d, x, y)
	}
}

// diffSize is the number of lines a diff deletes and inserts.
func diffSize(d []change) int {
	n := 0
	for _, c := range d {
		n += c.an + c.bn
	}
	return n
}

// TestCompactAsGit: a block inserted into (or deleted from) a text rich in
// repeated lines can be placed at several lines, and the diff finds one of
// them; compacted, it is where git's diff places it, every time.
func TestCompactAsGit(t *testing.T) {
	git := needGit(t)
	r := rand.New(rand.NewSource(1))
	for k := 0; k < 300; k++ {
		prog := make([]byte, 40)
		r.Read(prog)
		p := mergeProg{b: prog}
		x := p.lines(p.next() % 24)
		at := p.next() % (len(x) + 1)
		y := append(append(append([]string(nil), x[:at]...), p.lines(1+p.next()%4)...), x[at:]...)
		if k%2 == 1 {
			x, y = y, x
		}
		xs, ys := joinLines(x, false), joinLines(y, false)
		if mine, gits := diffLines(splitLinesKeep(xs), splitLinesKeep(ys)), gitDiff(t, git, xs, ys); !reflect.DeepEqual(mine, gits) {
			t.Errorf("the diff of %q and %q is %v, git's %v", xs, ys, mine, gits)
		}
	}
}

// recompact runs compact on the hunks d of x and y.
func recompact(x, y []string, d []change) []change {
	cx, cy := make([]bool, len(x)+2), make([]bool, len(y)+2)
	for _, c := range d {
		for i := c.a; i < c.a+c.an; i++ {
			cx[i+1] = true
		}
		for j := c.b; j < c.b+c.bn; j++ {
			cy[j+1] = true
		}
	}
	compact(x, cx, cy)
	compact(y, cy, cx)
	return hunksOf(cx, cy)
}

// gitDiff is git's line diff from a to b (xdiff's Myers, compacted, without
// the indent heuristic that only display uses) as hunks. It reads the
// changes out of a diff with one line of context: with none, git diff first
// trims the files' common tail (xdiff-interface's trim_common_tail), which
// git merge-file does not, and on long files the diff can pair other lines.
func gitDiff(t testing.TB, git, a, b string) []change {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"a": a, "b": b} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(git, "diff", "--no-index", "--no-indent-heuristic", "--diff-algorithm=myers", "--no-color", "--no-ext-diff", "-U1", "a", "b")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("git diff: %v", err)
	}
	fds, err := sgdiff.ParseMultiFileDiff(out)
	if err != nil {
		t.Fatalf("git diff: %v", err)
	}
	var hs []change
	for _, fd := range fds {
		for _, h := range fd.Hunks {
			// Lines are 1-based; a side with no lines names the one before.
			i, j := int(h.OrigStartLine)-1, int(h.NewStartLine)-1
			if h.OrigLines == 0 {
				i++
			}
			if h.NewLines == 0 {
				j++
			}
			for _, l := range strings.Split(strings.TrimSuffix(string(h.Body), "\n"), "\n") {
				switch {
				case l == "" || l[0] == ' ':
					i, j = i+1, j+1
					continue
				case l[0] != '-' && l[0] != '+':
					continue
				}
				if n := len(hs); n == 0 || hs[n-1].a+hs[n-1].an != i || hs[n-1].b+hs[n-1].bn != j {
					hs = append(hs, change{a: i, b: j})
				}
				if l[0] == '-' {
					hs[len(hs)-1].an++
					i++
				} else {
					hs[len(hs)-1].bn++
					j++
				}
			}
		}
	}
	return hs
}

// Two functions of a Go file, and a third to insert.
const (
	fab = "package p\n\nfunc a() {\n\treturn\n}\n\nfunc b() {\n\treturn\n}\n"
	fc  = "\nfunc c() {\n\treturn\n}\n"
)

// mergeShapes are the shapes sessions hit, each with git merge-file's
// result: seeds of FuzzMerge3Git too.
var mergeShapes = []struct {
	name, base, ours, theirs, want string
	conflicts                      int
}{
	{"the same block inserted on both sides, both ends changed", minBase, minOurs, minTheirs, minWant, 0},
	{"the same function inserted on both sides",
		fab, "package q\n\nfunc a() {\n\treturn\n}\n" + fc + "\nfunc b() {\n\treturn\n}\n",
		"package p\n\nfunc a() {\n\treturn\n}\n" + fc + "\nfunc b() {\n\treturn\n}\n// end\n",
		"package q\n\nfunc a() {\n\treturn\n}\n" + fc + "\nfunc b() {\n\treturn\n}\n// end\n", 0},
	{"a block ending in a brace before a run of braces",
		"if a {\n\tx()\n\t}\n}\n}\n", "if a {\n\tx()\n\t}\n\t}\n}\n}\n", "If a {\n\tx()\n\t}\n\t}\n}\n}\n",
		"If a {\n\tx()\n\t}\n\t}\n}\n}\n", 0},
	{"a block ending in a blank line among blank lines",
		"a\n\nb\n\nc\n\nd\n\ne\n", "A\n\nb\n\nc\n\nnew\n\nd\n\ne\n", "a\n\nb\n\nc\n\nnew\n\nd\n\nE\n",
		"A\n\nb\n\nc\n\nnew\n\nd\n\nE\n", 0},
	{"the same function inserted on both sides, one next to a change",
		"func a() {\n}\n\nfunc b() {\n}\n\nfunc c() {\n}\n",
		"func A() {\n}\n\nfunc b() {\n}\n\nfunc n() {\n}\n\nfunc c() {\n}\n",
		"func a() {\n}\n\nfunc b() {\n}\n\nfunc n() {\n}\n\nfunc C() {\n}\n",
		"func A() {\n}\n\nfunc b() {\n}\n\nfunc n() {\n}\n\n<<<<<<< ours\nfunc c() {\n=======\nfunc C() {\n>>>>>>> theirs\n}\n", 1},
	{"adjacent changes conflict", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n",
		"a\n<<<<<<< ours\nB\nc\n=======\nb\nC\n>>>>>>> theirs\nd\n", 1},
	{"the same change taken once", "a\nb\nc\nd\n", "a\nB\nc\nD\n", "a\nB\nc\nd\n", "a\nB\nc\nD\n", 0},
	{"deletions on both sides", "a\nb\nc\nd\ne\n", "a\nb\nc\nd\n", "b\nc\nd\ne\n", "b\nc\nd\n", 0},
	{"overlapping deletions", "a\nb\nc\nd\ne\n", "a\nd\ne\n", "a\nb\ne\n",
		"a\n<<<<<<< ours\nd\n=======\nb\n>>>>>>> theirs\ne\n", 1},
	{"a line added after a last line without a newline", "a\nb\nc", "A\nb\nc", "a\nb\nc\nd", "A\nb\nc\nd", 0},
	{"a last line without a newline in a conflict", "a\nb\nc", "a\nb\nX", "a\nb\nY",
		"a\nb\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\n", 1},
	{"markers in a CRLF file", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", "a\r\nX\r\nc\r\n",
		"a\r\n<<<<<<< ours\r\nB\r\n=======\r\nX\r\n>>>>>>> theirs\r\nc\r\n", 1},
	{"conflicts a brace apart are one", "a\n}\nb\n", "A\n}\nB\n", "X\n}\nY\n",
		"<<<<<<< ours\nA\n}\nB\n=======\nX\n}\nY\n>>>>>>> theirs\n", 1},
	{"what both sides wrote alike is out of the conflict", "a\nb\nc\nd\ne\nf\n", "a\nX\nsame\nsame 2\nsame 3\nsame 4\nc\nd\ne\nf\n", "a\nY\nsame\nsame 2\nsame 3\nsame 4\nc\nd\ne\nf\n",
		"a\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\nsame\nsame 2\nsame 3\nsame 4\nc\nd\ne\nf\n", 1},
}

// TestMerge3Shapes: each shape merges to git merge-file's result (and git,
// where installed, still gives it).
func TestMerge3Shapes(t *testing.T) {
	git, _ := exec.LookPath("git")
	for _, c := range mergeShapes {
		got, n := Merge3(c.base, c.ours, c.theirs, "ours", "theirs")
		if got != c.want || n != c.conflicts {
			t.Errorf("%s: got %d conflicts:\n%s\nwant %d:\n%s", c.name, n, got, c.conflicts, c.want)
		}
		if git != "" {
			if g, gn := gitMerge(t, git, c.base, c.ours, c.theirs); g != c.want || gn != c.conflicts {
				t.Errorf("%s: git merge-file gives %d conflicts:\n%s", c.name, gn, g)
			}
		}
	}
}

// TestCompactPlacesOnce: an insertion found anywhere along a run of equal
// lines lands at one place, the lowest.
func TestCompactPlacesOnce(t *testing.T) {
	x := []string{"a\n", "}\n", "\n", "b\n", "}\n", "\n", "c\n"}
	y := []string{"a\n", "}\n", "\n", "b\n", "}\n", "\n", "}\n", "\n", "c\n"}
	want := []change{{a: 6, an: 0, b: 6, bn: 2}}
	for at := 4; at <= 6; at++ {
		// y is x with y's lines [at, at+2) inserted at at.
		if got := recompact(x, y, []change{{a: at, an: 0, b: at, bn: 2}}); !reflect.DeepEqual(got, want) {
			t.Errorf("inserted at %d: compacted to %v, want %v", at, got, want)
		}
	}
	if got := diffLines(x, y); !reflect.DeepEqual(got, want) {
		t.Errorf("diffLines: %v, want %v", got, want)
	}
}

// BenchmarkMerge3 merges two edits of a 10,000-line file: the host's
// scattered over it, the session's in one place.
func BenchmarkMerge3(b *testing.B) {
	var base, ours, theirs strings.Builder
	for i := 0; i < 10000; i++ {
		line := "\tx := " + strconv.Itoa(i) + "\n"
		if i%10 == 9 {
			line = "}\n"
		}
		base.WriteString(line)
		switch {
		case i%500 == 250:
			ours.WriteString("\t// host " + strconv.Itoa(i) + "\n")
		default:
			ours.WriteString(line)
		}
		if i >= 5000 && i < 5050 {
			theirs.WriteString("\ty := " + strconv.Itoa(i) + "\n")
		} else {
			theirs.WriteString(line)
		}
	}
	b.SetBytes(int64(base.Len()))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, n := Merge3(base.String(), ours.String(), theirs.String(), "host", "recovered"); n != 0 {
			b.Fatalf("%d conflicts", n)
		}
	}
}
