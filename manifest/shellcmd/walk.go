package shellcmd

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// walker reads one parsed script and adds what it does to res. Scripts run
// by the script (bash -c, eval) are read by walkers of their own that share
// res.
type walker struct {
	src    string       // the text the tree's positions refer to
	file   *syntax.File // the tree
	depth  int          // how many scripts enclose this one
	res    *Result
	nvague *int        // how many times a target was found vague, repeats counted
	pats   *patterns   // patterns among the vague targets of the command being read
	budget *int        // how many more bytes of loop bodies may be read again (see loop)
	vars   *scriptSets // what the script does to variables, once asked (see sets)
	// posix is a script run by sh or dash: Debian's sh makes no brace
	// expansion, macOS's (bash) does, so a brace word there is vague.
	posix bool
}

// ctx is where a statement stands in the script's control flow.
type ctx struct {
	// cond says that the statement may not have run although the script
	// as a whole succeeded.
	cond bool
	// tail says that the script's success proves the statement's: it is
	// the last, or the left side of && in that position. The right side
	// of && in that position ran.
	tail bool
}

// dirState is the working directory as far as the script shows it.
type dirState struct {
	dir   string // joined onto relative paths; "" is where the script started
	vague string // when set, the directory cannot be told: how it was named
}

// joinPattern joins a relative pattern onto the directory, whose own *, ?,
// [ and \\ stand for themselves (cd 'app/[id]' && rm *.tsx).
func (d dirState) joinPattern(p string) string {
	if strings.HasPrefix(p, "/") || d.dir == "" {
		return p
	}
	return escapeGlob(d.dir) + "/" + p // not path.Join: the pattern is not cleaned
}

// scope is the shell state that decides what a word names: the directory
// a relative path resolves from, and the variables known to hold literal
// values. A cd that ran is taken to have succeeded: agents cd into
// directories they know, and doubting every cd would leave no path of a
// multi-line script.
type scope struct {
	cur   dirState
	stack []dirState // pushd
	// vars are the variables whose value is certain here (see vars.go),
	// latest last. A clone shares them, clipped, so that what either
	// binds next is its own.
	vars []binding
}

// clone returns the scope a subshell starts with: changes in a subshell do
// not reach its parent.
func (s *scope) clone() *scope {
	return &scope{cur: s.cur, stack: slices.Clone(s.stack), vars: slices.Clip(s.vars)}
}

// script parses src and adds its effects, starting from sc.
func (w *walker) script(src string, sc *scope, cx ctx) error {
	f, src, err := parse(src)
	if err != nil {
		return err
	}
	w.src, w.file = src, f
	w.stmts(f.Stmts, sc, cx)
	return nil
}

// text returns the source of n, for Vague entries.
func (w *walker) text(n syntax.Node) string {
	if n == nil {
		return ""
	}
	if wd, ok := n.(*syntax.Word); ok && (wd == nil || len(wd.Parts) == 0) {
		return "" // a nil *Word in a Node is not a nil Node
	}
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(w.src) || start > end {
		return ""
	}
	return w.src[start:end]
}

// patterns are the glob operands of one command, found by pathOf and
// taken by the effect the command makes of them (see call.emit).
// patterns are what the vague operands of a command name files by: shell
// globs, patterns the command expands itself, and maybe, the bounds of
// words whose value is only partly known (see maybeIn); open says that
// some vague operand is bounded by none of them.
type patterns struct {
	shell, spec, maybe []string
	open               bool
}

// takePatterns returns the patterns found since it was last called.
func (w *walker) takePatterns() patterns {
	if w.pats == nil {
		return patterns{}
	}
	p := *w.pats
	*w.pats = patterns{}
	return p
}

// add records an effect of a statement standing at cx.
func (w *walker) add(e Effect, cx ctx) {
	e.Cond = cx.cond
	w.res.Effects = append(w.res.Effects, e)
}

// vague records a target that cannot be named.
func (w *walker) vague(s string) {
	*w.nvague++
	s = printed(s)
	if !slices.Contains(w.res.Vague, s) {
		w.res.Vague = append(w.res.Vague, s)
	}
}

