package shellcmd

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call is one simple command being read.
type call struct {
	w      *walker
	sc     *scope // where the command runs: git -C and env -C move it
	cx     ctx
	redirs []*syntax.Redirect
	// xargs holds how xargs was written when the command runs under it:
	// its operands then come from standard input and cannot be told.
	xargs string
	// worktree is the tree git --work-tree names, which a wholesale
	// rewrite changes wherever the command runs.
	worktree *arg
	// treeScope is where git ran, which a relative worktree is read from.
	treeScope *scope
}

// handlers read the commands that change files, by name. They are set in
// init because unwrap, which some handlers call, looks names up in them.
var handlers map[string]func(c *call, name string, args []arg)

func init() {
	handlers = map[string]func(c *call, name string, args []arg){
		"cd": (*call).cd, "pushd": (*call).pushd, "popd": (*call).popd,
		"rm": (*call).rm, "unlink": (*call).unlink, "rmdir": (*call).rmdir, "mkdir": (*call).mkdir,
		"mv": (*call).mv, "cp": (*call).cp, "install": (*call).install, "ln": (*call).ln,
		"tee": (*call).tee, "touch": (*call).touch, "truncate": (*call).truncate, "dd": (*call).dd,
		"sed": (*call).sed, "gsed": (*call).sed, "perl": (*call).perl,
		"rsync": (*call).rsync, "patch": (*call).patch, "tar": (*call).tar, "unzip": (*call).unzip,
		"git": (*call).git, "go": (*call).goTool, "cargo": (*call).cargo,
		"gofmt": (*call).gofmt, "goimports": (*call).gofmt,
		"prettier": (*call).prettier, "eslint": (*call).eslint, "black": (*call).black, "ruff": (*call).ruff,
		"rustfmt": (*call).rustfmt, "clang-format": (*call).clangFormat, "shfmt": (*call).shfmt,
		"golangci-lint": (*call).golangci, "gofumpt": (*call).gofmt,
		"biome": (*call).biome, "dprint": (*call).dprint, "standard": (*call).jsLint, "xo": (*call).jsLint,
		"stylelint": (*call).jsLint, "oxlint": (*call).jsLint,
		"bash": (*call).shell, "sh": (*call).shell, "zsh": (*call).shell, "dash": (*call).shell, "ksh": (*call).shell,
		"eval": (*call).eval, "source": (*call).source, ".": (*call).source,
		"python": (*call).interp, "python3": (*call).interp, "python2": (*call).interp, "pypy3": (*call).interp,
		"node": (*call).interp, "ruby": (*call).interp, "bun": (*call).bun, "tsx": (*call).interp, "ts-node": (*call).interp, "deno": (*call).deno,
		"find": (*call).find,
		"make": (*call).tasks, "gmake": (*call).tasks, "mise": (*call).tasks, "just": (*call).tasks, "task": (*call).tasks,
		"npm": (*call).tasks, "pnpm": (*call).tasks, "yarn": (*call).tasks,
	}
}

// run dispatches the command to its handler.
func (c *call) run(args []arg) {
	if !args[0].lit {
		return // $CMD …: what runs cannot be told, and what it writes neither
	}
	name := args[0].val
	if strings.Contains(name, "/") {
		name = path.Base(name) // /bin/rm
		if name == "." || name == "source" {
			name = "" // a file so named, not the builtin
		}
	}
	h := handlers[name]
	if h == nil && runsByPath(args[0].val) {
		c.runScript("exec", args[0], args[1:]) // ./r.sh, scripts/fix.py
		return
	}
	if h == nil {
		if powershell(name) {
			c.unknownf(name, args)
		}
		return
	}
	if c.xargs != "" {
		// xargs adds operands read from standard input: one that cannot be
		// told stands for them.
		x := c.xargs
		c.xargs = ""
		ops := append(args[1:len(args):len(args)], arg{text: "(stdin)"})
		c.w.probe(x, x, c.cx, func() { h(c, name, ops) })
		return
	}
	h(c, name, args[1:])
}

// unknownf records a command that changes files it does not name, in the
// words it was written with.
func (c *call) unknownf(verb string, args []arg) {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.text)
	}
	c.w.unknown(verb, b.String(), c.cx)
}

// powershell reports whether name is a PowerShell cmdlet that writes
// files: agents on Windows send these through the same tool.
func powershell(name string) bool {
	switch strings.ToLower(name) {
	case "remove-item", "set-content", "add-content", "out-file", "new-item", "copy-item", "move-item",
		"rename-item", "clear-content":
		return true
	}
	return false
}

