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
	"go mod init": {"go.mod"}, "go mod edit": {"go.mod"}, "biome init": {"biome.json", "biome.jsonc"},
}

// redirected are the verbs of effects a redirection makes.
var redirected = map[string]bool{"redirect": true, "cat <<": true, "echo": true, "printf": true}

// checkResult checks the properties every Result must have for script.
// Paths are checked against the script's words as mvdan.cc/sh/v3/expand
// removes their quotes, and expands the variables the script assigns
// literal values (see scriptWords): an implementation other than the one
// under test.
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
	moves := strings.Contains(script, "cd") || strings.Contains(script, "pushd") || strings.Contains(script, "-C") || strings.Contains(script, "--cwd")
	for _, e := range r.Effects {
		if r.Err != nil && len(e.Paths) > 0 {
			return fmt.Errorf("a path from a script that does not parse: %+v", e)
		}
		globbed := len(e.Patterns)+len(e.Specs) > 0
		if (e.Kind == Move || e.Kind == Copy) && !globbed && len(e.Paths) != 2 {
			return fmt.Errorf("%s with %d paths", e.Kind, len(e.Paths))
		}
		if (e.Kind == Move || e.Kind == Copy) && globbed && len(e.Paths) != 1 {
			return fmt.Errorf("%s of a pattern with %d paths", e.Kind, len(e.Paths))
		}
		if e.Bound && (e.Kind != Write || len(e.Specs) == 0 || len(e.Patterns) > 0 || len(e.Paths) > 0 && (e.Verb != "git checkout" || len(e.Paths) > 1)) {
			return fmt.Errorf("bound %s %q with paths %q, patterns %q, specs %q", e.Kind, e.Verb, e.Paths, e.Patterns, e.Specs)
		}
		if globbed && !e.Bound && e.Kind != Move && e.Kind != Copy && (len(e.Paths) > 0 || e.Kind != Write && e.Kind != Delete) {
			return fmt.Errorf("%s of a pattern with paths %q", e.Kind, e.Paths)
		}
		for _, p := range append(e.Patterns[:len(e.Patterns):len(e.Patterns)], e.Specs...) {
			if p == "" || strings.ContainsAny(p, "\x00\n") {
				return fmt.Errorf("bad pattern %q in %+v", p, e)
			}
		}
		// Go's flag package stops at the first operand: what follows is an
		// operand whatever it looks like (gofmt -w a.go -w, -w" $f"), which
		// the script's words cannot tell (the first operand may be one no
		// path is made of); TestTools holds goFlags to it.
		goStyle := e.Verb == "gofmt -w" || e.Verb == "goimports -w" || e.Verb == "shfmt -w"
		if e.Kind == Run && len(e.Paths) < 2 {
			return fmt.Errorf("run with paths %q", e.Paths)
		}
		if e.Kind == Task && (len(e.Paths) != 1 || len(e.Args) == 0) {
			return fmt.Errorf("task with paths %q and args %q", e.Paths, e.Args)
		}
		for i, p := range e.Paths {
			if (e.Kind == Run && i == 1 || e.Kind == Task) && (p == "." || words[p] || moves) {
				continue // the directory the script runs in
			}
			switch {
			case p == "":
				return fmt.Errorf("empty path in %+v", e)
			case len(p) > maxPath || strings.ContainsAny(p, "\n\x00"):
				return fmt.Errorf("path %q is not one", p)
			case strings.HasPrefix(p, "-") && whole[p] && !strings.Contains(script, "--") && !redirected[e.Verb] && !optionValue(script, p) && !goStyle:
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
	// The word may be spelled with quotes or escapes ("-\\0" for -\0):
	// look at the arguments of each command as quote removal leaves them.
	if f, _, err := parse(script); err == nil {
		found := false
		syntax.Walk(f, func(n syntax.Node) bool {
			call, ok := n.(*syntax.CallExpr)
			if !ok || found {
				return !found
			}
			prev := ""
			for _, a := range call.Args {
				fs, _ := expandWord(a)
				for _, v := range fs {
					if v == word && strings.HasPrefix(prev, "-") {
						found = true
					}
					prev = v
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	// The same spelled in the raw text, for the scripts a word holds
	// (bash -c): with its backslashes removed too (-\0 for -0).
	if unescaped := strings.ReplaceAll(script, "\\", ""); unescaped != script && optionValue(unescaped, word) {
		return true
	}
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
// bash <<EOF). A word that expands a variable the script assigns (for
// NAME in WORD…, NAME=WORD) is also expanded with each value so assigned.
func scriptWords(script string, depth int, into map[string]bool) {
	if depth > maxDepth+1 || len(into) > 1<<14 {
		return
	}
	f, script, err := parse(script)
	if err != nil {
		return
	}
	vals := assignedValues(f)
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
		scripts := map[string]bool{}
		if !hdocs[w] {
			for _, env := range environs(w, vals) {
				fs, _ := expandWordIn(w, env)
				fields = append(fields, fs...)
				if len(fs) == 1 {
					scripts[fs[0]] = true
				}
			}
		}
		for i, v := range append(forms, fields...) {
			if !into[v] {
				into[v] = true
				if (i == 1 || i > 1 && nested || scripts[v]) && len(v) < 4096 && strings.ContainsAny(v, " \t\n;&|<>") {
					scriptWords(v, depth+1, into)
				}
			}
		}
		return true
	})
}

// assignedValues returns, per variable, the values script gives it: each
// field of the words of a for loop over it, and each value of an
// assignment to it, as mvdan.cc/sh/v3/expand expands them with no
// variable set.
func assignedValues(f *syntax.File) map[string][]string {
	vals := map[string][]string{}
	add := func(name string, vs ...string) {
		for _, v := range vs {
			if !slices.Contains(vals[name], v) {
				vals[name] = append(vals[name], v)
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.WordIter:
			for _, it := range n.Items {
				fs, _ := expandWordIn(it, nil)
				add(n.Name.Value, fs...)
			}
		case *syntax.Assign:
			if n.Name != nil && n.Value != nil {
				if v, err := expandLiteral(n.Value); err == nil {
					add(n.Name.Value, v)
				}
			}
		}
		return true
	})
	return vals
}

// environs returns an environment for each way of giving the variables w
// expands the values vals lists for them, or none when w expands none of
// them or there are too many ways.
func environs(w *syntax.Word, vals map[string][]string) []expand.Environ {
	if len(vals) == 0 {
		return nil
	}
	var names []string
	ways := 1
	syntax.Walk(w, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil && len(vals[p.Param.Value]) > 0 && !slices.Contains(names, p.Param.Value) {
			names = append(names, p.Param.Value)
			ways *= len(vals[p.Param.Value])
		}
		return ways <= 1<<10
	})
	if len(names) == 0 || ways > 1<<10 {
		return nil
	}
	envs := make([]expand.Environ, 0, ways)
	for i := range ways {
		pairs := make([]string, len(names))
		for j, name := range names {
			vs := vals[name]
			pairs[j] = name + "=" + vs[i%len(vs)]
			i /= len(vs) // the next digit, counting in mixed radix
		}
		envs = append(envs, expand.ListEnviron(pairs...))
	}
	return envs
}

// expandWord removes the quotes of w with expand.Fields, which may not
// like a word made for a shell it does not run (a command substitution,
// say).
func expandWord(w *syntax.Word) (fields []string, err error) { return expandWordIn(w, nil) }

// expandWordIn is expandWord with the variables of env set.
func expandWordIn(w *syntax.Word, env expand.Environ) (fields []string, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("expand panicked")
		}
	}()
	return expand.Fields(&expand.Config{Env: env}, w)
}

// expandLiteral expands w as the value of an assignment, which is not
// split into fields.
func expandLiteral(w *syntax.Word) (s string, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("expand panicked")
		}
	}()
	return expand.Literal(&expand.Config{}, w)
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
		for _, p := range e.Patterns {
			fmt.Fprintf(&b, " glob=%q", p)
		}
		for _, p := range e.Specs {
			fmt.Fprintf(&b, " spec=%q", p)
		}
		if len(e.Args) > 0 {
			fmt.Fprintf(&b, " args=%q", strings.Join(e.Args, " "))
		}
		for _, f := range []struct {
			on   bool
			name string
		}{{e.Recursive, "recursive"}, {e.IntoDir, "into-dir"}, {e.Cond, "cond"}, {e.Bound, "bound"}} {
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
