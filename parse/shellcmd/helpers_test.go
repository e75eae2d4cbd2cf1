package shellcmd

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// impliedPaths are paths a command changes without naming them.
var impliedPaths = map[string][]string{
	"go mod tidy": {"go.mod", "go.sum"}, "go get": {"go.mod", "go.sum"},
	"go mod init": {"go.mod"}, "go mod edit": {"go.mod"},
}

// redirected are the verbs of effects a redirection makes.
var redirected = map[string]bool{"redirect": true, "cat <<": true, "echo": true, "printf": true}

// checkResult checks the properties every Result must have for script.
// Paths are checked against the script's words as mvdan.cc/sh/v3/expand
// removes their quotes: an implementation other than the one under test.
func checkResult(script string, r Result) error {
	if errors := strings.Contains(fmt.Sprint(r.Err), errInternal.Error()); errors {
		return fmt.Errorf("internal error: %v", r.Err)
	}
	var whole, words, bases map[string]bool
	if slices.ContainsFunc(r.Effects, func(e Effect) bool { return len(e.Paths) > 0 }) {
		whole, words, bases = map[string]bool{}, map[string]bool{}, map[string]bool{".": true, "..": true, "/": true}
		scriptWords(script, 0, whole)
		for w := range whole {
			words[w] = true
		}
		for w := range whole {
			// A value can follow = (--target-directory=d, of=f), or a
			// short option in the same word (-td, -i.bak).
			vs := []string{w, w[strings.IndexByte(w, '=')+1:]}
			if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") {
				for i := 2; i < len(w); i++ {
					vs = append(vs, w[i:])
				}
			}
			for _, v := range vs {
				v = trimSlash(v)
				words[v] = true
				// Any element: a cd's directory joined with .. ends in one.
				for _, el := range strings.Split(v, "/") {
					bases[el] = true
				}
			}
		}
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
			case strings.HasPrefix(p, "-") && whole[p] && !strings.Contains(script, "--") && !redirected[e.Verb] && !optionValue(script, p):
				// After -- an operand may start with a dash, and so may the
				// file a redirection names or an option's value (-t -d).
				return fmt.Errorf("flag %q taken for a path", p)
			case slices.Contains(impliedPaths[e.Verb], path.Base(p)):
				// Named by the command itself.
			case !bases[path.Base(p)]:
				return fmt.Errorf("path %q is not in the command", p)
			case !words[p] && !moves:
				return fmt.Errorf("path %q is not a word of the command, and no cd came before it", p)
			}
		}
	}
	return nil
}

// optionValue reports whether word follows an option word in script, so
// may be its value (cp -t -d).
func optionValue(script, word string) bool {
	for i := 0; ; {
		j := strings.Index(script[i:], word)
		if j < 0 {
			return false
		}
		before := strings.Fields(script[:i+j])
		if len(before) > 0 && strings.HasPrefix(before[len(before)-1], "-") {
			return true
		}
		i += j + 1
	}
}

// scriptWords adds to into what each word of script is after quote
// removal, and the words of the scripts those words hold (bash -c, eval,
// bash <<EOF).
func scriptWords(script string, depth int, into map[string]bool) {
	if depth > maxDepth+1 || len(into) > 1<<14 {
		return
	}
	f, script, err := parse(script)
	if err != nil {
		return
	}
	hdocs := map[*syntax.Word]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil {
			hdocs[r.Hdoc] = true // a body, not a word: not expanded below
		}
		w, ok := n.(*syntax.Word)
		if !ok || w == nil || len(w.Parts) == 0 {
			return true
		}
		// The word as written, and its literal parts (a heredoc body),
		// are scripts as they stand; the fields expand makes hold the
		// scripts of bash -c and eval.
		var forms []string
		if end := int(w.End().Offset()); end <= len(script) {
			forms = append(forms, script[w.Pos().Offset():end])
		}
		raw := ""
		for _, p := range w.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				raw += l.Value
			}
		}
		forms = append(forms, raw)
		var fields []string
		if !hdocs[w] {
			fields, _ = expandWord(w)
			for _, f := range fields {
				// expand keeps some line continuations the parser leaves
				// in a word (after an escaped backslash, at the end).
				if strings.Contains(f, "\n") {
					forms = append(forms, strings.ReplaceAll(f, "\n", ""))
				}
			}
		}
		nested := len(fields) == 1 // a script in one word, not a brace expansion
		for i, v := range append(forms, fields...) {
			if !into[v] {
				into[v] = true
				if (i == 1 || i > 1 && nested) && len(v) < 4096 && strings.ContainsAny(v, " \t\n;&|<>") {
					scriptWords(v, depth+1, into)
				}
			}
		}
		return true
	})
}

// expandWord removes the quotes of w with expand.Fields, which may not
// like a word made for a shell it does not run (a command substitution,
// say).
func expandWord(w *syntax.Word) (fields []string, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("expand panicked")
		}
	}()
	return expand.Fields(&expand.Config{}, w)
}

// trimSlash removes the slashes that end a path, as Parse does.
func trimSlash(p string) string {
	if t := strings.TrimRight(p, "/"); t != "" {
		return t
	}
	return "/"
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