// unknown records a command that changes files it does not name: a Write
// without paths, and how the command was written.
func (w *walker) unknown(verb, what string, cx ctx) {
	w.add(Effect{Kind: Write, Verb: verb}, cx)
	w.vague(what)
}

// probe runs fn and replaces what it found by one unknown write when it
// found any change to files, and reports whether it did. It reads commands
// whose targets the script does not fix: xargs rm, find -exec rm, bash -c
// "$CMD".
func (w *walker) probe(verb, what string, cx ctx, fn func()) bool {
	ne, nv, vagues := len(w.res.Effects), len(w.res.Vague), *w.nvague
	fn()
	writes := *w.nvague > vagues // counted, as the list holds each entry once
	for _, e := range w.res.Effects[ne:] {
		writes = writes || e.Kind != Dir
	}
	w.res.Effects, w.res.Vague = w.res.Effects[:ne], w.res.Vague[:nv]
	if writes {
		w.unknown(verb, what, cx)
	}
	return writes
}

// stmts walks a list of statements run one after the other.
func (w *walker) stmts(list []*syntax.Stmt, sc *scope, cx ctx) {
	for i, s := range list {
		scx := cx
		scx.tail = cx.tail && i == len(list)-1
		w.stmt(s, sc, scx)
		// Nothing after an unconditional exit runs.
		if call, ok := s.Cmd.(*syntax.CallExpr); ok && !s.Background && len(call.Args) > 0 {
			if name, _ := literal(call.Args[0]); name == "exit" || name == "return" {
				cx.cond = true
			}
		}
	}
}

func (w *walker) stmt(s *syntax.Stmt, sc *scope, cx ctx) {
	if s == nil {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		// An asynchronous command runs in a subshell, and its status is
		// not the script's.
		sc, cx.tail = sc.clone(), false
	}
	if s.Negated {
		cx.tail = false
	}
	switch c := s.Cmd.(type) {
	case nil:
		// "> f" alone creates or empties f.
		w.redirSubsts(s.Redirs, sc, cx)
		w.redirects(s.Redirs, "redirect", "", true, sc, cx)
	case *syntax.CallExpr:
		w.callExpr(c, s.Redirs, sc, cx)
	default:
		// The redirections of a compound command are opened before it runs.
		w.redirSubsts(s.Redirs, sc, cx)
		w.redirects(s.Redirs, "redirect", "", false, sc, cx)
		w.compound(c, sc, cx)
	}
}

// branch walks code that may not run: it sees the directory as it is, and
// a cd inside leaves the directory after it unknown.
func (w *walker) branch(sc *scope, fn func(sub *scope)) {
	sub := sc.clone()
	fn(sub)
	if sub.cur != sc.cur {
		sc.cur = either(sc.cur, sub.cur)
	}
}

// either is the directory of a script that may be in was or in now.
func either(was, now dirState) dirState {
	a, b := was.vague, now.vague
	if a == "" {
		a = was.dir
	}
	if a == "" {
		a = "."
	}
	if b == "" {
		b = now.dir
	}
	return dirState{vague: "(" + a + " or " + b + ")"}
}

