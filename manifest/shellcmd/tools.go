package shellcmd

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// words joins how args were written, after a leading command name.
func words(name string, args []arg) string {
	var b strings.Builder
	b.WriteString(name)
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(a.text)
	}
	return b.String()
}

// dashdash returns the index of the first literal "--" in args, or -1.
func dashdash(args []arg) int {
	for i, a := range args {
		if a.lit && a.val == "--" {
			return i
		}
	}
	return -1
}

// git reads the git commands that change the work tree. Those that change
// files git chooses (checkout BRANCH, stash, reset --hard, pull, merge …)
// are unknown writes named by the command.
func (c *call) git(_ string, args []arg) {
	i := 0
global:
	for i < len(args) {
		a := args[i]
		if !a.lit {
			return // git $SUBCOMMAND: cannot be told
		}
		switch {
		case a.val == "-C":
			if i+1 >= len(args) {
				return
			}
			c.chdirCommand(args[i+1])
			i += 2
		case a.val == "-c" || a.val == "--git-dir" || a.val == "--namespace" || a.val == "--config-env" || a.val == "--super-prefix":
			i += 2
		case a.val == "--work-tree" || strings.HasPrefix(a.val, "--work-tree="):
			// Pathspecs then resolve inside another tree, which is the
			// one a wholesale rewrite changes.
			wt := arg{text: a.text}
			if v, ok := strings.CutPrefix(a.val, "--work-tree="); ok {
				wt = arg{val: v, lit: a.lit, text: v}
			} else if i+1 < len(args) {
				wt = args[i+1]
				i++
			}
			c.worktree, c.treeScope = &wt, c.sc
			c.chdirCommand(arg{text: a.text})
			i++
		case strings.HasPrefix(a.val, "-"):
			i++
		default:
			break global
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].val, args[i+1:]
	what := words("git "+sub, rest)
	switch sub {
	case "rm":
		opts, ops := flags{}.parse(rest)
		if has(opts, "cached", "n", "dry-run") {
			return // --cached changes only the index
		}
		if has(opts, "pathspec-from-file") {
			c.w.unknown("git rm", what, c.cx)
			return
		}
		rec := has(opts, "r")
		verb := "git rm"
		if rec {
			verb = "git rm -r"
		}
		c.emitPaths(Delete, verb, rec, pathspecs(ops))
	case "mv":
		opts, ops := flags{}.parse(rest)
		if has(opts, "n", "dry-run") {
			return
		}
		c.transfer(Move, "git mv", opts, pathspecs(ops), false)
	case "checkout":
		if dd := dashdash(rest); dd >= 0 && dd == len(rest)-1 {
			rest = rest[:dd] // git checkout main --: no paths, a branch
		}
		if dd := dashdash(rest); dd >= 0 {
			// git checkout [TREE] -- PATHS restores the paths only.
			c.emitPaths(Write, "git checkout", true, pathspecs(rest[dd+1:]))
			return
		}
		opts, ops := flags{shortVal: "bB", longVal: []string{"orphan", "conflict"}}.parse(rest)
		switch {
		case has(opts, "p", "patch", "pathspec-from-file"):
			c.tree("git checkout", what)
		case len(ops) == 1:
			c.checkoutOne(ops[0], what)
		case len(ops) > 1:
			// git checkout TREE PATHS…, or only paths: the first may be a
			// tree-ish, which a path of that name stands in for harmlessly.
			c.emitPaths(Write, "git checkout", true, pathspecs(ops))
		case has(opts, "f", "force", "m", "merge"):
			c.tree("git checkout", what)
		}
		// git checkout -b NEW starts a branch where HEAD is: no file changes.
	case "switch":
		opts, ops := flags{shortVal: "cC", longVal: []string{"orphan", "conflict", "create", "force-create"}}.parse(rest)
		if len(ops) > 0 || has(opts, "discard-changes", "f", "force", "m", "merge", "orphan") {
			c.tree("git switch", what)
		}
	case "restore":
		var pathArgs []arg
		if dd := dashdash(rest); dd >= 0 {
			rest, pathArgs = rest[:dd], rest[dd+1:]
		}
		opts, ops := flags{shortVal: "s", longVal: []string{"source", "conflict"}}.parse(rest)
		ops = append(ops, pathArgs...)
		if has(opts, "S", "staged") && !has(opts, "W", "worktree") {
			return // --staged alone changes only the index
		}
		if has(opts, "p", "patch", "pathspec-from-file") {
			c.tree("git restore", what)
			return
		}
		c.emitPaths(Write, "git restore", true, pathspecs(ops))
	case "stash":
		c.stash(rest, what)
	case "reset":
		if opts, _ := (flags{}).parse(rest); has(opts, "hard", "merge", "keep") {
			c.tree("git reset", what)
		}
	case "apply":
		if opts, _ := (flags{shortVal: "pC", longVal: []string{"exclude", "include", "directory", "whitespace"}}).parse(rest); !has(opts, "check", "stat", "numstat", "summary", "cached") {
			c.tree("git apply", what)
		}
	case "clean":
		if opts, ops := (flags{shortVal: "e", longVal: []string{"exclude"}}).parse(rest); !has(opts, "n", "dry-run") {
			if len(ops) == 0 {
				ops = []arg{{val: ".", lit: true, text: "."}}
			}
			c.w.unknown("git clean", what, c.cx)
			c.under("git clean", pathspecs(ops))
		}
	case "am", "pull", "merge", "rebase", "cherry-pick", "revert", "filter-branch", "bisect", "sparse-checkout":
		if opts, ops := (flags{}).parse(rest); has(opts, "show-current-patch", "help", "h") ||
			len(ops) > 0 && ops[0].lit && readOnlySub(sub, ops[0].val) {
			return
		}
		c.tree("git "+sub, what)
	case "read-tree":
		if opts, _ := (flags{}).parse(rest); has(opts, "u") {
			c.tree("git read-tree", what)
		}
	case "checkout-index":
		if opts, ops := (flags{}).parse(rest); has(opts, "a", "all", "stdin") || len(ops) == 0 {
			c.tree("git checkout-index", what)
		} else {
			c.emitPaths(Write, "git checkout-index", false, ops)
		}
	case "merge-file":
		if opts, ops := (flags{shortVal: "L"}).parse(rest); !has(opts, "p", "stdout") && len(ops) > 0 {
			c.emitPaths(Write, "git merge-file", false, ops[:1])
		}
	case "submodule":
		if _, ops := (flags{}).parse(rest); len(ops) > 0 && ops[0].lit && ops[0].val == "update" {
			c.tree("git submodule update", what)
		}
	case "lfs":
		if _, ops := (flags{}).parse(rest); len(ops) > 0 && ops[0].lit && (ops[0].val == "checkout" || ops[0].val == "pull") {
			c.tree("git lfs "+ops[0].val, what)
		}
	}
}

// readOnlySub reports whether a subcommand of the git commands that
// rewrite the work tree only looks: git bisect log, git sparse-checkout
// list.
func readOnlySub(sub, op string) bool {
	switch sub {
	case "bisect":
		return op == "log" || op == "visualize" || op == "view" || op == "terms" || op == "help"
	case "sparse-checkout":
		return op == "list" || op == "check-rules"
	}
	return false
}

// checkoutOne reads git checkout X, which switches to the branch or
// commit X, or, when X is no such thing, restores the file or directory
// X. The script cannot tell: the effect rewrites the whole tree, with X in
// its Paths for recovery, which reads it as a path when it knows a file or
// directory there. A pattern is always a path.
func (c *call) checkoutOne(x arg, what string) {
	if p := pathspecs([]arg{x}); p[0].spec {
		c.emitPaths(Write, "git checkout", true, p)
		return
	}
	c.tree("git checkout", what)
	if n := len(c.w.res.Effects); n > 0 && c.w.res.Effects[n-1].Bound && x.lit {
		c.w.res.Effects[n-1].Paths = c.paths([]arg{x})
	}
}

// stash reads git stash. Its push (also with no subcommand) sets every
// change of the work tree aside, pop and apply bring them back: recovery
// reads a push of the whole tree and the pop or apply that follows with
// nothing in between as a pair that changed nothing. A push of some paths
// only, and git stash branch, are read as any other wholesale rewrite.
func (c *call) stash(rest []arg, what string) {
	opts, ops := flags{shortVal: "m", longVal: []string{"message", "pathspec-from-file"}, posix: true}.parse(rest)
	verb := "git stash"
	if len(ops) > 0 {
		if !ops[0].lit {
			c.tree(verb, what)
			return
		}
		switch ops[0].val {
		case "list", "show", "create":
			return
		case "drop", "clear", "store":
			// No file changes, but the stash a pop brings back is no
			// longer the one the session made: a mark for recovery.
			c.rooted(func() { c.under("git stash "+ops[0].val, []arg{{val: ".", lit: true, text: "."}}) })
			return
		case "pop", "apply":
			verb = "git stash " + ops[0].val
			if _, refs := (flags{}).parse(ops[1:]); len(refs) > 0 && !(refs[0].lit && (refs[0].val == "0" || refs[0].val == "stash@{0}")) {
				verb += " " + refs[0].text // an older stash than the session's last
			}
		case "push", "save":
			if o, paths := (flags{shortVal: "m", longVal: []string{"message", "pathspec-from-file"}}).parse(ops[1:]); len(paths) > 0 && ops[0].val == "push" || has(o, "p", "patch", "pathspec-from-file") {
				verb = "git stash push"
			}
		default:
			verb = "git stash " + ops[0].val
		}
	}
	if has(opts, "p", "patch", "pathspec-from-file") {
		verb = "git stash push"
	}
	c.tree(verb, what)
}

// pathspecs marks as not literal the operands a program expands itself,
// as git does its pathspecs and prettier its globs: globs and :(magic).
func pathspecs(ops []arg) []arg {
	out := make([]arg, len(ops))
	for i, a := range ops {
		if a.lit && (strings.ContainsAny(a.val, "*?[") || strings.HasPrefix(a.val, ":")) {
			a.lit, a.spec = false, true
		}
		out[i] = a
	}
	return out
}

// implied adds a Write of files a command changes without naming them
// (go mod tidy changes go.mod and go.sum where it runs).
func (c *call) implied(verb string, files ...string) {
	ops := make([]arg, len(files))
	for i, f := range files {
		ops[i] = arg{val: f, lit: true, text: f}
	}
	c.emitPaths(Write, verb, false, ops)
}

func (c *call) goTool(_ string, args []arg) {
	if len(args) >= 2 && args[0].lit && args[0].val == "-C" {
		c.chdirCommand(args[1])
		args = args[2:]
	}
	if len(args) == 0 || !args[0].lit {
		return
	}
	switch sub := args[0].val; sub {
	case "fmt", "fix":
		c.bounded("go "+sub, words("go", args), goPackages(args[1:], "*.go")...)
	case "generate":
		c.bounded("go generate", words("go", args), goPackages(args[1:], "*")...)
	case "get":
		c.implied("go get", "go.mod", "go.sum")
	case "mod":
		if len(args) < 2 || !args[1].lit {
			return
		}
		switch args[1].val {
		case "tidy":
			c.implied("go mod tidy", "go.mod", "go.sum")
		case "init":
			c.implied("go mod init", "go.mod")
		case "edit":
			opts, ops := flags{}.parse(args[2:])
			if has(opts, "json", "print") {
				return
			}
			if len(ops) > 0 {
				c.emitPaths(Write, "go mod edit", false, ops[:1])
				return
			}
			c.implied("go mod edit", "go.mod")
		case "vendor":
			c.w.unknown("go mod vendor", words("go", args), c.cx)
			c.under("go mod vendor", []arg{{val: "vendor", lit: true, text: "vendor"}})
		}
	}
}

func (c *call) cargo(_ string, args []arg) {
	opts, ops := flags{}.parse(args)
	if len(ops) == 0 || !ops[0].lit {
		return
	}
	switch sub := ops[0].val; {
	case sub == "fmt" && !has(opts, "check") && !slices.ContainsFunc(args, func(a arg) bool { return a.lit && a.val == "--check" }):
		// cargo fmt -- --check passes --check on to rustfmt.
		c.bounded("cargo fmt", words("cargo", args), "*.rs")
	case sub == "fix" || sub == "clippy" && has(opts, "fix"):
		c.bounded("cargo "+sub, words("cargo", args), "*.rs")
	}
}

// goPackages returns the places of the packages a go command names, as
// patterns of the files it rewrites (ext: *.go, or * for go generate):
// ./... is every one below, ./pkg and ./pkg/... those of pkg (and below:
// a pattern's * crosses slashes), none the current directory's. A package
// named by import path, or not literally, is somewhere in the tree.
func goPackages(args []arg, ext string) []string {
	var out []string
	for _, a := range args {
		if a.lit && strings.HasPrefix(a.val, "-") {
			continue // a flag (-n, -x): go fmt and go generate take no value
		}
		dir, ok := strings.CutSuffix(a.val, "/...")
		if !ok {
			dir = a.val
		}
		if !a.lit || !(dir == "." || dir == ".." || strings.HasPrefix(dir, "./") || strings.HasPrefix(dir, "../")) {
			return []string{ext}
		}
		out = append(out, path.Join(escapeGlob(path.Clean(dir)), ext))
	}
	if len(out) == 0 {
		return []string{ext}
	}
	return out
}

// goFlags reads Go-style flags (-name, --name, -name=value; no bundles),
// which stop at the first operand. It returns the flags given and the
// operands.
func goFlags(args []arg, valued ...string) (map[string]string, []arg) {
	set := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit || len(a.val) < 2 || a.val[0] != '-' {
			return set, args[i:]
		}
		if a.val == "--" {
			return set, args[i+1:]
		}
		name, val, eq := strings.Cut(strings.TrimLeft(a.val, "-"), "=")
		if !eq {
			val = "true"
			if slices.Contains(valued, name) && i+1 < len(args) {
				i++
				val = args[i].val
			}
		}
		set[name] = val
	}
	return set, nil
}