// wrappers are commands that run their operands as a command, with the
// options they take a value for.
var wrappers = map[string]flags{
	"sudo":       {shortVal: "ugpChDrtTU", longVal: []string{"user", "group", "prompt", "close-from", "host", "chdir", "role", "type", "command-timeout", "other-user"}, posix: true},
	"doas":       {shortVal: "uC", posix: true},
	"command":    {posix: true},
	"builtin":    {posix: true},
	"exec":       {shortVal: "a", posix: true},
	"nohup":      {posix: true},
	"time":       {shortVal: "fo", longVal: []string{"format", "output"}, posix: true},
	"nice":       {shortVal: "n", longVal: []string{"adjustment"}, posix: true},
	"stdbuf":     {shortVal: "ioe", longVal: []string{"input", "output", "error"}, posix: true},
	"ionice":     {shortVal: "cnp", longVal: []string{"class", "classdata"}, posix: true},
	"chronic":    {posix: true},
	"unbuffer":   {posix: true},
	"caffeinate": {shortVal: "tw", posix: true},
	"npx":        {shortVal: "pc", longVal: []string{"package", "call"}, posix: true},
	"bunx":       {shortVal: "p", longVal: []string{"package"}, posix: true},
	"pnpx":       {shortVal: "p", longVal: []string{"package"}, posix: true},
	"xargs":      {shortVal: "ILnPsdEa", longVal: []string{"arg-file", "delimiter", "max-args", "max-lines", "max-procs", "max-chars", "process-slot-var"}, posix: true},
}

// unwrap strips the commands that only run another: sudo, env, time,
// timeout, nice, xargs (whose operands then are unknown) and the like. It
// returns the command that really runs.
func (c *call) unwrap(args []arg) []arg {
	for len(args) > 0 && args[0].lit {
		name := args[0].val
		switch {
		case name == "env":
			args = c.env(args[1:])
			continue
		case name == "timeout":
			_, rest := flags{shortVal: "sk", longVal: []string{"signal", "kill-after"}, posix: true}.parse(args[1:])
			if len(rest) == 0 {
				return nil
			}
			args = rest[1:] // the duration
			continue
		case name == "uv" || name == "poetry" || name == "pipenv":
			if len(args) < 2 || args[1].val != "run" {
				return args
			}
			_, args = flags{longVal: []string{"with", "python", "project", "directory", "with-requirements", "env-file", "extra", "group", "package", "index", "index-url"}, shortVal: "p", posix: true}.parse(args[2:])
			continue
		case name == "mise":
			// mise exec TOOL… -- CMD, mise x: CMD with the tools installed.
			if len(args) < 2 || args[1].val != "exec" && args[1].val != "x" {
				return args
			}
			dd := dashdash(args)
			if dd < 0 {
				return nil // mise x TOOL alone starts a shell
			}
			args = args[dd+1:]
			continue
		case name == "bun":
			// bun x PKG: bunx PKG.
			if len(args) < 2 || !args[1].lit || args[1].val != "x" {
				return args
			}
			args = append([]arg{{val: "bunx", lit: true, text: args[0].text + " " + args[1].text}}, args[2:]...)
			continue
		case name == "npm" || name == "pnpm" || name == "yarn":
			if len(args) < 2 || args[1].val != "exec" && args[1].val != "dlx" {
				return args
			}
			_, args = flags{posix: true}.parse(args[2:])
			continue
		}
		f, ok := wrappers[name]
		if !ok {
			return args
		}
		opts, rest := f.parse(args[1:])
		switch name {
		case "command":
			if has(opts, "v", "V") {
				return nil // command -v only looks the name up
			}
		case "npx", "bunx", "pnpx":
			if v, ok := value(opts, "c", "call"); ok {
				c.shellString(name+" -c", v)
				return nil
			}
			if len(rest) > 0 && rest[0].lit {
				if bin := pkgBin(rest[0].val); bin != rest[0].val {
					// npx @biomejs/biome@1.9 check: the package's program.
					rest = append([]arg{{val: bin, lit: true, text: rest[0].text}}, rest[1:]...)
				}
			}
			if len(rest) > 0 && rest[0].lit && handlers[path.Base(rest[0].val)] == nil {
				// A package's binary (tsx -e, a codemod): read its
				// arguments as code, as for node -e.
				code := strings.TrimPrefix(words("", rest), " ")
				c.script(name, name+" "+code, code)
				return nil
			}
		case "sudo", "doas":
			for len(rest) > 0 && rest[0].lit && assignment(rest[0].val) {
				rest = rest[1:] // sudo VAR=value command
			}
		case "xargs":
			if len(rest) == 0 {
				return nil // xargs alone runs echo
			}
			c.xargs = "xargs " + rest[0].text
		}
		args = rest
	}
	return args
}

// pkgBin returns the program npx, bunx and pnpx run for a package named
// with a version (prettier@3, @biomejs/biome@1.9.4): the package's name
// without it, when that names a program read here; else pkg.
func pkgBin(pkg string) string {
	i := strings.LastIndexByte(pkg, '@')
	if i <= 0 || handlers[path.Base(pkg[:i])] == nil {
		return pkg
	}
	return pkg[:i]
}