func (w *walker) compound(cmd syntax.Command, sc *scope, cx ctx) {
	switch c := cmd.(type) {
	case *syntax.Block:
		w.stmts(c.Stmts, sc, cx)
	case *syntax.Subshell:
		w.stmts(c.Stmts, sc.clone(), cx)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			// a && b && c nests to the left: when the whole list succeeded,
			// so did its left side.
			w.stmt(c.X, sc, cx)
			if cx.cond || !cx.tail {
				w.branch(sc, func(sub *scope) { w.stmt(c.Y, sub, ctx{cond: true, tail: cx.tail}) })
			} else {
				w.stmt(c.Y, sc, cx)
			}
		case syntax.OrStmt:
			w.stmt(c.X, sc, ctx{cond: cx.cond})
			w.branch(sc, func(sub *scope) { w.stmt(c.Y, sub, ctx{cond: true, tail: cx.tail}) })
		default: // pipes: every element runs, each in a subshell
			w.stmt(c.X, sc.clone(), ctx{cond: cx.cond})
			w.stmt(c.Y, sc.clone(), ctx{cond: cx.cond, tail: cx.tail})
		}
	case *syntax.IfClause:
		w.stmts(c.Cond, sc, ctx{cond: cx.cond})
		w.branch(sc, func(sub *scope) { w.stmts(c.Then, sub, ctx{cond: true, tail: cx.tail}) })
		for e := c.Else; e != nil; e = e.Else {
			w.branch(sc, func(sub *scope) {
				w.stmts(e.Cond, sub, ctx{cond: true})
				w.stmts(e.Then, sub, ctx{cond: true, tail: cx.tail})
			})
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond, sc, ctx{cond: cx.cond})
		w.branch(sc, func(sub *scope) { w.stmts(c.Do, sub, ctx{cond: true}) })
	case *syntax.ForClause:
		w.substs(c.Loop, sc, ctx{cond: cx.cond})
		if w.loop(c, sc, cx) {
			break
		}
		// Words that may be none (a glob, $(…)): the body may not run, and
		// the variable is unknown in it.
		w.branch(sc, func(sub *scope) {
			if it, ok := c.Loop.(*syntax.WordIter); ok && it.Name != nil {
				// Over globs and literal words, $f in the body is each
				// file they matched.
				var globs []string
				items, ok := w.expandBraces(it.Items, maxLoopWords)
				if ok && !c.Select && it.InPos.IsValid() && bindable(it.Name.Value) && sub.cur.vague == "" && w.onlyLoopSets(c, it.Name.Value) {
					for _, wd := range items {
						p, ok := sub.pattern(wd)
						if !ok {
							v, lit := sub.literal(wd)
							if !lit || v == "" {
								globs = nil
								break
							}
							p = escapeGlob(v)
						}
						globs = append(globs, sub.cur.joinPattern(p))
					}
				}
				sub.vars = append(slices.Clip(sub.vars), binding{name: it.Name.Value, globs: globs, at: sub.cur})
			}
			w.stmts(c.Do, sub, ctx{cond: true})
		})
	case *syntax.CaseClause:
		w.substs(c.Word, sc, ctx{cond: cx.cond})
		for _, it := range c.Items {
			w.branch(sc, func(sub *scope) {
				for _, p := range it.Patterns {
					w.substs(p, sub, ctx{cond: true})
				}
				w.stmts(it.Stmts, sub, ctx{cond: true, tail: cx.tail})
			})
		}
	case *syntax.FuncDecl:
		// A function body runs only when the function is called.
		w.stmt(c.Body, sc.clone(), ctx{cond: true})
	case *syntax.TestDecl:
		w.stmt(c.Body, sc.clone(), ctx{cond: true})
	case *syntax.TimeClause:
		w.stmt(c.Stmt, sc, cx)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, sc.clone(), ctx{cond: cx.cond})
	case *syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause, *syntax.DeclClause:
		w.substs(c, sc, cx)
	}
}

// substs walks the command and process substitutions inside n: they run
// whatever the command around them is, each in a subshell.
func (w *walker) substs(n syntax.Node, sc *scope, cx ctx) {
	if n == nil {
		return
	}
	if wd, ok := n.(*syntax.Word); ok && wd == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(n.Stmts, sc.clone(), ctx{cond: cx.cond})
			return false
		case *syntax.ProcSubst:
			w.stmts(n.Stmts, sc.clone(), ctx{cond: cx.cond})
			return false
		}
		return true
	})
}

// redirSubsts walks the substitutions in redirection targets and in the
// bodies of heredocs whose delimiter is not quoted: bash expands both.
func (w *walker) redirSubsts(redirs []*syntax.Redirect, sc *scope, cx ctx) {
	for _, r := range redirs {
		if r.Word != nil {
			w.substs(r.Word, sc, cx)
		}
		if r.Hdoc != nil && !quoted(r.Word) {
			w.substs(r.Hdoc, sc, cx)
		}
	}
}

