package shellcmd

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Variables are read in two cases only, where the value a use of $NAME
// expands to is certain from the script alone:
//
//   - in the body of a loop over literal words, for NAME in WORD…, whose
//     body assigns NAME no other way: the body is read once per word;
//   - after NAME=WORD, a statement of its own with a literal WORD, when
//     nothing else in the script assigns NAME: the binding holds for the
//     statements after it, at the same or a deeper nesting, as a cd does.
//
// Anything that may assign a variable the script does not name (eval,
// source, trap, a nameref, read $V) turns this off. Functions defined
// outside the script are taken not to assign the script's variables.

// maxLoopWords bounds the words a loop may have to be read once per word;
// maxUnrolled bounds the bytes of loop bodies so read for one Parse, so
// that nested loops cannot make the reading grow without end.
const (
	maxLoopWords = 256
	maxUnrolled  = 1 << 18
)

// binding is the value of a shell variable as far as the script shows
// it: known, or hidden when a later assignment makes it unknown.
type binding struct {
	name, val string
	known     bool
	globs     []string // the patterns a for loop's variable takes each match of
	at        dirState // where the loop ran: its matches are names relative to it
}

// bind records that name holds val from here on (unknown unless known).
func (s *scope) bind(name, val string, known bool) {
	s.vars = append(s.vars, binding{name: name, val: val, known: known})
}

// literal is literal with the variables bound in s.
func (s *scope) literal(w *syntax.Word) (string, bool) {
	v, _, ok := literalIn(w, s.vars, false)
	return v, ok
}

// globVar returns the patterns of a loop variable standing alone as a word
// ($f, "${f}") in the body of a for loop over globs (and literal words,
// as patterns that match only themselves).
func (s *scope) globVar(w *syntax.Word) ([]string, bool) {
	if w == nil || len(w.Parts) != 1 {
		return nil, false
	}
	part := w.Parts[0]
	if q, ok := part.(*syntax.DblQuoted); ok && len(q.Parts) == 1 {
		part = q.Parts[0]
	}
	p, ok := part.(*syntax.ParamExp)
	if !ok || p.Param == nil {
		return nil, false
	}
	if _, known := lookup(s.vars, p); known {
		return nil, false
	}
	for i := len(s.vars) - 1; i >= 0; i-- {
		if b := s.vars[i]; b.name == p.Param.Value {
			// Used elsewhere ((cd src && rm "$f")), a match names another
			// file than the one that matched.
			return b.globs, len(b.globs) > 0 && b.at == s.cur
		}
	}
	return nil, false
}

// escapeGlob writes s as a pattern that matches only s.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '*' || c == '?' || c == '[' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pattern returns the pattern a word names files by when it is literal but
// for unquoted *, ? and [ (see literalIn).
func (s *scope) pattern(w *syntax.Word) (string, bool) {
	v, globbed, ok := literalIn(w, s.vars, true)
	return v, ok && globbed
}

// process returns the scope a new shell process (bash -c, bash <<EOF)
// starts with: the directory, and none of the variables, which it would
// see only if they were exported.
func (s *scope) process() *scope {
	return &scope{cur: s.cur, stack: slices.Clone(s.stack)}
}

// lookup returns the value vars bind to the variable p expands, when p is
// a plain $NAME or ${NAME}.
func lookup(vars []binding, p *syntax.ParamExp) (string, bool) {
	if len(vars) == 0 || p.Param == nil || p.Flags != nil || p.Excl || p.Length || p.Width || p.IsSet ||
		p.Split != syntax.OptUnset || p.GlobSubst != syntax.OptUnset || p.RcExpand != syntax.OptUnset ||
		p.NestedParam != nil || p.Index != nil || len(p.Modifiers) > 0 || p.Slice != nil || p.Repl != nil ||
		p.Names != 0 || p.Exp != nil {
		return "", false
	}
	for i := len(vars) - 1; i >= 0; i-- {
		if vars[i].name == p.Param.Value {
			return vars[i].val, vars[i].known
		}
	}
	return "", false
}

// bindable reports whether name is a variable whose value only the script
// sets: a name, and not one the shell itself changes.
func bindable(name string) bool {
	if !assignment(name + "=") {
		return false
	}
	switch name {
	case "_", "IFS", "PWD", "OLDPWD", "REPLY", "OPTARG", "OPTIND", "RANDOM", "SRANDOM", "SECONDS", "LINENO",
		"BASHPID", "BASH_REMATCH", "PIPESTATUS", "EPOCHSECONDS", "EPOCHREALTIME", "HISTCMD", "FUNCNAME",
		"BASH_COMMAND", "BASH_SUBSHELL", "BASH_ARGV0", "SHLVL", "MAPFILE", "COPROC", "UID", "EUID", "PPID":
		return false
	}
	return true
}