// gofmt reads gofmt -w, goimports -w and gofumpt -w. A .go file operand is
// rewritten; any other operand is a directory, whose .go files below it
// are rewritten, as files it chooses: a bound write of DIR/*.go, so that a
// file the session only read there, or one that is no Go file, is not
// taken for one it changed.
func (c *call) gofmt(name string, args []arg) {
	set, ops := goFlags(args, "r", "cpuprofile", "local", "srcdir")
	if set["w"] != "true" {
		return
	}
	verb := name + " -w"
	var files, dirs []arg
	for _, a := range ops {
		if a.lit && a.val != "" && !strings.HasSuffix(a.val, ".go") && !strings.ContainsAny(a.val, "*?[\\") {
			d := path.Join(escapeGlob(path.Clean(a.val)), "*.go")
			dirs = append(dirs, arg{val: d, spec: true, text: a.text})
			continue
		}
		files = append(files, a)
	}
	if len(files) > 0 {
		c.emitPaths(Write, verb, true, files)
	}
	if len(dirs) > 0 {
		c.w.unknown(verb, words(name, args), c.cx)
		c.under(verb, dirs)
	}
}

func (c *call) shfmt(name string, args []arg) {
	set, ops := goFlags(args, "i", "ln", "filename", "indent", "language-dialect")
	if set["w"] == "true" || set["write"] == "true" {
		c.emitPaths(Write, "shfmt -w", true, ops)
	}
}