// quoted reports whether a heredoc delimiter is quoted, which keeps the
// shell from expanding anything in the body.
func quoted(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// heredoc returns the text a heredoc or here-string feeds a command, when
// it is certain: a quoted delimiter, or an unquoted one whose body holds
// nothing the shell would expand.
func heredoc(r *syntax.Redirect) (string, bool) {
	switch r.Op {
	case syntax.WordHdoc:
		v, ok := literal(r.Word)
		return v + "\n", ok
	case syntax.Hdoc, syntax.DashHdoc:
	default:
		return "", false
	}
	body := ""
	if r.Hdoc != nil {
		for _, p := range r.Hdoc.Parts {
			l, ok := p.(*syntax.Lit)
			if !ok {
				return "", false
			}
			body += l.Value
		}
	}
	if !quoted(r.Word) && strings.ContainsAny(body, "$`\\") || !lossless(body) {
		return "", false
	}
	if r.Op == syntax.DashHdoc {
		// <<- strips the leading tabs of every line.
		lines := strings.SplitAfter(body, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		body = strings.Join(lines, "")
	}
	return body, true
}

// stdin returns what the command reads on its standard input, when a
// heredoc or here-string makes it certain.
func stdin(redirs []*syntax.Redirect) (string, bool) {
	text, ok := "", false
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			text, ok = heredoc(r)
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			text, ok = "", false
		}
	}
	return text, ok
}

// writesStdout reports whether r sends standard output to a file.
func writesStdout(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob:
		return r.N == nil || r.N.Value == "1"
	case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
		return true
	case syntax.DplOut:
		v, ok := literal(r.Word)
		return r.N == nil && ok && !isDigits(v) && v != "-"
	}
	return false
}

