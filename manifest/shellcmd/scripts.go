package shellcmd

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Scripts run from a file (bash r.sh, ./r.sh, source env.sh, python3
// fix.py) do what their content says, which the transcript may hold: the
// session wrote the file. The parser does not know file contents, so such
// a command is a Run effect, and the replay reads the script with
// ReadScript when it knows what the file held at that point.
//
// Code in another language (Python, Node, Ruby, Perl) is not run in the
// head: when it calls something that writes, the files it may change are
// bounded by the names it spells. Every string literal in the code, and
// every literal operand after it, is a place at or under which it may have
// written; a literal with an interpolation (f"src/{n}.go", `out/${x}`)
// stands for the names it can make. Code that walks a directory tree
// (os.walk, glob, readdirSync, …) and names "." may write anywhere below
// the directory it runs in. Code that writes and names nothing the replay
// knows stays a warning.

// maxPlaces bounds the places taken from one script.
const maxPlaces = 256

// MaxScript bounds the size of a script file ReadScript reads: a larger
// one bounds the whole tree below where it runs, so that a session that
// runs a huge generated script many times cannot make the replay read it
// as many times.
const MaxScript = 256 << 10

// runScript records that the command runs the script file a names, read by
// verb (sh, bash, source, python3, node, …, or "exec" when it is run by its
// path), with the operands after it.
func (c *call) runScript(verb string, a arg, rest []arg) {
	if !a.lit {
		return // which file runs cannot be told
	}
	p, _, ok := c.w.pathOf(a, c.sc)
	if !ok {
		return
	}
	dir, _, ok := c.w.pathOf(arg{val: ".", lit: true, text: "."}, c.sc)
	if !ok {
		return
	}
	// Paths: the script, the directory it runs in, and its literal
	// operands, which code may write at.
	e := Effect{Kind: Run, Verb: verb, Paths: []string{p, dir}}
	for _, o := range rest {
		if o.lit && o.val != "" && !strings.HasPrefix(o.val, "-") && len(o.val) <= maxPath && !strings.ContainsAny(o.val, "\x00\n") {
			if q, _, ok := c.w.pathOf(o, c.sc); ok {
				e.Paths = append(e.Paths, q)
			}
		}
	}
	c.w.add(e, c.cx)
}

// code is the text of a word that holds code: its value, or when that is
// not literal, the word as written without its quotes.
func (w *walker) code(a arg) string {
	if a.lit {
		return a.val
	}
	return w.approximate(a.word)
}

// scriptExts are the extensions of script files run by their path.
var scriptExts = []string{".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".rb", ".pl"}

// runsByPath reports whether a command name is a script run by its path:
// ./fix, ../x, or a path with a script's extension (scripts/fix.sh). Each
// spelling holds a needle of the prefilter.
func runsByPath(name string) bool {
	if !strings.Contains(name, "/") || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "/") {
		return false
	}
	rest, ok := strings.CutPrefix(name, "./")
	if !ok {
		rest, ok = strings.CutPrefix(name, "../")
	}
	if ok {
		// A name, as dotSlash finds it: no blank, and a letter or digit
		// (not ./, ./... as go test takes it, ./..).
		first, _, _ := strings.Cut(rest, "/")
		return !strings.ContainsFunc(first, func(r rune) bool { return r < 0x80 && separator(byte(r)) }) && alnum(first)
	}
	return slices.Contains(scriptExts, path.Ext(name))
}

// alnum reports whether s holds an ASCII letter or digit.
func alnum(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' })
}

// source runs a script in this shell: source FILE, . FILE.
func (c *call) source(name string, args []arg) {
	if len(args) > 0 && args[0].lit && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) > 0 && !(args[0].lit && strings.HasPrefix(args[0].val, "-")) {
		c.runScript("source", args[0], args[1:])
	}
}

// script adds an unknown write when code, as written, calls something
// that writes files, bounded by the places the code and the operands after
// it name. what is how the command wrote it.
func (c *call) script(name, what, code string, operands ...arg) {
	if !scriptWrites(code) {
		return
	}
	verb := name + " script"
	c.w.unknown(verb, what, c.cx)
	var dirs []arg
	for _, p := range places(code) {
		if strings.ContainsAny(p, "*?[") || p == "." {
			dirs = append(dirs, arg{val: p, spec: true, text: p})
		} else {
			dirs = append(dirs, arg{val: p, lit: true, text: p})
		}
	}
	for _, o := range operands {
		if o.lit && o.val != "" && !strings.HasPrefix(o.val, "-") {
			dirs = append(dirs, o)
		}
	}
	if len(dirs) > 0 {
		c.under(verb, dirs)
	}
}