// sets is what some code may do to shell variables.
type sets struct {
	count map[string]int // how many places assign each name
	any   bool           // something may assign a variable it does not name
	ifs   bool           // IFS is assigned: word splitting is not the default
	jumps bool           // break, continue, exit or return: a body may stop early
	funcs *sets          // when set, what function bodies and traps do, collected apart
}

// scriptSets is what a whole script does to variables, and what its
// function bodies do, which may run wherever the function is called.
type scriptSets struct {
	all, funcs sets
}

// sets returns what w's script does to variables, reading it the first
// time: most scripts never ask.
func (w *walker) sets() *scriptSets {
	if w.vars == nil {
		w.vars = &scriptSets{}
		w.vars.all.funcs = &w.vars.funcs
		if w.file != nil {
			w.vars.all.walk(w.file)
		}
	}
	return w.vars
}

// collect returns what stmts do to variables.
func collect(stmts []*syntax.Stmt) sets {
	var s sets
	for _, st := range stmts {
		s.walk(st)
	}
	return s
}

func (s *sets) walk(n syntax.Node) { syntax.Walk(n, s.node) }

// add counts an assignment to name.
func (s *sets) add(name string) {
	if s.count == nil {
		s.count = map[string]int{}
	}
	s.count[name]++
}

// target counts the variable an arithmetic assignment names: NAME or
// NAME[i]. Any other word ($V = 1) may name any variable.
func (s *sets) target(x syntax.Node) {
	w, ok := x.(*syntax.Word)
	if !ok || w == nil || len(w.Parts) != 1 {
		s.any = true
		return
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		name, _, _ := strings.Cut(p.Value, "[")
		s.add(name)
	case *syntax.ParamExp: // a[i] in arithmetic
		if p.Param == nil || p.Dollar.IsValid() {
			s.any = true
			return
		}
		s.add(p.Param.Value)
	default:
		s.any = true
	}
}

func (s *sets) node(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.CallExpr:
		for _, a := range n.Assigns {
			// NAME=v cmd sets NAME for cmd alone; it still counts, but for
			// IFS, which agents set so for read.
			if a.Name != nil && (a.Name.Value != "IFS" || len(n.Args) == 0) {
				s.add(a.Name.Value)
				s.ifs = s.ifs || a.Name.Value == "IFS"
			}
		}
		s.command(n.Args)
	case *syntax.DeclClause:
		s.decl(n)
	case *syntax.ForClause:
		if it, ok := n.Loop.(*syntax.WordIter); ok && it.Name != nil {
			s.add(it.Name.Value)
		}
	case *syntax.CoprocClause:
		if v, ok := literal(n.Name); ok {
			s.add(v)
		} else if n.Name != nil {
			s.any = true
		}
	case *syntax.BinaryArithm:
		if n.Op >= syntax.Assgn && n.Op <= syntax.PowAssgn {
			s.target(n.X)
		}
	case *syntax.UnaryArithm:
		if n.Op == syntax.Inc || n.Op == syntax.Dec {
			s.target(n.X)
		}
	case *syntax.ParamExp:
		if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
			if n.Param == nil {
				s.any = true
			} else {
				s.add(n.Param.Value)
			}
		}
	case *syntax.FuncDecl:
		if s.funcs != nil {
			s.funcs.walk(n.Body)
		}
	}
	return true
}

// command counts the variables a simple command assigns by naming them.
func (s *sets) command(args []*syntax.Word) {
	for len(args) > 0 {
		name, ok := commandName(args[0])
		if !ok {
			// $CMD may be read or eval.
			s.any = true
			return
		}
		switch name {
		case "command", "builtin":
			args = args[1:]
			continue
		case "eval", "source", ".":
			s.any = true
		case "trap":
			// The handler runs at times the script does not show.
			s.any = true
			if s.funcs != nil {
				s.funcs.any = true
			}
		case "break", "continue", "exit", "return":
			s.jumps = true
		case "read", "mapfile", "readarray", "getopts", "unset", "wait", "declare", "typeset", "local", "export", "readonly":
			// -n is a nameref to declare, local, typeset and unset.
			nameref := name != "read" && name != "mapfile" && name != "readarray" && name != "wait" && name != "export"
			for _, a := range args[1:] {
				v, ok := literal(a)
				switch {
				case !ok || nameref && strings.HasPrefix(v, "-") && strings.Contains(v, "n"):
					s.any = true // read $V, declare -n
				case !strings.HasPrefix(v, "-"):
					v, _, _ = strings.Cut(v, "=")
					v, _, _ = strings.Cut(v, "[")
					s.add(v)
				}
			}
		case "printf":
			for i := 1; i < len(args); i++ {
				v, ok := literal(args[i])
				if !ok {
					if l, lit := firstPart(args[i]).(*syntax.Lit); lit && strings.HasPrefix(l.Value, "-v") {
						s.any = true // printf -v"$NAME"
					}
					continue
				}
				if !strings.HasPrefix(v, "-v") {
					continue
				}
				if v = v[2:]; v == "" && i+1 < len(args) {
					i++
					if v, ok = literal(args[i]); !ok {
						s.any = true
						continue
					}
				}
				v, _, _ = strings.Cut(v, "[")
				s.add(v)
			}
		}
		return
	}
}