// devices are files a redirection may name without writing a file.
func device(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// redirects adds the writes of a statement's redirections. When out is
// certain (the command prints known text), the last file standard output
// goes to gets an exact Create or Append made by verb.
func (w *walker) redirects(redirs []*syntax.Redirect, verb, out string, certain bool, sc *scope, cx ctx) {
	last := -1
	for i, r := range redirs {
		if writesStdout(r) {
			last = i
		}
	}
	for i, r := range redirs {
		appends := false
		switch r.Op {
		case syntax.AppOut, syntax.AppAll, syntax.AppAllClob:
			appends = true
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob, syntax.RdrInOut:
		case syntax.DplOut:
			// >&2 and >&- duplicate or close a descriptor; >&word with any
			// other word sends both outputs to a file.
			if v, ok := sc.literal(r.Word); !ok || isDigits(v) || v == "-" || r.N != nil {
				continue
			}
		default:
			continue
		}
		if v, ok := sc.literal(r.Word); ok && device(v) {
			continue
		}
		w.takePatterns()
		p, _, ok := w.path(r.Word, sc)
		if !ok {
			if pats := w.takePatterns(); len(pats.maybe) > 0 {
				// > "out/$n.log": some file that matches was written.
				w.add(Effect{Kind: Write, Verb: "redirect", Specs: pats.maybe, Bound: true}, cx)
			} else if v, lit := sc.literal(r.Word); !lit || v != "" {
				w.add(Effect{Kind: Write, Verb: "redirect"}, cx)
			}
			continue
		}
		switch {
		case i == last && certain && appends:
			w.add(Effect{Kind: Append, Verb: verb, Paths: []string{p}, Content: out}, cx)
		case i == last && certain:
			w.add(Effect{Kind: Create, Verb: verb, Paths: []string{p}, Content: out}, cx)
		default:
			w.add(Effect{Kind: Write, Verb: "redirect", Paths: []string{p}}, cx)
		}
	}
}

// path resolves a word naming a file. It returns the path, whether the
// word ended in a slash (so names a directory), and false when the word
// names no file or one that cannot be told (then listed as Vague).
func (w *walker) path(word *syntax.Word, sc *scope) (string, bool, bool) {
	v, ok := sc.literal(word)
	return w.pathOf(arg{word: word, val: v, lit: ok, text: w.text(word)}, sc)
}

func (w *walker) pathOf(a arg, sc *scope) (string, bool, bool) {
	if !a.lit {
		w.vague(a.text)
		if !w.pattern(a, sc) && w.pats != nil {
			w.pats.open = true
		}
		return "", false, false
	}
	v := a.val
	if v == "" || v == "-" {
		// "" names no file (the command fails); "-" is standard input or
		// output to most commands, and a file so named is not worth a path.
		return "", false, false
	}
	if len(v) > maxPath || strings.ContainsAny(v, "\x00\n") {
		w.vague(a.text)
		if w.pats != nil {
			w.pats.open = true
		}
		return "", false, false
	}
	slash := len(v) > 1 && strings.HasSuffix(v, "/")
	if slash {
		v = strings.TrimRight(v, "/")
		if v == "" {
			v = "/"
		}
	}
	if strings.HasPrefix(v, "/") {
		return v, slash, true
	}
	if sc.cur.vague != "" {
		w.vague(sc.cur.vague + "/" + a.val)
		if w.pats != nil {
			w.pats.open = true
		}
		return "", false, false
	}
	if sc.cur.dir != "" {
		v = path.Join(sc.cur.dir, v)
	}
	return v, slash, true
}

// pattern keeps a vague operand that is a glob, joined onto the directory
// of any literal cd, for the effect the command makes of it, or else the
// pattern that bounds what it may name; it reports whether it kept one.
func (w *walker) pattern(a arg, sc *scope) bool {
	if w.pats == nil {
		return false
	}
	if sc.cur.vague != "" {
		// Under a cd the script does not name, only a word that may name
		// a file anywhere is placed.
		if v, ok := maybeIn(a.word, sc.vars); ok && a.word != nil && strings.HasPrefix(v, "/*") {
			w.pats.maybe = append(w.pats.maybe, v)
			return true
		}
		return false
	}
	list, p := &w.pats.shell, ""
	switch {
	case a.spec:
		list, p = &w.pats.spec, a.val
	case a.word != nil:
		if g, ok := sc.globVar(a.word); ok {
			*list = append(*list, g...) // joined onto the cd of the loop
			return true
		}
		v, ok := sc.pattern(a.word)
		if !ok {
			if v, ok = maybeIn(a.word, sc.vars); !ok {
				return false
			}
			list = &w.pats.maybe
		}
		p = v
	}
	if p == "" || len(p) > maxPath || strings.ContainsAny(p, "\x00\n") {
		return false
	}
	*list = append(*list, sc.cur.joinPattern(p))
	return true
}

// callExpr walks a simple command: its expansions, its redirections, then
// the command itself.
func (w *walker) callExpr(ce *syntax.CallExpr, redirs []*syntax.Redirect, sc *scope, cx ctx) {
	for _, a := range ce.Assigns {
		w.substs(a, sc, cx)
	}
	for _, a := range ce.Args {
		w.substs(a, sc, cx)
	}
	w.redirSubsts(redirs, sc, cx)
	args := make([]arg, 0, len(ce.Args))
	budget := maxBraceWords // for all the words of the command
	for _, wd := range ce.Args {
		exp := w.braceWords(wd)
		if len(exp) > budget {
			exp = nil // past the bound: the word as written, vague
		}
		budget -= len(exp)
		if exp == nil {
			v, ok := sc.literal(wd)
			args = append(args, arg{word: wd, val: v, lit: ok, text: w.text(wd)})
			continue
		}
		for _, x := range exp {
			// A word brace expansion made shows as itself when literal.
			v, ok := sc.literal(x)
			text := v
			if !ok {
				text = w.text(wd)
			}
			args = append(args, arg{word: x, val: v, lit: ok, text: text})
		}
	}
	w.takePatterns() // what a word of another command left behind is not this one's
	c := &call{w: w, sc: sc, cx: cx, redirs: redirs}
	verb, out, certain := "redirect", "", true // "X=1 > f" creates f empty
	if len(args) > 0 {
		args = c.unwrap(args)
		verb, out, certain = c.output(args)
	}
	// The shell opens the redirections where it stands, before a wrapper
	// such as env -C changes directory.
	w.redirects(redirs, verb, out, certain, sc, cx)
	if len(args) > 0 {
		c.run(args)
	}
	if len(ce.Args) == 0 {
		w.assign(ce.Assigns, sc)
	}
}