// env strips env's options and assignments and returns the command.
func (c *call) env(args []arg) []arg {
	for len(args) > 0 {
		a := args[0]
		switch {
		case !a.lit:
			return args
		case a.val == "--":
			return args[1:]
		case a.val == "-" || a.val == "-i" || a.val == "-0" || a.val == "-v" || a.val == "--ignore-environment" || a.val == "--null" || a.val == "--debug":
			args = args[1:]
		case a.val == "-u" || a.val == "--unset":
			args = args[min(2, len(args)):]
		case a.val == "-C" || a.val == "--chdir":
			if len(args) < 2 {
				return nil
			}
			c.chdirCommand(args[1])
			args = args[2:]
		case strings.HasPrefix(a.val, "--chdir="):
			c.chdirCommand(arg{val: strings.TrimPrefix(a.val, "--chdir="), lit: true, text: a.text})
			args = args[1:]
		case a.val == "-S" || strings.HasPrefix(a.val, "--split-string"):
			return nil // a command line in one string: rare, and not read
		case strings.HasPrefix(a.val, "-u") || strings.HasPrefix(a.val, "--unset="):
			args = args[1:]
		case strings.HasPrefix(a.val, "-"):
			args = args[1:]
		case assignment(a.val):
			args = args[1:]
		default:
			return args
		}
	}
	return args
}

// assignment reports whether s is NAME=VALUE.
func assignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// chdirCommand moves this command, and only it, to dir (git -C, env -C).
func (c *call) chdirCommand(dir arg) {
	sc := c.sc.clone()
	sc.cd(c.w, dir)
	c.sc = sc
}

// cd changes the directory relative paths resolve from.
func (s *scope) cd(w *walker, dir arg) {
	switch {
	case !dir.lit || dir.val == "" || dir.val == "-" || strings.ContainsAny(dir.val, "\x00\n") || len(dir.val) > maxPath:
		s.cur = dirState{vague: dir.text}
	case strings.HasPrefix(dir.val, "/"):
		s.cur = dirState{dir: path.Clean(dir.val)}
	case s.cur.vague != "":
		s.cur.vague += "/" + dir.val
	case s.cur.dir == "":
		s.cur.dir = path.Clean(dir.val)
	default:
		s.cur.dir = path.Join(s.cur.dir, dir.val)
	}
	if s.cur.dir == "." {
		s.cur.dir = ""
	}
}

func (c *call) cd(_ string, args []arg) {
	_, ops := flags{posix: true}.parse(args)
	if len(ops) == 0 {
		c.sc.cur = dirState{vague: "~"}
		return
	}
	c.sc.cd(c.w, ops[0])
}

func (c *call) pushd(_ string, args []arg) {
	_, ops := flags{posix: true}.parse(args)
	if len(ops) == 0 || ops[0].lit && (strings.HasPrefix(ops[0].val, "+") || strings.HasPrefix(ops[0].val, "-")) {
		// pushd alone swaps the top two directories, pushd +N rotates.
		c.sc.stack = append(c.sc.stack, c.sc.cur)
		c.sc.cur = dirState{vague: "(pushd)"}
		return
	}
	c.sc.stack = append(c.sc.stack, c.sc.cur)
	c.sc.cd(c.w, ops[0])
}

func (c *call) popd(_ string, args []arg) {
	if len(args) > 0 {
		c.sc.cur = dirState{vague: "(popd)"}
		return
	}
	if n := len(c.sc.stack); n > 0 {
		c.sc.cur, c.sc.stack = c.sc.stack[n-1], c.sc.stack[:n-1]
	}
}

// output returns what the command prints, when it is certain, so that a
// redirection of it is an exact Create; verb names the command for it.
func (c *call) output(args []arg) (verb, out string, certain bool) {
	if c.xargs != "" || len(args) == 0 {
		// A wrapper that runs nothing (exec > log, command -v x) prints
		// what cannot be told, or sends later output to the file.
		return "", "", false
	}
	if !args[0].lit {
		return "", "", false
	}
	for _, a := range args {
		if !a.lit {
			return "", "", false
		}
	}
	switch args[0].val {
	case ":", "true":
		return "redirect", "", true
	case "cat":
		for _, a := range args[1:] {
			if a.val != "-" {
				return "", "", false
			}
		}
		text, ok := stdin(c.redirs)
		return "cat <<", text, ok
	case "tee":
		text, ok := stdin(c.redirs)
		return "tee", text, ok
	case "echo":
		out, ok := echo(args[1:])
		return "echo", out, ok
	case "printf":
		out, ok := printf(args[1:])
		return "printf", out, ok
	}
	return "", "", false
}