func (c *call) prettier(_ string, args []arg) {
	opts, ops := flags{longVal: []string{"config", "ignore-path", "parser", "plugin", "log-level", "cache-location", "cache-strategy", "stdin-filepath", "print-width", "tab-width", "trailing-comma", "end-of-line", "arrow-parens", "prose-wrap", "quote-props", "html-whitespace-sensitivity", "embedded-language-formatting", "object-wrap", "experimental-operator-position", "config-precedence", "cursor-offset", "range-start", "range-end", "plugin-search-dir"}}.parse(args)
	if has(opts, "write", "w") {
		c.emitPaths(Write, "prettier --write", true, pathspecs(ops))
	}
}

func (c *call) eslint(_ string, args []arg) {
	opts, ops := flags{shortVal: "cfo", longVal: []string{"config", "ext", "ignore-path", "ignore-pattern", "rulesdir", "plugin", "rule", "parser", "parser-options", "env", "global", "format", "output-file", "max-warnings", "resolve-plugins-relative-to", "cache-location", "cache-strategy", "fix-type", "stdin-filename", "report-unused-disable-directives-severity", "flag", "concurrency"}}.parse(args)
	if out, ok := value(opts, "o", "output-file"); ok {
		c.emitPaths(Write, "eslint -o", false, []arg{out})
	}
	if !has(opts, "fix") {
		return
	}
	if len(ops) == 0 {
		// eslint --fix alone lints the directory it runs in.
		c.bounded("eslint --fix", words("eslint", args), "*")
		return
	}
	c.emitPaths(Write, "eslint --fix", true, pathspecs(ops))
}

