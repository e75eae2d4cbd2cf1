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

// checkResult checks the properties every Result must have for script.
func checkResult(script string, r Result) error {
	if errors := strings.Contains(fmt.Sprint(r.Err), errInternal.Error()); errors {
		return fmt.Errorf("internal error: %v", r.Err)
	}
	// The text as the shell sees words: quotes and backslashes removed.
	unquote := strings.NewReplacer(`'`, "", `"`, "", `\`, "")
	norm := unquote.Replace(script)
	moves := strings.Contains(script, "cd") || strings.Contains(script, "pushd") || strings.Contains(script, "-C")
	for _, e := range r.Effects {
		if r.Err != nil && len(e.Paths) > 0 {
			return fmt.Errorf("a path from a script that does not parse: %+v", e)
		}
		if (e.Kind == Move || e.Kind == Copy) && len(e.Paths) != 2 {
			return fmt.Errorf("%s with %d paths", e.Kind, len(e.Paths))
		}
		for _, p := range e.Paths {
			q := unquote.Replace(p)
			switch {
			case p == "":
				return fmt.Errorf("empty path in %+v", e)
			case len(p) > maxPath || strings.ContainsAny(p, "\n\x00"):
				return fmt.Errorf("path %q is not one", p)
			case strings.HasPrefix(p, "-") && !strings.Contains(script, "--"):
				return fmt.Errorf("flag %q taken for a path", p)
			case slices.Contains(impliedPaths[e.Verb], path.Base(p)):
			case !strings.Contains(norm, path.Base(q)):
				return fmt.Errorf("path %q is not in the command", p)
			case !strings.Contains(norm, q) && !(moves && suffixIn(norm, q)):
				return fmt.Errorf("path %q is not in the command, nor joined onto a cd", p)
			}
		}
	}
	return nil
}

// suffixIn reports whether some trailing run of p's elements occurs in s.
func suffixIn(s, p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && strings.Contains(s, p[i+1:]) {
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
