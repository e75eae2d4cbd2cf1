package shellcmd

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// impliedPaths are paths a command changes without naming them.
var impliedPaths = map[string][]string{
	"go mod tidy": {"go.mod", "go.sum"}, "go get": {"go.mod", "go.sum"},
	"go mod init": {"go.mod"}, "go mod edit": {"go.mod"},
}

// redirected are the verbs of effects a redirection makes.
var redirected = map[string]bool{"redirect": true, "cat <<": true, "echo": true, "printf": true}

// checkResult checks the properties every Result must have for script.
func checkResult(script string, r Result) error {
	if errors := strings.Contains(fmt.Sprint(r.Err), errInternal.Error()); errors {
		return fmt.Errorf("internal error: %v", r.Err)
	}
	// The text as the shell sees words, more or less: quotes, escapes and
	// line continuations removed, $'…' or not. A path must be in one of
	// these readings, as it is or with its own quotes removed the same way.
	unquotes := []*strings.Replacer{
		strings.NewReplacer("\\\n", "", `$'`, "", `$"`, "", `'`, "", `"`, "", `\`, ""),
		strings.NewReplacer("\\\n", "", `'`, "", `"`, "", `\`, ""),
		strings.NewReplacer(),
	}
	in := func(sub string, last bool) bool {
		for _, u := range unquotes {
			for _, text := range []string{u.Replace(script), script} {
				q := u.Replace(sub)
				if last {
					q = path.Base(q)
				}
				if q == "" || q == "." || strings.Contains(text, q) {
					return true
				}
			}
		}
		return false
	}
	moves := strings.Contains(script, "cd") || strings.Contains(script, "pushd") || strings.Contains(script, "-C")
	for _, e := range r.Effects {
		if r.Err != nil && len(e.Paths) > 0 {
			return fmt.Errorf("a path from a script that does not parse: %+v", e)
		}
		if (e.Kind == Move || e.Kind == Copy) && len(e.Paths) != 2 {
			return fmt.Errorf("%s with %d paths", e.Kind, len(e.Paths))
		}
		for _, p := range e.Paths {
			switch {
			case p == "":
				return fmt.Errorf("empty path in %+v", e)
			case len(p) > maxPath || strings.ContainsAny(p, "\n\x00"):
				return fmt.Errorf("path %q is not one", p)
			case strings.HasPrefix(p, "-") && !strings.Contains(script, "--") && !redirected[e.Verb]:
				// After -- an operand may start with a dash, and so may the
				// file a redirection names.
				return fmt.Errorf("flag %q taken for a path", p)
			case slices.Contains(impliedPaths[e.Verb], path.Base(p)):
				// Named by the command itself.
			case !in(p, true):
				return fmt.Errorf("path %q is not in the command", p)
			case !in(p, false) && !(moves && suffixIn(p, func(s string) bool { return in(s, false) })):
				return fmt.Errorf("path %q is not in the command, nor joined onto a cd", p)
			}
		}
	}
	return nil
}

// suffixIn reports whether some trailing run of p's elements is found.
func suffixIn(p string, found func(string) bool) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && found(p[i+1:]) {
			return true
		}
	}
	return false
}

// describe renders a Result one effect per line.
func describe(r Result) string {
	var b strings.Builder
	for _, e := range r.Effects {
		fmt.Fprintf(&b, "  %s %q", e.Kind, e.Verb)
		for _, p := range e.Paths {
			fmt.Fprintf(&b, " %q", p)
		}
		for _, f := range []struct {
			on   bool
			name string
		}{{e.Recursive, "recursive"}, {e.IntoDir, "into-dir"}, {e.Cond, "cond"}} {
			if f.on {
				b.WriteString(" +" + f.name)
			}
		}
		if e.Kind == Create || e.Kind == Append {
			first, _, _ := strings.Cut(strings.TrimLeft(e.Content, "\n"), "\n")
			fmt.Fprintf(&b, " content=%dB:%q", len(e.Content), printed(first))
		}
		b.WriteByte('\n')
	}
	for _, v := range r.Vague {
		fmt.Fprintf(&b, "  vague %q\n", v)
	}
	if r.Err != nil {
		fmt.Fprintf(&b, "  err %v\n", r.Err)
	}
	return b.String()
}