// fixes adds the write of a linter or formatter that rewrites the files
// and directories it is given (globs it expands itself), or, given none,
// those under where it runs.
func (c *call) fixes(verb, what string, ops []arg) {
	if len(ops) == 0 {
		c.bounded(verb, what, "*")
		return
	}
	c.emitPaths(Write, verb, true, pathspecs(ops))
}

// biomeValued are Biome's options that take the next word as their value.
var biomeValued = []string{"config-path", "max-diagnostics", "diagnostic-level", "log-level", "log-kind", "log-file",
	"log-path", "log-prefix-name", "colors", "reporter", "reporter-file", "stdin-file-path", "since", "skip", "only",
	"files-max-size", "indent-style", "indent-width", "line-width", "line-ending", "attribute-position",
	"bracket-spacing", "expand", "threads", "vcs-client-kind", "vcs-root", "vcs-default-branch", "use-server",
	"server-log-path"}

// biome reads Biome (@biomejs/biome): check and lint with --write, --fix
// or the older --apply and --apply-unsafe, and format with --write,
// rewrite the files they are given, or those under where they run; without
// them, and biome ci, they only report. migrate --write rewrites the
// configuration, init creates it.
func (c *call) biome(_ string, args []arg) {
	opts, ops := flags{longVal: biomeValued}.parse(args)
	if len(ops) == 0 || !ops[0].lit || has(opts, "h", "help", "stdin-file-path") {
		return // biome check --stdin-file-path prints the fixed file
	}
	sub, paths := ops[0].val, ops[1:]
	what := words("biome", args)
	fix := ""
	for _, o := range opts {
		if o.name == "write" || o.name == "fix" || (o.name == "apply" || o.name == "apply-unsafe") && sub != "format" && sub != "migrate" {
			fix = "biome " + sub + " --" + o.name
			break
		}
	}
	switch sub {
	case "check", "lint", "format":
		if fix != "" {
			c.fixes(fix, what, paths)
		}
	case "migrate":
		if fix != "" {
			c.bounded(fix, what, "biome.json", "biome.jsonc")
		}
	case "init":
		if has(opts, "jsonc") {
			c.implied("biome init", "biome.jsonc")
			return
		}
		c.implied("biome init", "biome.json")
	}
}

