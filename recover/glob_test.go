package recover

import (
	"regexp"
	"strings"
	"testing"
)

// TestGlobPrefix: a shell glob matches as pathname expansion does, one
// component at a time, never across a slash nor a leading dot, escapes
// standing for themselves; with recursive, a matched directory is
// returned for the files under it.
func TestGlobPrefix(t *testing.T) {
	cases := []struct {
		pattern, name string
		recursive     bool
		want          string
		ok            bool
	}{
		{"/w/src/*.go", "/w/src/a.go", false, "/w/src/a.go", true},
		{"/w/src/*.go", "/w/src/sub/a.go", false, "", false},
		{"/w/src/*.go", "/w/src/.a.go", false, "", false},
		{"/w/src/.*.go", "/w/src/.a.go", false, "/w/src/.a.go", true},
		{"/w/src/*", "/w/src/sub/a.go", false, "", false},
		{"/w/src/*", "/w/src/sub/a.go", true, "/w/src/sub", true},
		{"/w/src/*", "/w/src/.git/config", true, "", false},
		{"/w/a?.go", "/w/ab.go", false, "/w/ab.go", true},
		{"/w/a?.go", "/w/a/.go", false, "", false},
		{"/w/b[12].go", "/w/b2.go", false, "/w/b2.go", true},
		{"/w/b[!12].go", "/w/b2.go", false, "", false},
		{"/w/b[!12].go", "/w/b3.go", false, "/w/b3.go", true},
		{`/w/x\*`, "/w/x*", false, "/w/x*", true},
		{`/w/x\*`, "/w/xy", false, "", false},
		{"/w/[", "/w/[", false, "", false}, // a bad pattern matches nothing
		{"/w/*/*.go", "/w/p/q.go", false, "/w/p/q.go", true},
	}
	for _, c := range cases {
		got, ok := globPrefix(c.pattern, c.name, c.recursive)
		if got != c.want || ok != c.ok {
			t.Errorf("globPrefix(%q, %q, %v) = %q, %v; want %q, %v", c.pattern, c.name, c.recursive, got, ok, c.want, c.ok)
		}
	}
}

// TestSpecRegexp: a pattern a command expands itself matches across
// slashes, and with recursive whatever lies under a match.
func TestSpecRegexp(t *testing.T) {
	cases := []struct {
		spec, name string
		recursive  bool
		ok         bool
	}{
		{"/w/src/*.go", "/w/src/a.go", false, true},
		{"/w/src/*.go", "/w/src/sub/a.go", false, true},
		{"/w/src/**/*.ts", "/w/src/x/y/z.ts", false, true},
		{"/w/src/**/*.ts", "/w/lib/z.ts", false, false},
		{"/w/src/a?.go", "/w/src/a/.go", false, false},
		{"/w/docs", "/w/docs/a.md", true, true},
		{"/w/docs", "/w/docsx/a.md", true, false},
		{"/w/[!a]*.md", "/w/b.md", false, true},
		{"/w/[!a]*.md", "/w/a.md", false, false},
		{`/w/a\*.md`, "/w/a*.md", false, true},
		{`/w/a\*.md`, "/w/ab.md", false, false},
		{"/w/a.(md)", "/w/a.(md)", false, true},
	}
	for _, c := range cases {
		re, err := regexp.Compile(specRegexp(c.spec, c.recursive))
		if err != nil {
			t.Errorf("specRegexp(%q): %v", c.spec, err)
			continue
		}
		if got := re.MatchString(c.name); got != c.ok {
			t.Errorf("spec %q on %q (recursive %v) = %v, want %v", c.spec, c.name, c.recursive, got, c.ok)
		}
	}
}

// FuzzGlob: whatever the pattern and the name, matching never panics; a
// shell match is the name or a directory of it, on a slash; and a pattern
// with nothing to expand matches exactly the name it spells.
func FuzzGlob(f *testing.F) {
	f.Add("/w/src/*.go", "/w/src/a.go", false)
	f.Add("/w/b[!12]?.go", "/w/b3x.go", true)
	f.Add(`/w/x\*[`, "/w/x*[", false)
	f.Add("/w/**/[a-", "/w/q/r/a", true)
	f.Fuzz(func(t *testing.T, pattern, name string, recursive bool) {
		if m, ok := globPrefix(pattern, name, recursive); ok {
			if m != name && !strings.HasPrefix(name, m+"/") {
				t.Fatalf("globPrefix(%q, %q) = %q: not the name nor a directory of it", pattern, name, m)
			}
		}
		plain := !strings.ContainsAny(pattern, `*?[\`)
		if plain && !recursive {
			if _, ok := globPrefix(pattern, name, false); ok != (pattern == name) {
				t.Fatalf("plain pattern %q on %q: match %v", pattern, name, ok)
			}
		}
		re, err := regexp.Compile(specRegexp(pattern, recursive))
		if err != nil {
			return
		}
		if plain && !recursive && re.MatchString(name) != (pattern == name) {
			t.Fatalf("plain spec %q on %q: match %v", pattern, name, !(pattern == name))
		}
	})
}