// ReadScript reports what a script file does when run by verb, as a Run
// effect names it, given its content: a shell script is read as bash (or
// sh), other code bounded by the places it names (see above), with the
// script's operands among them. script is its path as the Run effect has
// it ("$(dirname "$0")" in it is that path's directory).
func ReadScript(verb, script, code string, operands []string) Result {
	file := path.Base(script)
	lang := verb
	if verb == "exec" {
		lang = shebang(code)
	}
	shell := slices.Contains([]string{"sh", "bash", "zsh", "dash", "ksh", "source"}, lang)
	if len(code) > MaxScript || shell && strings.Contains(code, "\r") {
		// Not read: too large, or a shell script with carriage returns,
		// which bash keeps as part of each line's last word. It may have
		// changed anything below where it runs.
		return Result{Effects: []Effect{{Kind: Write, Verb: lang + " script", Specs: []string{"*"}, Recursive: true, Bound: true}},
			Vague: []string{verb + " " + file}}
	}
	var res Result
	w := newWalker(&res)
	w.depth = 1
	c := &call{w: w, sc: &scope{}, cx: ctx{tail: true}}
	ops := make([]arg, len(operands))
	for i, o := range operands {
		ops[i] = arg{val: o, lit: true, text: o}
	}
	if !shell {
		c.script(lang, lang+" "+file, code, ops...)
		if len(res.Vague) > 0 {
			res.Vague = []string{lang + " " + file}
		}
		return res
	}
	if path.IsAbs(script) {
		code = dirname0.ReplaceAllLiteralString(code, "'"+strings.ReplaceAll(path.Dir(script), "'", `'\''`)+"'")
	}
	c.subscript(lang, code, lang+" "+file, c.sc)
	if len(ops) > 0 && positional.MatchString(code) {
		// rm "$1": the operands are what the script was given to change.
		verb := lang + " script"
		c.w.unknown(verb, lang+" "+file, c.cx)
		c.under(verb, ops)
	}
	return res
}

// dirname0 is the directory of the script a shell script names with
// "$(dirname "$0")" (or BASH_SOURCE), quotes included.
var dirname0 = regexp.MustCompile(`"?\$\(\s*dirname\s+"?\$(?:0|\{0\}|BASH_SOURCE|\{BASH_SOURCE(?:\[0\])?\})"?\s*\)"?`)

// positional finds a use of a shell script's operands: $1…$9, $@, $*.
var positional = regexp.MustCompile(`\$(?:[1-9@*]|\{[1-9@*])`)

// shebang tells the language of a script run by its path from its first
// line: bash, sh, python3, node, …; a file without one is run by the
// shell.
func shebang(code string) string {
	line, ok := strings.CutPrefix(code, "#!")
	if !ok {
		return "sh"
	}
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return "sh"
	}
	name := path.Base(f[0])
	if name == "env" {
		f = f[1:]
		for len(f) > 0 && strings.HasPrefix(f[0], "-") {
			f = f[1:] // env -S
		}
		if len(f) == 0 {
			return "sh"
		}
		name = path.Base(f[0])
	}
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"):
		return "python3"
	case name == "node", name == "bun", name == "deno", name == "ruby", name == "perl", name == "tsx", name == "ts-node":
		return name
	case name == "bash", name == "zsh", name == "ksh", name == "dash", name == "sh":
		return name
	}
	return name // some other interpreter: bounded by the names it spells
}

// walkMarkers are calls by which code goes through a directory tree: with
// one of them, a "." it names is the whole tree below where it runs.
var walkMarkers = []string{"walk(", "glob(", "iglob(", "rglob(", "listdir(", "scandir(", "iterdir(", "readdir", "dir.glob", "dir[", "find(", "opendir"}

// cwdMarkers name the directory code runs in without a literal: with a
// walk, the whole tree below it.
var cwdMarkers = []string{"listdir()", "scandir()", "getcwd()", "path.cwd()", "path()", "process.cwd()", "__dirname", "dir.pwd", "iterdir()"}

// places returns the places code names that it may write at or under: its
// string literals that could be paths, in their order, each once. An
// interpolation in a literal (Python's f-strings, JavaScript's template
// literals, Ruby's "#{…}") stands for any text, as a
// *; the other bytes of such a literal are escaped as a pattern's.
func places(code string) []string {
	var out []string
	seen := map[string]bool{}
	walks := false
	low := strings.ToLower(code)
	for _, m := range walkMarkers {
		if strings.Contains(low, m) {
			walks = true
			break
		}
	}
	for _, m := range cwdMarkers {
		if walks && strings.Contains(low, m) {
			out, seen["."] = append(out, "."), true // os.listdir(): the directory it runs in
			break
		}
	}
	add := func(v string, pattern bool) {
		if !placeLike(v, walks) || len(out) >= maxPlaces {
			return
		}
		if !pattern && strings.ContainsAny(v, `*?[\`) && !(walks && strings.ContainsAny(v, "*?[")) {
			v = escapeGlob(v) // but glob('*.go') is a pattern
		}
		if seen[v] {
			return
		}
		seen[v] = true
		out = append(out, v)
	}
	for i := 0; i < len(code); i++ {
		ch := code[i]
		switch {
		case ch == '#' && !(i+1 < len(code) && code[i+1] == '{'):
			i = lineEnd(code, i) // a comment (Python, Ruby, Perl, shell)
		case ch == '/' && i+1 < len(code) && code[i+1] == '/' && (i == 0 || code[i-1] != ':'):
			i = lineEnd(code, i) // a comment (JavaScript)
		case ch == '/' && i+1 < len(code) && code[i+1] == '*':
			if j := strings.Index(code[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(code)
			}
		case ch == '\'' || ch == '"' || ch == '`':
			if strings.HasPrefix(code[i:], strings.Repeat(string(ch), 3)) {
				// A triple-quoted Python string: text, not a name.
				end := strings.Index(code[i+3:], strings.Repeat(string(ch), 3))
				if end < 0 {
					return out
				}
				i += end + 5
				continue
			}
			interp := ch == '`' || ch != '`' && fString(code, i)
			v, pattern, next := literalAt(code, i, interp)
			if before := strings.TrimRight(code[:i], " \t"); !module(before) && !mode(v, before) {
				add(v, pattern)
			}
			i = next
		}
	}
	return out
}