// dprint reads dprint: fmt rewrites the files it is given, or all it
// formats under where it runs; check, and fmt --stdin, write nothing.
func (c *call) dprint(_ string, args []arg) {
	opts, ops := flags{shortVal: "c", longVal: []string{"config", "plugins", "excludes", "includes-override", "excludes-override", "log-level", "stdin"}}.parse(args)
	if len(ops) == 0 || !ops[0].lit || ops[0].val != "fmt" || has(opts, "stdin", "h", "help") {
		return
	}
	c.fixes("dprint fmt", words("dprint", args), ops[1:])
}

// jsLinters are the JavaScript and CSS linters whose --fix rewrites the
// files they are given, with their options that take the next word as
// their value.
var jsLinters = map[string]flags{
	"standard":  {longVal: []string{"global", "plugin", "parser", "env", "ext"}},
	"xo":        {longVal: []string{"reporter", "env", "global", "ignore", "plugin", "extend", "extension", "cwd", "stdin-filename"}},
	"stylelint": {shortVal: "cifo", longVal: []string{"config", "config-basedir", "ignore-path", "ignore-pattern", "ip", "custom-syntax", "formatter", "output-file", "max-warnings", "mw", "cache-location", "cache-strategy", "stdin-filename", "report-descriptionless-disables", "globby-options", "go"}},
	"oxlint":    {shortVal: "cAWDfo", longVal: []string{"config", "tsconfig", "ignore-path", "ignore-pattern", "allow", "warn", "deny", "format", "threads", "max-warnings", "plugin", "env", "output-file"}},
}

// jsLint reads standard, xo, stylelint and oxlint: with --fix (oxlint's
// --fix-suggestions and --fix-dangerously too) they rewrite the files they
// are given, or those under where they run.
func (c *call) jsLint(name string, args []arg) {
	opts, ops := jsLinters[name].parse(args)
	if !has(opts, "fix", "fix-suggestions", "fix-dangerously") || has(opts, "stdin", "h", "help") {
		return // --stdin --fix prints the fixed text
	}
	c.fixes(name+" --fix", words(name, args), ops)
}

func (c *call) black(_ string, args []arg) {
	opts, ops := flags{shortVal: "ltWc", longVal: []string{"line-length", "target-version", "include", "exclude", "extend-exclude", "force-exclude", "stdin-filename", "workers", "config", "required-version", "python-cell-magics", "code", "enable-unstable-feature"}}.parse(args)
	if has(opts, "check", "diff", "c", "code") {
		return
	}
	c.emitPaths(Write, "black", true, ops)
}