// decl counts the variables of declare, local, export, readonly and
// typeset.
func (s *sets) decl(d *syntax.DeclClause) {
	if d.Variant != nil && d.Variant.Value == "nameref" {
		s.any = true
	}
	keeps := d.Variant != nil && (d.Variant.Value == "export" || d.Variant.Value == "readonly")
	for _, a := range d.Args {
		switch {
		case a.Name != nil:
			// export NAME and readonly NAME leave its value alone.
			if !a.Naked || !keeps {
				s.add(a.Name.Value)
				s.ifs = s.ifs || a.Name.Value == "IFS"
			}
		case a.Value != nil:
			v, ok := literal(a.Value)
			switch {
			case !ok:
				s.any = true // declare "$NAME=…"
			case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
				if strings.Contains(v, "n") {
					s.any = true // a nameref
				}
			default:
				v, _, _ = strings.Cut(v, "=")
				v, _, _ = strings.Cut(v, "[")
				s.add(v)
			}
		}
	}
}

// assign reads the assignments of a statement that is only assignments,
// NAME=WORD …: a name assigned nowhere else gets a literal WORD's value,
// and any other is unknown from here on.
func (w *walker) assign(assigns []*syntax.Assign, sc *scope) {
	for _, a := range assigns {
		if a.Name == nil {
			continue
		}
		name := a.Name.Value
		if !a.Append && a.Index == nil && a.Array == nil && bindable(name) {
			if v, ok := literal(a.Value); ok {
				if s := w.sets(); !s.all.any && !s.all.ifs && s.all.count[name] == 1 {
					sc.bind(name, v, true)
					continue
				}
			}
		}
		if slices.ContainsFunc(sc.vars, func(b binding) bool { return b.name == name }) {
			sc.bind(name, "", false)
		}
	}
}

// loop reads a for loop over literal words: its body once per word, with
// the loop's variable bound to the word. It returns false, having read
// nothing, for any other loop, for a body that may assign the variable
// otherwise, and past the bounds on the work (maxLoopWords, maxUnrolled).
func (w *walker) loop(c *syntax.ForClause, sc *scope, cx ctx) bool {
	it, ok := c.Loop.(*syntax.WordIter)
	// for NAME; do … loops over the positional parameters, which the
	// script does not show; select asks the user.
	if !ok || c.Select || it.Name == nil || !it.InPos.IsValid() {
		return false
	}
	items, ok := w.expandBraces(it.Items, maxLoopWords)
	if !ok || len(items) == 0 || w.budget == nil || !bindable(it.Name.Value) {
		return false
	}
	size := max(int(c.DonePos.Offset())-int(c.DoPos.Offset()), 1)
	if size*len(items) > *w.budget {
		return false
	}
	words := make([]string, len(items))
	for i, wd := range items {
		v, ok := literal(wd)
		if !ok {
			return false
		}
		words[i] = v
	}
	name := it.Name.Value
	if !w.onlyLoopSets(c, name) {
		return false
	}
	*w.budget -= size * len(items)
	// The body runs once per word, unless it breaks off; the loop's status
	// is its last command's, so none is the script's last.
	bcx := ctx{cond: cx.cond || collect(c.Do).jumps}
	w.branch(sc, func(sub *scope) {
		start, vars := sub.cur, sub.vars
		for _, v := range words {
			if sub.cur != start {
				// A turn that moved leaves the next one where it ended,
				// or wherever it broke off: a place that cannot be told.
				sub.cur = either(start, sub.cur)
			}
			sub.vars = slices.Clip(vars)
			sub.bind(name, v, true)
			w.stmts(c.Do, sub, bcx)
		}
	})
	return true
}

// onlyLoopSets reports whether nothing but the loop itself sets its
// variable name in its body: no assignment, no function that may, no
// change of IFS, nothing that sets variables the script does not show.
func (w *walker) onlyLoopSets(c *syntax.ForClause, name string) bool {
	body := collect(c.Do)
	s := w.sets()
	return !body.any && body.count[name] == 0 && !s.all.ifs && !s.funcs.any && s.funcs.count[name] == 0
}

// firstPart returns the first part of w, or nil.
func firstPart(w *syntax.Word) syntax.WordPart {
	if w == nil || len(w.Parts) == 0 {
		return nil
	}
	return w.Parts[0]
}

// commandName returns the name of a command as a word spells it, with its
// quotes removed, when it holds no expansion; a glob is taken as written
// ([ is test, not a pattern that could match "read").
func commandName(w *syntax.Word) (string, bool) {
	if v, ok := literal(w); ok {
		return v, true
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