// fString reports whether the quote at i opens a Python f-string (f"…",
// rf"…", fr"…"), or a double-quoted Ruby or Perl string that may
// interpolate.
func fString(code string, i int) bool {
	for j := i - 1; j >= 0 && j >= i-2; j-- {
		switch code[j] {
		case 'f', 'F':
			return true
		case 'r', 'R', 'b', 'B':
			continue
		}
		break
	}
	return strings.Contains(code[i+1:min(len(code), i+1+maxPath)], "#{")
}

// module reports whether a literal after before names a module, not a
// file: require('fs'), import x from 'y', import('z').
func module(before string) bool {
	return strings.HasSuffix(before, "require(") || strings.HasSuffix(before, "import(") ||
		strings.HasSuffix(before, " from") || strings.HasSuffix(before, "import")
}

// mode reports whether a literal after before is the mode of an open():
// open('x', 'w'), mode='a'.
func mode(v, before string) bool {
	return len(v) <= 3 && strings.Trim(v, "rwaxbtU+") == "" && (strings.HasSuffix(before, ",") || strings.HasSuffix(before, "="))
}

// lineEnd returns the index of the newline that ends the line at i.
func lineEnd(code string, i int) int {
	if j := strings.IndexByte(code[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(code)
}

// literalAt reads the string literal whose quote is at i: its value, with
// each interpolation as * (then pattern is true and the rest escaped),
// and the index of its closing quote. A literal that does not close on its
// line ends there, and names nothing.
func literalAt(code string, i int, interp bool) (v string, pattern bool, next int) {
	q := code[i]
	var raw, esc strings.Builder // the value, and the value as a pattern
	put := func(s string) {
		raw.WriteString(s)
		esc.WriteString(escapeGlob(s))
	}
	for j := i + 1; j < len(code); j++ {
		ch := code[j]
		switch {
		case ch == q:
			if pattern {
				return esc.String(), true, j
			}
			return raw.String(), false, j
		case ch == '\n' && q != '`':
			return "", false, j
		case ch == '\\' && j+1 < len(code):
			j++
			switch code[j] {
			case 'n', 't', 'r', '0':
				put("\n") // a control character: no name holds one
			case 'x':
				if j+2 < len(code) {
					if b, err := strconv.ParseUint(code[j+1:j+3], 16, 8); err == nil {
						put(string(rune(b)))
						j += 2
						continue
					}
				}
				put("x")
			default:
				put(code[j : j+1])
			}
		case ch == '%' && j+1 < len(code) && strings.IndexByte("sdirf", code[j+1]) >= 0 || ch == '{' && !interp && q != '`' && strings.IndexByte(code[j:min(len(code), j+64)], '}') > 0:
			// '%s.go' % n, '{}.go'.format(n): the name made there.
			if ch == '%' {
				j++
			} else {
				j += strings.IndexByte(code[j:], '}')
			}
			esc.WriteByte('*')
			pattern = true
		case interp && ch == '}' && q != '`' && j+1 < len(code) && code[j+1] == '}':
			put("}") // }} in an f-string
			j++
		case interp && (ch == '{' && q != '`' || ch == '$' && j+1 < len(code) && code[j+1] == '{' || ch == '#' && j+1 < len(code) && code[j+1] == '{'):
			if ch == '{' && j+1 < len(code) && code[j+1] == '{' {
				put("{") // {{ in an f-string
				j++
				continue
			}
			end := strings.IndexByte(code[j:], '}')
			if end < 0 {
				return "", false, len(code)
			}
			esc.WriteByte('*')
			pattern = true
			j += end
		default:
			put(code[j : j+1])
		}
	}
	return "", false, len(code)
}

// placeLike reports whether a literal's value could name a place the code
// writes at: not text (a line break, a control character, a URL, an
// option), and not a separator ("/", ",", "."), but "." in code that walks
// a tree.
func placeLike(v string, walks bool) bool {
	if v == "" || len(v) > maxPath || strings.ContainsAny(v, "\n\r\t\x00") || strings.Contains(v, "://") || strings.HasPrefix(v, "-") {
		return false
	}
	switch strings.ToLower(v) {
	case ".", "./":
		return walks
	case "utf-8", "utf8", "ascii", "latin-1", "utf-16":
		return false // an encoding
	}

	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80 || c == '_' {
			return true
		}
	}
	return false
}