func (c *call) ruff(_ string, args []arg) {
	opts, ops := flags{longVal: []string{"config", "target-version", "line-length", "select", "ignore", "extend-select", "extend-ignore", "exclude", "extend-exclude", "per-file-ignores", "fixable", "unfixable", "extend-fixable", "output-format", "stdin-filename", "cache-dir", "range", "preview"}}.parse(args)
	verb := "ruff --fix"
	switch {
	case len(ops) > 0 && ops[0].lit && ops[0].val == "format":
		if has(opts, "check", "diff") {
			return
		}
		verb, ops = "ruff format", ops[1:]
	case has(opts, "fix") && !has(opts, "no-fix", "diff"):
		if len(ops) > 0 && ops[0].lit && ops[0].val == "check" {
			ops = ops[1:]
		}
	default:
		return
	}
	if len(ops) == 0 {
		// ruff alone reads the directory it runs in.
		c.bounded(verb, words("ruff", args), "*.py", "*.pyi", "*.ipynb")
		return
	}
	c.emitPaths(Write, verb, true, ops)
}

func (c *call) rustfmt(_ string, args []arg) {
	opts, ops := flags{longVal: []string{"edition", "config-path", "config", "emit", "color", "style-edition", "print-config"}}.parse(args)
	if emit, ok := value(opts, "emit"); has(opts, "check") || ok && emit.val == "stdout" {
		return
	}
	c.emitPaths(Write, "rustfmt", false, ops)
}

func (c *call) clangFormat(_ string, args []arg) {
	inPlace := false
	var ops []arg
	for _, a := range args {
		switch {
		case a.lit && (a.val == "-i" || a.val == "--i"):
			inPlace = true
		case a.lit && strings.HasPrefix(a.val, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if inPlace {
		c.emitPaths(Write, "clang-format -i", false, ops)
	}
}

// shell reads bash, sh and the like: a script given with -c, or fed on
// standard input by a heredoc, is read as a script of its own.
func (c *call) shell(name string, args []arg) {
	hasC, hasS := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit || len(a.val) < 2 || a.val[0] != '-' && a.val[0] != '+' {
			break
		}
		if a.val == "--" || a.val == "-" {
			i++
			break
		}
		if strings.HasPrefix(a.val, "--") {
			if a.val == "--rcfile" || a.val == "--init-file" {
				i++
			}
			continue
		}
		for _, ch := range a.val[1:] {
			switch ch {
			case 'c':
				hasC = true
			case 's':
				hasS = true // the script comes from standard input
			case 'o', 'O':
				i++
			}
		}
	}
	switch {
	case hasC && i < len(args):
		c.shellString(name+" -c", args[i])
	case !hasC && (hasS || i >= len(args)):
		c.stdinScript(name)
	case !hasC:
		c.runScript(name, args[i], args[i+1:]) // bash r.sh: read by the replay
	}
}

// stdinScript reads the heredoc a shell is fed as its script.
func (c *call) stdinScript(name string) {
	for _, r := range c.redirs {
		if r.Op == syntax.RdrIn && r.Word != nil {
			// bash < r.sh: the script is a file, read by the replay.
			if v, ok := c.sc.literal(r.Word); !strings.HasPrefix(v, "-") {
				c.runScript(name, arg{word: r.Word, val: v, lit: ok, text: c.w.text(r.Word)}, nil)
			}
			return
		}
		if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc && r.Op != syntax.WordHdoc {
			continue
		}
		what := name + " <<" + c.w.text(r.Word)
		if text, ok := heredoc(r); ok {
			c.subscript(name, text, what, c.sc.process())
			return
		}
		// The body holds expansions the outer shell makes first: read it
		// as written, only to tell whether it writes.
		body := c.w.text(r.Hdoc)
		if r.Op == syntax.WordHdoc {
			body = c.w.approximate(r.Word) // a here-string has no body
		}
		c.w.probe(name, what, c.cx, func() { c.subscript(name, body, what, c.sc.process()) })
		return
	}
}

// shellString reads a script given as one word (bash -c, eval, npx -c).
func (c *call) shellString(verb string, a arg) {
	if a.lit {
		c.subscript(verb, a.val, verb+" "+a.text, c.sc.process())
		return
	}
	text := c.w.approximate(a.word)
	c.w.probe(verb, verb+" "+a.text, c.cx, func() { c.subscript(verb, text, verb+" "+a.text, c.sc.process()) })
}

// eval runs its operands, joined, as a script in the same shell.
func (c *call) eval(_ string, args []arg) {
	if len(args) == 0 {
		return
	}
	lit := true
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.val
		if !a.lit {
			lit = false
			parts[i] = c.w.approximate(a.word)
		}
	}
	text, what := strings.Join(parts, " "), words("eval", args)
	if lit {
		// eval runs in this shell: a cd in it stays. What it assigns is
		// not read past it (a script with eval binds no variable).
		vars := c.sc.vars
		c.subscript("eval", text, what, c.sc)
		c.sc.vars = vars
		return
	}
	c.w.probe("eval", what, c.cx, func() { c.subscript("eval", text, what, c.sc.clone()) })
}

// subscript reads script as a script run at sc, adding its effects.
func (c *call) subscript(verb, script, what string, sc *scope) {
	w := c.w
	if w.depth >= maxDepth {
		w.unknown(verb, what, c.cx)
		return
	}
	if strings.Contains(strings.ReplaceAll(script, "\r\n", ""), "\r") {
		// A lone carriage return is a blank to the parser (as in a CRLF
		// script) but part of a word to bash: eval "touch\rb" runs no
		// touch. What such a script does cannot be told, if it may write.
		if mayWrite(script) {
			w.unknown(verb, what, c.cx)
		}
		return
	}
	sub := &walker{depth: w.depth + 1, res: w.res, nvague: w.nvague, budget: w.budget, pats: w.pats, posix: w.posix}
	switch path.Base(strings.Fields(verb + " x")[0]) {
	case "sh", "dash":
		sub.posix = true
	case "bash", "zsh", "ksh":
		sub.posix = false
	}
	if err := sub.script(script, sc, c.cx); err != nil {
		// What does not parse is read for its verbs only, as Parse does.
		if fallback(script, err).Writes() {
			w.unknown(verb, what+" (does not parse)", c.cx)
		}
	}
}

// approximate returns a word's text with its quotes removed and its
// expansions as written: what a script given in it looks like before the
// outer shell expands it.
func (w *walker) approximate(word *syntax.Word) string {
	if word == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				} else {
					b.WriteString(w.text(q))
				}
			}
		default:
			b.WriteString(w.text(p))
		}
	}
	return b.String()
}

