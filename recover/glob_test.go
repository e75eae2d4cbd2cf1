package recover

import (
	"regexp"
	"strings"
	"testing"
)

// shellMatch matches name against one shell glob as matching does.
func shellMatch(pattern, name string, recursive bool) (string, bool) {
	g := compileGlobs([]string{pattern}, nil)
	if len(g.shell) == 0 {
		return "", false // a pattern that does not compile matches nothing
	}
	return globPrefix(g.shell[0], g.dirOnly[0], name, recursive)
}

// TestGlobPrefix: a shell glob matches as pathname expansion does, one
// component at a time, never across a slash nor a leading dot, escapes
// standing for themselves, bash's classes as bash reads them; with
// recursive, a matched directory is returned for the files under it; a
// glob ending in a slash matches directories only.
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
		{"/w/*/", "/w/top.txt", true, "", false},
		{"/w/*/", "/w/sub/a.txt", true, "/w/sub", true},
		{"/w/src/*/", "/w/src/sub/a.go", false, "/w/src/sub", true},
		{"/w/a?.go", "/w/ab.go", false, "/w/ab.go", true},
		{"/w/a?.go", "/w/a/.go", false, "", false},
		{"/w/b[12].go", "/w/b2.go", false, "/w/b2.go", true},
		{"/w/b[!12].go", "/w/b2.go", false, "", false},
		{"/w/b[!12].go", "/w/b3.go", false, "/w/b3.go", true},
		{"/w/b[^12].go", "/w/b3.go", false, "/w/b3.go", true},
		{"/w/[[:upper:]]*.md", "/w/README.md", false, "/w/README.md", true},
		{"/w/[[:upper:]]*.md", "/w/readme.md", false, "", false},
		{"/w/[]]*.txt", "/w/]x.txt", false, "/w/]x.txt", true},
		{"/w/[a-c]x", "/w/bx", false, "/w/bx", true},
		{"/w/[a-c]x", "/w/dx", false, "", false},
		{"/w/[-a]x", "/w/-x", false, "/w/-x", true},
		{`/w/x\*`, "/w/x*", false, "/w/x*", true},
		{`/w/x\*`, "/w/xy", false, "", false},
		{`/w/app/\[id]/*.tsx`, "/w/app/[id]/page.tsx", false, "/w/app/[id]/page.tsx", true},
		{`/w/app/\[id]/*.tsx`, "/w/app/i/page.tsx", false, "", false},
		{"/w/[", "/w/[", false, "/w/[", true}, // an unclosed [ is itself
		{"/w/*/*.go", "/w/p/q.go", false, "/w/p/q.go", true},
		{"/w/src/**/*.ts", "/w/src/x/b.ts", false, "/w/src/x/b.ts", true},
		{"/w/src/**/*.ts", "/w/src/a.ts", false, "", false}, // only with globstar: unsure
	}
	for _, c := range cases {
		got, ok := shellMatch(c.pattern, c.name, c.recursive)
		if got != c.want || ok != c.ok {
			t.Errorf("match(%q, %q, %v) = %q, %v; want %q, %v", c.pattern, c.name, c.recursive, got, ok, c.want, c.ok)
		}
	}
}

// TestDeepMatch: ** read as any depth (globstar, zsh) matches no
// directory, one, or several.
func TestDeepMatch(t *testing.T) {
	g := compileGlobs([]string{"/w/src/**/*.ts"}, nil)
	for name, want := range map[string]bool{"/w/src/a.ts": true, "/w/src/x/y/b.ts": true, "/w/lib/a.ts": false, "/w/src/a.go": false} {
		if got := deepMatch(g.shell[0], name, false); got != want {
			t.Errorf("deepMatch(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSpecRegexp: a pattern a command expands itself matches across
// slashes, **/ also no directory; with recursive, whatever lies under a
// match.
func TestSpecRegexp(t *testing.T) {
	cases := []struct {
		spec, name string
		recursive  bool
		ok         bool
	}{
		{"/w/src/*.go", "/w/src/a.go", false, true},
		{"/w/src/*.go", "/w/src/sub/a.go", false, true},
		{"/w/src/**/*.ts", "/w/src/x/y/z.ts", false, true},
		{"/w/src/**/*.ts", "/w/src/z.ts", false, true},
		{"/w/src/**/*.ts", "/w/lib/z.ts", false, false},
		{"/w/docs", "/w/docs/a.md", true, true},
		{"/w/docs", "/w/docsx/a.md", true, false},
		{"/w/[!a]*.md", "/w/b.md", false, true},
		{"/w/[!a]*.md", "/w/a.md", false, false},
		{`/w/a\*.md`, "/w/a*.md", false, true},
		{`/w/a\*.md`, "/w/ab.md", false, false},
		{"/w/a.(md)", "/w/a.(md)", false, true},
	}
	for _, c := range cases {
		re, err := regexp.Compile(specRegexp(c.spec))
		if err != nil {
			t.Errorf("specRegexp(%q): %v", c.spec, err)
			continue
		}
		if got := re.MatchString(c.name) || c.recursive && specUnder(re, c.name); got != c.ok {
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
	f.Add("/w/[[:alpha:]]]/*/", "/w/a]/b/c", true)
	f.Fuzz(func(t *testing.T, pattern, name string, recursive bool) {
		if m, ok := shellMatch(pattern, name, recursive); ok {
			if m != name && !strings.HasPrefix(name, m+"/") {
				t.Fatalf("match(%q, %q) = %q: not the name nor a directory of it", pattern, name, m)
			}
		}
		g := compileGlobs([]string{pattern}, []string{pattern})
		if len(g.shell) > 0 {
			deepMatch(g.shell[0], name, recursive)
		}
		plain := !strings.ContainsAny(pattern, `*?[\`) && !strings.HasSuffix(pattern, "/")
		if plain && !recursive {
			if _, ok := shellMatch(pattern, name, false); ok != (pattern == name) && !strings.Contains(pattern+name, "/.") && !strings.HasPrefix(pattern+name, ".") {
				t.Fatalf("plain pattern %q on %q: match %v", pattern, name, ok)
			}
			if len(g.specs) > 0 && g.specs[0].MatchString(name) != (pattern == name) {
				t.Fatalf("plain spec %q on %q: match %v", pattern, name, pattern != name)
			}
		}
	})
}