// echo returns what echo prints for args, when no shell's echo could print
// anything else: with a backslash, bash and zsh disagree.
func echo(args []arg) (string, bool) {
	newline := true
	for len(args) > 0 && len(args[0].val) > 1 && args[0].val[0] == '-' && strings.Trim(args[0].val[1:], "neE") == "" {
		if strings.Contains(args[0].val, "n") {
			newline = false
		}
		args = args[1:]
	}
	var b strings.Builder
	for i, a := range args {
		if strings.Contains(a.val, `\`) {
			return "", false
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.val)
	}
	if newline {
		b.WriteByte('\n')
	}
	return b.String(), true
}

// printf returns what printf prints, for formats made of text, %s, %%, \n,
// \t and \\ only.
func printf(args []arg) (string, bool) {
	if len(args) > 0 && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return "", false
	}
	format, rest := args[0].val, args[1:]
	var b strings.Builder
	for {
		used := 0
		for i := 0; i < len(format); i++ {
			ch := format[i]
			switch {
			case ch == '\\' && i+1 < len(format):
				i++
				switch format[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '\\':
					b.WriteByte('\\')
				default:
					return "", false
				}
			case ch == '%' && i+1 < len(format):
				i++
				switch format[i] {
				case '%':
					b.WriteByte('%')
				case 's':
					if used < len(rest) {
						b.WriteString(rest[used].val)
					}
					used++
				default:
					return "", false
				}
			case ch == '\\' || ch == '%':
				return "", false
			default:
				b.WriteByte(ch)
			}
		}
		// The format is reused while arguments remain.
		if used == 0 || used >= len(rest) {
			return b.String(), true
		}
		rest = rest[used:]
	}
}

// paths resolves operands naming files, listing the vague ones.
func (c *call) paths(ops []arg) []string {
	var out []string
	for _, a := range ops {
		if p, _, ok := c.w.pathOf(a, c.sc); ok {
			out = append(out, p)
		}
	}
	return out
}

// emit adds e when it has paths, and when some operand could not be named
// (it is then listed as Vague) an effect of the same kind on the patterns
// among them, a Write when there are none or e is not a delete: rm b
// $(cat list) deletes b, and files it does not name.
func (c *call) emit(e Effect, vague bool) {
	pats := c.w.takePatterns()
	if len(e.Paths) > 0 {
		c.w.add(e, c.cx)
	}
	if !vague {
		return
	}
	globs := len(pats.shell)+len(pats.spec) > 0
	if e.Kind == Touch && (globs || len(pats.maybe) > 0 && !pats.open) {
		return // a glob matches files that exist, whose content touch keeps
	}
	if globs || pats.open || len(pats.maybe) == 0 {
		v := Effect{Kind: Write, Verb: e.Verb}
		if globs {
			v.Recursive, v.Patterns, v.Specs = e.Recursive, pats.shell, pats.spec
			if e.Kind == Delete {
				v.Kind = Delete
			}
		}
		c.w.add(v, c.cx)
	}
	if len(pats.maybe) > 0 && e.Kind != Touch {
		// rm "$f.txt", sed -i … "src/$f": some file that matches may have
		// changed, which one is not known: every one is stale, none deleted.
		c.w.add(Effect{Kind: Write, Verb: e.Verb, Recursive: e.Recursive, Specs: pats.maybe, Bound: true}, c.cx)
	}
}

// under replaces the unknown write of verb just recorded (a command whose
// files are chosen when it runs) by a bound write on every file at or
// under the paths dirs name (find's starting points, git clean's paths,
// the working tree of git reset --hard), each a file or a directory: each
// is two pathspecs, p and p/* (git's * crosses /), so that recovery grades
// every file it knows there stale, never exact. A shell glob or a git
// pathspec is kept as the pattern it is; a word that is neither (find
// "$D") adds nothing for itself. With no pattern at all, the unknown
// write stays.
func (c *call) under(verb string, dirs []arg) {
	specs := make([]arg, 0, 2*len(dirs))
	for _, d := range dirs {
		var p string
		switch {
		case d.lit && d.val != "":
			p = escapeGlob(path.Clean(d.val))
		case d.spec:
			p = d.val // a git pathspec: a pattern already
		case d.word != nil:
			g, ok := c.sc.pattern(d.word)
			if !ok {
				continue
			}
			p = g
		default:
			continue
		}
		text := verb + " in " + d.text
		if p == "." {
			specs = append(specs, arg{val: "*", spec: true, text: text})
			continue
		}
		p = strings.TrimSuffix(p, "/")
		specs = append(specs, arg{val: p, spec: true, text: text}, arg{val: p + "/*", spec: true, text: text})
	}
	if len(specs) == 0 {
		return
	}
	c.w.takePatterns()
	nv, vague := *c.w.nvague, len(c.w.res.Vague)
	c.paths(specs) // each is a pattern, kept as one, not a vague name
	*c.w.nvague, c.w.res.Vague = nv, c.w.res.Vague[:vague]
	pats := c.w.takePatterns()
	if len(pats.spec) == 0 {
		return // under a cd the script does not name
	}
	effs := c.w.res.Effects
	if n := len(effs); n > 0 {
		if e := effs[n-1]; e.Kind == Write && e.Verb == verb && len(e.Paths)+len(e.Patterns)+len(e.Specs) == 0 && !e.Bound {
			c.w.res.Effects = effs[:n-1]
		}
	}
	c.w.add(Effect{Kind: Write, Verb: verb, Recursive: true, Specs: pats.spec, Bound: true}, c.cx)
}

// destinations are the places a command find runs on each file may
// write to besides that file: cp {} DEST, mv {} DIR/.
func destinations(sub []arg) []arg {
	if len(sub) == 0 || !sub[0].lit {
		return nil
	}
	switch path.Base(sub[0].val) {
	case "cp", "mv", "install", "rsync", "ln":
	default:
		return nil
	}
	var out []arg
	for _, a := range sub[1:] {
		if a.lit && a.val != "" && !strings.HasPrefix(a.val, "-") && !strings.Contains(a.val, "{}") {
			out = append(out, a)
		}
	}
	return out
}

// tar reads tar's extract mode (tar xf, tar -xzf, --extract), which writes
// the archive's members, unknown here, under -C DIR or where it runs.
func (c *call) tar(_ string, args []arg) {
	extract, dir := false, arg{val: ".", lit: true, text: "."}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		v := a.val
		switch {
		case v == "--extract" || v == "--get":
			extract = true
		case v == "-C" || v == "--directory":
			if i+1 < len(args) {
				dir = args[i+1]
				i++
			}
		case strings.HasPrefix(v, "--directory="):
			d := strings.TrimPrefix(v, "--directory=")
			dir = arg{val: d, lit: true, text: d}
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") || i == 0:
			// a bundle of short options, old style without the dash first
			if strings.ContainsRune(strings.TrimPrefix(v, "-"), 'x') {
				extract = true
			}
		}
	}
	if extract {
		c.w.unknown("tar -x", words("tar", args), c.cx)
		c.under("tar -x", []arg{dir})
	}
}

// unzip writes an archive's members, unknown here, under -d DIR or where
// it runs, unless it only lists, tests or prints them.
func (c *call) unzip(_ string, args []arg) {
	dir := arg{val: ".", lit: true, text: "."}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit || !strings.HasPrefix(a.val, "-") {
			continue
		}
		switch {
		case a.val == "-d":
			if i+1 < len(args) {
				dir = args[i+1]
				i++
			}
		case strings.HasPrefix(a.val, "-d"):
			dir = arg{val: a.val[2:], lit: true, text: a.val[2:]}
		case strings.ContainsAny(a.val[1:], "lvtZpz"):
			return
		}
	}
	c.w.unknown("unzip", words("unzip", args), c.cx)
	c.under("unzip", []arg{dir})
}

// tree is under for a git command that rewrites tracked files of the
// work tree it runs in, wholesale: it is read as one rooted at the
// working directory.
func (c *call) tree(verb, what string) {
	c.w.unknown(verb, what, c.cx)
	if c.worktree != nil {
		c.in(c.treeScope, func() { c.under(verb, []arg{*c.worktree}) })
		return
	}
	c.rooted(func() { c.under(verb, []arg{{val: ".", lit: true, text: "."}}) })
}

// bounded records a command that rewrites files it chooses when it runs
// (a formatter of a whole tree, a task runner's fmt, go generate), all of
// them matching specs: patterns in which * crosses slashes, read from the
// top of the tree when the command runs below it, as tree does (a
// formatter may take the whole workspace), so that a pattern there holds
// every file it would match where the command ran.
func (c *call) bounded(verb, what string, specs ...string) {
	c.w.unknown(verb, what, c.cx)
	dirs := make([]arg, len(specs))
	for i, s := range specs {
		if s == "*" {
			s = "."
		}
		dirs[i] = arg{val: s, spec: s != ".", lit: s == ".", text: s}
	}
	c.rooted(func() { c.under(verb, dirs) })
}

// in runs fn with the command placed in sc.
func (c *call) in(sc *scope, fn func()) {
	saved := c.sc
	c.sc = sc
	defer func() { c.sc = saved }()
	fn()
}

// rooted runs fn where the script started when the command runs in a
// directory below it (cd src && git reset --hard): git changes the whole
// repository, which holds the script's own directory too, agents running
// git from the top of the tree.
func (c *call) rooted(fn func()) {
	if d := c.sc.cur.dir; c.sc.cur.vague == "" && d != "" && !path.IsAbs(d) && d != ".." && !strings.HasPrefix(d, "../") {
		top := c.sc.clone()
		top.cur.dir = ""
		c.in(top, fn)
		return
	}
	fn()
}

// emitPaths adds an effect of kind on the files ops name.
func (c *call) emitPaths(kind EffectKind, verb string, recursive bool, ops []arg) {
	nv := *c.w.nvague
	ps := c.paths(ops)
	c.emit(Effect{Kind: kind, Verb: verb, Paths: ps, Recursive: recursive}, *c.w.nvague > nv)
}

func (c *call) rm(_ string, args []arg) {
	opts, ops := flags{}.parse(args)
	rec := has(opts, "r", "R", "recursive")
	dirOK := has(opts, "d", "dir")
	verb := "rm"
	if rec {
		verb = "rm -r"
	}
	nv := *c.w.nvague
	var ps []string
	for _, a := range ops {
		p, slash, ok := c.w.pathOf(a, c.sc)
		if !ok {
			continue
		}
		if b := path.Base(p); b == "." || b == ".." || p == "/" {
			continue // rm refuses these
		}
		switch {
		case slash && dirOK && !rec:
			c.w.add(Effect{Kind: Dir, Verb: "rm -d", Paths: []string{p}}, c.cx)
		case slash && !rec:
			// rm x/ without -r fails whatever x is.
		default:
			ps = append(ps, p)
		}
	}
	c.emit(Effect{Kind: Delete, Verb: verb, Paths: ps, Recursive: rec || dirOK}, *c.w.nvague > nv)
}

func (c *call) unlink(_ string, args []arg) {
	_, ops := flags{}.parse(args)
	if len(ops) == 1 {
		c.emitPaths(Delete, "unlink", false, ops)
	}
}

func (c *call) rmdir(name string, args []arg) {
	_, ops := flags{}.parse(args)
	c.dirs(name, ops)
}

func (c *call) mkdir(name string, args []arg) {
	opts, ops := flags{shortVal: "m", longVal: []string{"mode", "context"}}.parse(args)
	if has(opts, "p", "parents") {
		name = "mkdir -p"
	}
	c.dirs(name, ops)
}

// dirs adds the directories a command makes or removes. A target that is
// not literal is not listed: a directory is no file to recover.
func (c *call) dirs(verb string, ops []arg) {
	var ps []string
	for _, a := range ops {
		if !a.lit {
			continue
		}
		if p, _, ok := c.w.pathOf(a, c.sc); ok {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		c.w.add(Effect{Kind: Dir, Verb: verb, Paths: ps}, c.cx)
	}
}

// transfer reads mv, cp, git mv and the like: sources, then a
// destination that is a directory when -t names it, when there are several
// sources, or when it ends in a slash.
func (c *call) transfer(kind EffectKind, verb string, opts []opt, ops []arg, recursive bool) {
	var srcs []arg
	var dst arg
	intoDir := false
	if t, ok := value(opts, "t", "target-directory"); ok {
		srcs, dst, intoDir = ops, t, true
	} else {
		if len(ops) < 2 {
			return
		}
		srcs, dst = ops[:len(ops)-1], ops[len(ops)-1]
		intoDir = len(srcs) > 1
	}
	if has(opts, "T", "no-target-directory") {
		if len(srcs) != 1 {
			return
		}
		intoDir = false
	}
	if dst.lit {
		if b := path.Base(dst.val); b == "." || b == ".." || strings.HasSuffix(dst.val, "/") {
			intoDir = true
		}
	}
	if dst.lit && dst.val == "" {
		return // names no file: the command fails
	}
	d, _, dok := c.w.pathOf(dst, c.sc)
	c.w.takePatterns() // a destination is never a pattern
	for _, s := range srcs {
		src, slash, sok := c.w.pathOf(s, c.sc)
		if pats := c.w.takePatterns(); !sok && len(pats.shell)+len(pats.spec) > 0 {
			// Sources named by a pattern: each file that matched lands in
			// the directory (or, when it matched one file and d is no
			// directory, at d: the replay tells); moved to a place that
			// cannot be told, it is gone from here.
			switch {
			case dok:
				c.w.add(Effect{Kind: kind, Verb: verb, Paths: []string{d}, IntoDir: intoDir, Recursive: recursive, Patterns: pats.shell, Specs: pats.spec}, c.cx)
				continue
			case kind == Move:
				c.w.add(Effect{Kind: Delete, Verb: verb, Recursive: true, Patterns: pats.shell, Specs: pats.spec}, c.cx)
				continue
			}
		}
		switch {
		case sok && dok:
			c.w.add(Effect{Kind: kind, Verb: verb, Paths: []string{src, d}, IntoDir: intoDir, Recursive: recursive || slash}, c.cx)
		case sok && kind == Move:
			// Moved to a place that cannot be told: gone from here.
			c.w.add(Effect{Kind: Delete, Verb: verb, Paths: []string{src}, Recursive: true}, c.cx)
		case dok && !intoDir:
			c.w.add(Effect{Kind: Write, Verb: verb, Paths: []string{d}}, c.cx)
		default:
			c.w.add(Effect{Kind: Write, Verb: verb}, c.cx)
		}
	}
}

func (c *call) mv(_ string, args []arg) {
	opts, ops := flags{shortVal: "St", longVal: []string{"target-directory", "suffix"}}.parse(args)
	c.transfer(Move, "mv", opts, ops, false)
}

func (c *call) cp(_ string, args []arg) {
	opts, ops := flags{shortVal: "St", longVal: []string{"target-directory", "suffix"}}.parse(args)
	if has(opts, "parents") {
		// cp --parents a/b d writes d/a/b: no path the command spells.
		c.unknownf("cp --parents", append([]arg{{text: "cp"}}, args...))
		return
	}
	rec := has(opts, "r", "R", "a", "recursive", "archive")
	verb := "cp"
	if rec {
		verb = "cp -r"
	}
	c.transfer(Copy, verb, opts, ops, rec)
}

// install copies with modes and owners; it is a Write of its destination,
// since -s strips and -m changes what a recovery could not replay alike.
func (c *call) install(_ string, args []arg) {
	opts, ops := flags{shortVal: "gmoSt", longVal: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"}}.parse(args)
	if has(opts, "d", "directory") {
		c.dirs("install -d", ops)
		return
	}
	_, hasT := value(opts, "t", "target-directory")
	if hasT || len(ops) != 2 || ops[1].lit && strings.HasSuffix(ops[1].val, "/") {
		if len(ops) > 0 {
			c.unknownf("install", append([]arg{{text: "install"}}, args...))
		}
		return
	}
	c.emitPaths(Write, "install", false, ops[1:])
}

func (c *call) ln(_ string, args []arg) {
	opts, ops := flags{shortVal: "St", longVal: []string{"suffix", "target-directory"}}.parse(args)
	verb := "ln"
	if has(opts, "s", "symbolic") {
		verb = "ln -s"
	}
	_, hasT := value(opts, "t", "target-directory")
	if hasT || len(ops) != 2 || ops[1].lit && (strings.HasSuffix(ops[1].val, "/") || path.Base(ops[1].val) == ".") {
		// The link is named after its target inside a directory.
		if len(ops) > 0 {
			c.unknownf(verb, append([]arg{{text: "ln"}}, args...))
		}
		return
	}
	c.emitPaths(Write, verb, false, ops[1:])
}

func (c *call) tee(_ string, args []arg) {
	opts, ops := flags{}.parse(args)
	appends := has(opts, "a", "append")
	var files []arg
	for _, a := range ops {
		if !(a.lit && device(a.val)) {
			files = append(files, a)
		}
	}
	if text, ok := stdin(c.redirs); ok {
		kind := Create
		if appends {
			kind = Append
		}
		for _, a := range files {
			if p, _, ok := c.w.pathOf(a, c.sc); ok {
				c.w.add(Effect{Kind: kind, Verb: "tee", Paths: []string{p}, Content: text}, c.cx)
			} else if !a.lit {
				c.w.add(Effect{Kind: Write, Verb: "tee"}, c.cx)
			}
		}
		return
	}
	verb := "tee"
	if appends {
		verb = "tee -a"
	}
	c.emitPaths(Write, verb, false, files)
}

func (c *call) touch(_ string, args []arg) {
	opts, ops := flags{shortVal: "drt", longVal: []string{"date", "reference", "time"}}.parse(args)
	if has(opts, "c", "no-create") {
		return // changes times only
	}
	c.emitPaths(Touch, "touch", false, ops)
}

func (c *call) truncate(_ string, args []arg) {
	opts, ops := flags{shortVal: "rs", longVal: []string{"reference", "size"}}.parse(args)
	if size, ok := value(opts, "s", "size"); ok && size.lit && size.val == "0" && !has(opts, "c", "no-create") {
		nv := *c.w.nvague
		ps := c.paths(ops)
		for _, p := range ps {
			c.w.add(Effect{Kind: Create, Verb: "truncate", Paths: []string{p}}, c.cx)
		}
		if len(ps) == 0 && *c.w.nvague > nv {
			c.w.add(Effect{Kind: Write, Verb: "truncate"}, c.cx)
		}
		return
	}
	c.emitPaths(Write, "truncate", false, ops)
}

func (c *call) dd(_ string, args []arg) {
	for _, a := range args {
		if !a.lit {
			if strings.HasPrefix(a.text, "of=") {
				c.w.unknown("dd", a.text, c.cx)
			}
			continue
		}
		if of, ok := strings.CutPrefix(a.val, "of="); ok && !device(of) {
			c.emitPaths(Write, "dd", false, []arg{{val: of, lit: true, text: a.text}})
		}
	}
}

// sed reads GNU and BSD sed: -i with an attached suffix (-i.bak, -iSUF),
// --in-place[=SUF], and BSD's suffix as the next word (-i ” or -i .bak)
// when that word is empty or starts with a dot and a script follows.
func (c *call) sed(_ string, args []arg) {
	inPlace, script := false, false
	var ops []arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit || len(a.val) < 2 || a.val[0] != '-' {
			ops = append(ops, a)
			continue
		}
		if a.val == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if long, ok := strings.CutPrefix(a.val, "--"); ok {
			name, _, eq := strings.Cut(long, "=")
			switch name {
			case "in-place":
				inPlace = true
			case "expression", "file":
				script = true
				if !eq {
					i++
				}
			case "line-length":
				if !eq {
					i++
				}
			}
			continue
		}
		bundle := a.val[1:]
	letters:
		for j := 0; j < len(bundle); j++ {
			switch bundle[j] {
			case 'i':
				inPlace = true
				if j+1 < len(bundle) {
					break letters // the rest of the word is the suffix
				}
				if i+2 < len(args) && args[i+1].lit && (args[i+1].val == "" || strings.HasPrefix(args[i+1].val, ".")) {
					i++ // BSD: -i '' script file, -i .bak script file
				}
			case 'e', 'f':
				script = true
				if j+1 == len(bundle) {
					i++
				}
				break letters
			case 'l':
				if j+1 == len(bundle) {
					i++
				}
				break letters
			}
		}
	}
	if !inPlace {
		return
	}
	if !script && len(ops) > 0 {
		ops = ops[1:] // the first operand is the script
	}
	c.emitPaths(Write, "sed -i", false, ops)
}

// perl reads -i (with -p, -n, -e in any bundle, -i.bak, and -pie as
// agents mean it: -p -i -e), and one-liners that write by themselves.
func (c *call) perl(_ string, args []arg) {
	inPlace, hasCode := false, false
	var code []arg
	var ops []arg
scan:
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit || len(a.val) < 2 || a.val[0] != '-' {
			ops = args[i:] // perl stops reading options at the first operand
			break
		}
		if a.val == "--" {
			ops = args[i+1:]
			break
		}
		b := a.val[1:]
		for j := 0; j < len(b); j++ {
			rest := b[j+1:]
			switch b[j] {
			case 'i':
				inPlace = true
				if rest == "e" || rest == "E" {
					continue // -pie: taken as -p -i -e
				}
				continue scan // the rest is the backup suffix
			case 'e', 'E':
				hasCode = true
				if rest != "" {
					code = append(code, arg{val: rest, lit: true, text: rest})
				} else if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
				continue scan
			case 'I', 'M', 'm', 'F', 'x', 'd', 'D', 'C', 'l', '0':
				continue scan // the rest of the word is this option's value
			}
		}
	}
	if !hasCode && len(ops) > 0 {
		if !inPlace {
			c.runScript("perl", ops[0], ops[1:]) // perl x.pl: read by the replay
			return
		}
		ops = ops[1:] // the script file
	}
	if inPlace {
		c.emitPaths(Write, "perl -i", false, ops)
		return
	}
	for _, a := range code {
		if scriptWrites(a.text) {
			c.script("perl", "perl -e "+a.text, c.w.code(a), ops...)
			return
		}
	}
}

func (c *call) rsync(_ string, args []arg) {
	opts, ops := flags{shortVal: "efBMT@", longVal: []string{"rsh", "exclude", "include", "exclude-from", "include-from", "files-from", "filter", "password-file", "log-file", "chmod", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest", "temp-dir", "partial-dir", "max-size", "min-size", "timeout", "bwlimit", "port", "chown", "usermap", "groupmap", "block-size", "remote-option", "out-format", "info", "debug", "skip-compress", "iconv", "modify-window", "rsync-path", "contimeout", "sockopts", "outbuf", "max-delete", "address", "protocol", "checksum-choice", "compress-choice", "compress-level", "log-file-format", "write-batch", "read-batch"}}.parse(args)
	if has(opts, "n", "dry-run", "list-only") || len(ops) < 2 {
		return
	}
	dst := ops[len(ops)-1]
	if dst.lit && remote(dst.val) {
		return
	}
	c.emitPaths(Write, "rsync", true, []arg{dst})
}

// remote reports whether an rsync or scp operand names another host.
func remote(s string) bool {
	if strings.HasPrefix(s, "rsync://") {
		return true
	}
	colon := strings.IndexByte(s, ':')
	slash := strings.IndexByte(s, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

func (c *call) patch(_ string, args []arg) {
	opts, ops := flags{shortVal: "pioDdFBYzVrg", longVal: []string{"strip", "input", "output", "directory", "ifdef", "fuzz", "prefix", "basename-prefix", "suffix", "version-control", "reject-file", "get", "quoting-style", "reject-format", "read-only"}}.parse(args)
	if has(opts, "dry-run", "C", "check") {
		return
	}
	if out, ok := value(opts, "o", "output"); ok {
		c.emitPaths(Write, "patch", false, []arg{out})
		return
	}
	if _, ok := value(opts, "d", "directory"); ok || len(ops) == 0 {
		c.unknownf("patch", append([]arg{{text: "patch"}}, args...))
		return
	}
	c.emitPaths(Write, "patch", false, ops[:1])
}

// find reads -delete and -exec (-execdir, -ok, -okdir): the files they act
// on are found at run time, under the directories find starts from. Those
// are changed in a way that cannot be told (the tests pick some of them):
// an unknown write, and a write on every file under them (see under).
func (c *call) find(_ string, args []arg) {
	// Options before the starting points, then the starting points (none
	// is "."), up to the first word of the expression.
	i := 0
	for i < len(args) && args[i].lit && (args[i].val == "-H" || args[i].val == "-L" || args[i].val == "-P" ||
		strings.HasPrefix(args[i].val, "-O") || args[i].val == "-D") {
		if args[i].val == "-D" {
			i++ // its debug options
		}
		i++
	}
	i = min(i, len(args))
	j := i
	for j < len(args) && !(args[j].lit && (strings.HasPrefix(args[j].val, "-") || args[j].val == "(" || args[j].val == "!" || args[j].val == ",")) {
		j++
	}
	roots := args[i:j]
	if len(roots) == 0 {
		roots = []arg{{val: ".", lit: true, text: "."}}
	}
	for i := j; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		switch a.val {
		case "-delete":
			c.w.unknown("find -delete", "find -delete", c.cx)
			c.under("find -delete", roots)
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].lit && (args[j].val == ";" || args[j].val == "+")) {
				j++
			}
			sub := args[i+1 : j]
			i = j
			if len(sub) == 0 {
				continue
			}
			what := "find " + a.val + " " + sub[0].text
			inner := &call{w: c.w, sc: c.sc, cx: c.cx}
			if c.w.probe(what, what, c.cx, func() {
				if rest := inner.unwrap(sub); len(rest) > 0 {
					inner.run(rest)
				}
			}) {
				c.under(what, append(roots[:len(roots):len(roots)], destinations(sub)...))
			}
		}
	}
}