// interpreters name, per program, the options that give code inline and
// those that take a value.
var interpreters = map[string]struct{ code, valued []string }{
	"python":  {code: []string{"c"}, valued: []string{"W", "X", "Q"}},
	"python2": {code: []string{"c"}, valued: []string{"W", "X", "Q"}},
	"python3": {code: []string{"c"}, valued: []string{"W", "X", "Q"}},
	"pypy3":   {code: []string{"c"}, valued: []string{"W", "X", "Q"}},
	"node":    {code: []string{"e", "p", "eval", "print"}, valued: []string{"r", "require", "import", "loader", "experimental-loader", "input-type", "env-file", "C", "conditions", "title", "stack-size"}},
	"bun":     {code: []string{"e", "p", "eval", "print"}, valued: []string{"r", "preload", "cwd", "env-file", "config"}},
	"ruby":    {code: []string{"e"}, valued: []string{"r", "I", "C", "E", "F"}},
	"tsx":     {code: []string{"e", "p", "eval", "print"}, valued: []string{"r", "require", "import", "tsconfig"}},
	"ts-node": {code: []string{"e", "p", "eval", "print"}, valued: []string{"r", "require", "P", "project", "C", "compiler"}},
}

// interp reads a Python, Node, Ruby or Bun one-liner or heredoc for calls
// that write files. Which files cannot be told: an unknown write.
func (c *call) interp(name string, args []arg) {
	spec := interpreters[name]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.lit && a.val == "-" {
			break // the code comes from standard input
		}
		if !a.lit || len(a.val) < 2 || a.val[0] != '-' {
			c.runScript(name, a, args[i+1:]) // a script file: read by the replay
			return
		}
		if a.val == "--" {
			return
		}
		var opt, rest string
		if long, ok := strings.CutPrefix(a.val, "--"); ok {
			var eq bool
			opt, rest, eq = strings.Cut(long, "=")
			if slices.Contains(spec.code, opt) {
				shown, code := rest, rest
				if !eq && i+1 < len(args) {
					shown, code = args[i+1].text, c.w.code(args[i+1])
				}
				c.script(name, name+" --"+opt+" "+shown, code, codeOperands(args, i, eq)...)
				return
			}
			if !eq && slices.Contains(spec.valued, opt) {
				i++
			}
			continue
		}
		for j := 1; j < len(a.val); j++ {
			opt, rest = a.val[j:j+1], a.val[j+1:]
			switch {
			case opt == "m" && strings.HasPrefix(name, "py"):
				return // a module: not read
			case slices.Contains(spec.code, opt):
				inWord := rest != ""
				shown, code := rest, rest
				if !inWord && i+1 < len(args) {
					shown, code = args[i+1].text, c.w.code(args[i+1])
				}
				c.script(name, name+" -"+opt+" "+shown, code, codeOperands(args, i, inWord)...)
				return
			case slices.Contains(spec.valued, opt):
				if rest == "" {
					i++
				}
				j = len(a.val)
			}
		}
	}
	// No script file: the program reads its code from standard input.
	for _, r := range c.redirs {
		if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
			body := c.w.text(r.Hdoc)
			c.script(name, name+" <<"+c.w.text(r.Word)+" "+body, body)
		}
	}
}

// codeOperands returns the operands after code given by the option at
// args[i], in the same word (inWord) or in the next.
func codeOperands(args []arg, i int, inWord bool) []arg {
	if !inWord {
		i++
	}
	if i+1 >= len(args) {
		return nil
	}
	return args[i+1:]
}

// deno reads deno: fmt rewrites the files it is given, or those under
// where it runs, unless --check; lint does with --fix; eval runs code.
func (c *call) deno(_ string, args []arg) {
	opts, ops := flags{shortVal: "c", longVal: []string{"config", "ext", "ignore", "indent-width", "line-width", "prose-wrap", "log-level", "rules-tags", "rules-include", "rules-exclude", "import-map", "lock"}}.parse(args)
	if len(ops) == 0 || !ops[0].lit {
		return
	}
	switch ops[0].val {
	case "fmt":
		if !has(opts, "check") && !(len(ops) > 1 && ops[1].lit && ops[1].val == "-") {
			c.fixes("deno fmt", words("deno", args), ops[1:])
		}
	case "lint":
		if has(opts, "fix") {
			c.fixes("deno lint --fix", words("deno", args), ops[1:])
		}
	case "eval":
		if len(ops) > 1 {
			c.script("deno", "deno eval "+ops[1].text, c.w.code(ops[1]))
		}
	}
}

// scriptMarkers are calls by which Python, Node, Ruby, Perl and Deno code
// writes or removes files. Lower case: they are matched on lower-cased
// code.
var scriptMarkers = []string{
	".write(", "write_text(", "write_bytes(", "writefile", "writetextfile", "file.write", "writestream",
	"os.remove", "unlink", "shutil.", "rename", "copyfile", "appendfile", "fileutils.", "os.replace(",
	"rmsync", "fs.rm(", "cpsync", "file.delete", ".touch(", "deno.remove", "deno.write",
}

// scriptWrites reports whether code calls something that writes files: a
// marker, or open() with a mode that writes.
func scriptWrites(code string) bool {
	low := strings.ToLower(code)
	for _, m := range scriptMarkers {
		if strings.Contains(low, m) {
			return true
		}
	}
	for rest := low; ; {
		i := strings.Index(rest, "open(")
		if i < 0 {
			return false
		}
		rest = rest[i+len("open("):]
		if openWrites(rest) {
			return true
		}
	}
}

// openWrites reports whether the arguments of an open( call, up to its
// closing parenthesis, hold a mode string that writes: Python and Ruby's
// "w", "a", "x", "+", Perl's ">" and "+<".
func openWrites(s string) bool {
	depth := 0
	for i := 0; i < len(s) && i < 400; i++ {
		switch ch := s[i]; ch {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return false
			}
			depth--
		case '\'', '"':
			end := strings.IndexByte(s[i+1:], ch)
			if end < 0 {
				return false
			}
			mode := s[i+1 : i+1+end]
			if mode != "" && (strings.Trim(mode, "rwaxbtu+") == "" && strings.ContainsAny(mode, "wax+") ||
				strings.HasPrefix(mode, ">") || strings.HasPrefix(mode, "+<")) {
				return true
			}
			i += end + 1
		}
	}
	return false
}
