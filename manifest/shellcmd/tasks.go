package shellcmd

import (
	"path"
	"slices"
	"strings"
)

// Task runners (make, mise, just, task, npm, pnpm, yarn, bun) run what a
// project file defines, and golangci-lint run fixes files when its
// configuration says so. The parser knows no file, so such a command is a
// Task effect: the replay reads the definition (ReadTask) from the content
// the transcript holds for it, or else the host's copy. When a word of the
// command is not literal, or where it runs cannot be told, the task's name
// alone says whether it rewrites files (fmt, format, fix).

// dot is the directory a command runs in.
var dot = arg{val: ".", lit: true, text: "."}

// tasks reads a task runner's command line: a Task effect when it runs a
// task, nothing when it does not (npm install, make -n).
func (c *call) tasks(name string, args []arg) {
	ws := []string{name}
	lit := true
	for _, a := range args {
		if !a.lit || strings.ContainsAny(a.val, "\x00\n") || len(a.val) > maxPath {
			lit = false
			break
		}
		ws = append(ws, a.val)
	}
	if lit && c.sc.cur.vague == "" {
		if _, ok := parseTaskCall(ws); !ok {
			return
		}
		if dir, _, ok := c.w.pathOf(dot, c.sc); ok {
			c.w.add(Effect{Kind: Task, Verb: words(name, args), Paths: []string{dir}, Args: ws}, c.cx)
			return
		}
	}
	c.taskByName(name, args)
}

// bunValued are bun's own options that take the next word as their value.
var bunValued = []string{"cwd", "preload", "env-file", "config", "filter", "elide-lines", "shell", "tsconfig-override",
	"conditions", "main-fields", "extension-order", "port", "origin", "jsx-factory", "jsx-fragment", "jsx-import-source",
	"jsx-runtime", "define", "loader", "workspace"}

// bunFlags reads bun's options before its command or file, and those of
// bun run before the script's name.
var bunFlags = flags{shortVal: "rcF", longVal: bunValued, posix: true}

// bunCommands are bun's own commands: bun X runs script X only when X is
// none of them (bun x is read as bunx, by unwrap).
var bunCommands = []string{"test", "x", "exec", "repl", "install", "i", "add", "a", "remove", "rm", "update",
	"outdated", "audit", "link", "unlink", "publish", "patch", "patch-commit", "pm", "info", "why", "build", "init",
	"create", "c", "upgrade", "feedback", "completions", "discord", "help", "getcompletes"}

// bunFile reports whether bun X runs X as a file rather than as a
// package.json script: a path, or a name with a JavaScript or TypeScript
// extension. A script may be so named, but agents name scripts by what
// they do (lint:fix, format).
func bunFile(x string) bool {
	if strings.Contains(x, "/") || strings.HasPrefix(x, ".") {
		return true
	}
	switch path.Ext(x) {
	case ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts":
		return true
	}
	return false
}

// bun reads bun: bun run X and bun X run the package.json script X (a
// Task effect, read as npm's, pre and post scripts included, as bun's
// documentation says) or, when X is a file, run it (read by the replay);
// bun -e reads code; bun exec runs a script in bun's shell; bun's other
// commands write nothing read here.
func (c *call) bun(name string, args []arg) {
	opts, ops := bunFlags.parse(args)
	if has(opts, "e", "eval", "p", "print") || len(ops) == 0 || !ops[0].lit || ops[0].val == "-" {
		c.interp(name, args) // code inline or on standard input, or a file $F
		return
	}
	sub, rest := ops[0].val, ops[1:]
	switch {
	case sub == "run":
		ropts, rops := bunFlags.parse(rest)
		if has(ropts, "e", "eval", "p", "print") || len(rops) == 0 {
			return // bun run alone lists the scripts
		}
		if rops[0].lit && bunFile(rops[0].val) {
			c.bunScript(append(opts, ropts...), rops[0], rops[1:])
			return
		}
	case sub == "exec":
		if len(rest) > 0 {
			c.shellString("bun exec", rest[0])
		}
		return
	case slices.Contains(bunCommands, sub):
		return
	case bunFile(sub):
		c.bunScript(opts, ops[0], rest)
		return
	}
	c.tasks(name, args)
}

// bunScript reads bun running a file, in the directory --cwd names.
func (c *call) bunScript(opts []opt, file arg, rest []arg) {
	if d, ok := value(opts, "cwd"); ok {
		c.chdirCommand(d)
	}
	c.runScript("bun", file, rest)
}

// taskByName reads a task runner's command whose task cannot be read: it
// rewrites files, all under where it runs, when its name says so.
func (c *call) taskByName(name string, args []arg) {
	_, ops := flags{shortVal: "CfIoW", longVal: []string{"directory", "file", "makefile", "include-dir", "prefix", "filter", "workspace", "cwd"}}.parse(args)
	for _, a := range ops {
		if a.lit && formatTask(a.val) {
			c.bounded(name+" "+a.val, words(name, args), "*")
			return
		}
	}
}

// formatTask reports whether a task name, or an option passed on to it,
// says that it rewrites files: fmt, format or fix, alone or as a part of
// a name made with colons (lint:fix). Names joined with - or _ are not
// read, as the prefilter matches these words only between other bytes.
func formatTask(s string) bool {
	s = strings.ToLower(s)
	if s == "--fix" || s == "--write" {
		return true
	}
	for part := range strings.SplitSeq(s, ":") {
		switch part {
		case "fmt", "format", "fix":
			return true
		}
	}
	return false
}

// golangciValued are golangci-lint's options that take the next word as
// their value.
var golangciValued = []string{"config", "concurrency", "timeout", "enable", "disable", "enable-only", "presets",
	"build-tags", "new-from-rev", "new-from-patch", "new-from-merge-base", "out-format", "max-issues-per-linter",
	"max-same-issues", "issues-exit-code", "path-prefix", "path-mode", "modules-download-mode", "go", "color",
	"sort-order", "exclude", "exclude-dirs", "exclude-files", "skip-dirs", "skip-files", "cpu-profile-path",
	"mem-profile-path", "trace-path", "allow-parallel-runners", "output.text.path", "output.json.path",
	"output.tab.path", "output.html.path", "output.checkstyle.path", "output.code-climate.path",
	"output.junit-xml.path", "output.teamcity.path", "output.sarif.path"}

// golangci reads golangci-lint: run --fix and fmt rewrite the .go files of
// the packages they name; run alone does when its configuration turns
// fixing on, which the replay reads (a Task effect).
func (c *call) golangci(_ string, args []arg) {
	opts, ops := flags{shortVal: "cjEDp", longVal: golangciValued}.parse(args)
	if len(ops) == 0 || !ops[0].lit {
		return
	}
	sub, paths := ops[0].val, ops[1:]
	what := words("golangci-lint", args)
	switch sub {
	case "run":
		if fix, set := golangciFix(opts); set {
			if fix {
				c.bounded("golangci-lint run --fix", what, goPackages(paths, "*.go")...)
			}
			return
		}
		if has(opts, "h", "help") {
			return
		}
		ws := []string{"golangci-lint"}
		for _, a := range args {
			if !a.lit || strings.ContainsAny(a.val, "\x00\n") || len(a.val) > maxPath {
				ws = append(ws, "$") // a place that cannot be told: the whole tree
				continue
			}
			ws = append(ws, a.val)
		}
		if dir, _, ok := c.w.pathOf(dot, c.sc); ok {
			c.w.add(Effect{Kind: Task, Verb: what, Paths: []string{dir}, Args: ws}, c.cx)
		}
	case "fmt":
		if has(opts, "d", "diff", "diff-colored", "stdin", "h", "help") {
			return
		}
		c.bounded("golangci-lint fmt", what, goPackages(paths, "*.go")...)
	}
}

// golangciFix reads --fix, --fix=true and --fix=false: whether the command
// line says if golangci-lint fixes, and what.
func golangciFix(opts []opt) (fix, set bool) {
	v, ok := value(opts, "fix")
	if !ok {
		return false, false
	}
	switch {
	case v.text == "" || v.lit && (v.val == "" || v.val == "true" || v.val == "1"):
		return true, true
	case v.lit && (v.val == "false" || v.val == "0"):
		return false, true
	}
	return true, true // --fix=$X: it may
}

// taskCall is a task runner's command line, read from its literal words.
type taskCall struct {
	runner string   // make, mise, just, task, npm, pnpm, yarn, bun
	names  []string // the tasks it runs, in order; "" is the default one
	extra  []string // words passed on to the task's commands (npm run x -- --fix)
	dir    string   // -C DIR, --cd, --prefix, --dir, --cwd: where it looks
	file   string   // -f FILE, --justfile, --taskfile: the definition file
	other  bool     // the task is another package's (npm -w, pnpm --filter)
}

// runnerFlags are a task runner's options: those that take a value, and
// those with which it runs no task.
type runnerFlags struct {
	short string
	long  []string
	dry   []string // the options with which it runs nothing
}

var runnerOpts = map[string]runnerFlags{
	"make": {short: "CfIoWl", long: []string{"directory", "file", "makefile", "include-dir", "old-file", "assume-old", "what-if", "new-file", "assume-new", "load-average", "jobserver-style", "output-sync"},
		dry: []string{"n", "dry-run", "just-print", "recon", "q", "question", "p", "print-data-base", "v", "version", "h", "help", "t", "touch"}},
	"mise": {short: "CEjostP", long: []string{"cd", "env", "jobs", "output", "shell", "tool", "timeout", "profile"},
		dry: []string{"n", "dry-run", "h", "help"}},
	"just": {short: "fd", long: []string{"justfile", "working-directory", "shell", "shell-arg", "dotenv-filename", "dotenv-path", "color", "chooser", "command-color", "list-heading", "list-prefix", "set", "show", "s", "completions", "dump-format", "timestamp-format", "unstable"},
		dry: []string{"n", "dry-run", "l", "list", "summary", "show", "s", "evaluate", "dump", "fmt", "init", "edit", "variables", "choose", "h", "help", "V", "version", "completions", "groups", "usage"}},
	"task": {short: "dtoIc", long: []string{"dir", "taskfile", "output", "interval", "concurrency", "entrypoint", "sort", "output-group-begin", "output-group-end"},
		dry: []string{"n", "dry", "l", "list", "a", "list-all", "s", "summary", "status", "i", "init", "h", "help", "version", "json"}},
	"npm": {short: "wC", long: []string{"prefix", "workspace", "script-shell", "loglevel"},
		dry: []string{"h", "help", "dry-run"}},
	"pnpm": {short: "CFw", long: []string{"dir", "filter", "filter-prod", "workspace-root", "reporter", "loglevel"},
		dry: []string{"h", "help"}},
	"yarn": {long: []string{"cwd", "mutex", "network-timeout"},
		dry: []string{"h", "help"}},
	"bun": {short: bunFlags.shortVal, long: bunValued,
		dry: []string{"h", "help", "e", "eval", "p", "print", "v", "version", "revision"}},
}

// npmBuiltins are the commands of npm, pnpm and yarn that are not a
// package's scripts (pnpm X and yarn X run script X unless X is one).
var npmBuiltins = []string{
	"add", "install", "i", "ci", "update", "up", "upgrade", "remove", "rm", "uninstall", "un", "link", "ln",
	"unlink", "import", "rebuild", "rb", "prune", "fetch", "patch", "patch-commit", "audit", "list", "ls",
	"outdated", "why", "licenses", "exec", "dlx", "x", "create", "init", "publish", "pack", "root", "bin",
	"store", "server", "setup", "env", "config", "c", "deploy", "doctor", "approve-builds", "self-update", "help",
	"info", "global", "cache", "node", "set", "version", "workspaces", "workspace", "plugin", "constraints",
	"npm", "explain", "search", "login", "logout", "whoami", "view", "show", "owner", "team", "token", "dedupe",
	"ddp", "fund", "query", "sbom", "diff", "dist-tag", "deprecate", "edit", "explore", "hook", "org", "ping",
	"profile", "repo", "docs", "bugs", "star", "stars", "unstar", "shrinkwrap", "completion", "prefix", "access",
	"adduser", "pkg", "install-test", "it", "install-ci-test", "cit", "tag", "check", "generate-lock-entry",
	"autoclean", "unplug", "stage", "sdks", "cat-file", "recursive", "m", "multi", "catalog"}

// miseCommands are mise's own subcommands: mise X runs task X only when X
// is none of them.
var miseCommands = []string{
	"activate", "alias", "a", "backends", "b", "bin-paths", "cache", "completion", "config", "cfg", "deactivate",
	"doctor", "dr", "en", "env", "e", "exec", "x", "fmt", "generate", "g", "implode", "install", "i",
	"install-into", "latest", "link", "ln", "lock", "ls", "list", "ls-remote", "mcp", "outdated", "plugins", "p",
	"prune", "registry", "reshim", "run", "r", "search", "self-update", "set", "settings", "shell", "sh", "sync",
	"tasks", "t", "test-tool", "tool", "tool-stub", "trust", "uninstall", "unset", "unuse", "rm", "remove",
	"upgrade", "up", "usage", "use", "u", "version", "v", "watch", "w", "where", "which", "edit", "help",
	"direnv", "hook-env", "hook-not-found", "render-help", "shell-alias"}

// parseTaskCall reads a task runner's words (ws[0] is the runner): the
// tasks it runs, or false when it runs none (npm install, make -n, mise
// ls, a mise run that lets the user pick).
func parseTaskCall(ws []string) (taskCall, bool) {
	if len(ws) == 0 {
		return taskCall{}, false
	}
	t := taskCall{runner: ws[0]}
	if t.runner == "gmake" {
		t.runner = "make"
	}
	rf, ok := runnerOpts[t.runner]
	if !ok {
		return t, false
	}
	rest := ws[1:]
	if i := slices.Index(rest, "--"); i >= 0 && t.runner == "task" {
		rest, t.extra = rest[:i], rest[i+1:] // task X -- ARGS: {{.CLI_ARGS}}
	}
	args := make([]arg, len(rest))
	for i, w := range rest {
		args[i] = arg{val: w, lit: true, text: w}
	}
	var ops []arg
	var opts []opt
	switch t.runner {
	case "npm", "pnpm", "yarn", "mise", "bun":
		// Their options before the command, then the command's: the words
		// after a script's name are the script's.
		opts, ops = flags{shortVal: rf.short, longVal: rf.long, posix: true}.parse(args)
	default:
		opts, ops = flags{shortVal: rf.short, longVal: rf.long}.parse(args)
	}
	if t.runner == "bun" && len(ops) > 0 && ops[0].val == "run" {
		// bun run's options, then the script's name.
		ropts, rops := flags{shortVal: rf.short, longVal: rf.long, posix: true}.parse(ops[1:])
		opts, ops = append(opts, ropts...), rops
	} else if t.runner == "bun" && len(ops) > 0 && slices.Contains(bunCommands, ops[0].val) {
		return t, false
	}
	if has(opts, rf.dry...) {
		return t, false
	}
	if v, ok := value(opts, "C", "directory", "cd", "prefix", "dir", "cwd", "d", "working-directory"); ok && v.lit {
		t.dir = v.val
	}
	if v, ok := value(opts, "f", "file", "makefile", "justfile", "t", "taskfile"); ok && v.lit && t.runner != "mise" {
		t.file = v.val
	}
	t.other = has(opts, "w", "workspace", "F", "filter", "filter-prod", "r", "recursive", "ws", "workspaces")
	switch t.runner {
	case "make":
		for _, o := range ops {
			if !assignment(o.val) && strings.Trim(o.val, "0123456789") != "" { // make -j 4 lint

				t.names = append(t.names, o.val)
			}
		}
		if len(t.names) == 0 {
			t.names = []string{""}
		}
	case "just", "task":
		for _, o := range ops {
			if !assignment(o.val) {
				t.names = append(t.names, o.val)
			}
		}
		if len(t.names) == 0 {
			t.names = []string{""}
		}
	case "mise":
		if len(ops) == 0 {
			return t, false
		}
		sub, rest := ops[0].val, ops[1:]
		if (sub == "tasks" || sub == "t") && len(rest) > 0 && rest[0].val == "run" {
			sub, rest = "run", rest[1:] // mise tasks run TASK
		}
		switch {
		case sub == "run" || sub == "r":
			ropts, rops := flags{shortVal: rf.short, longVal: rf.long, posix: true}.parse(rest)
			if has(ropts, rf.dry...) || len(rops) == 0 {
				return t, false // mise run alone asks which task
			}
			if v, ok := value(ropts, "C", "cd"); ok && v.lit {
				t.dir = v.val
			}
			rest = rops
		case slices.Contains(miseCommands, sub):
			return t, false
		default:
			rest = ops // mise TASK
		}
		// mise run a args… ::: b args…
		next := true
		for _, o := range rest {
			switch {
			case o.val == ":::":
				next = true
			case next:
				t.names, next = append(t.names, o.val), false
			case o.val != "--":
				t.extra = append(t.extra, o.val)
			}
		}
	case "npm":
		if len(ops) == 0 {
			return t, false
		}
		switch sub := ops[0].val; sub {
		case "run", "run-script", "rum", "urn":
			if len(ops) < 2 {
				return t, false // lists the scripts
			}
			t.names, t.extra = []string{ops[1].val}, dropDashes(ops[2:])
		case "test", "t", "tst", "start", "stop", "restart":
			name := map[string]string{"t": "test", "tst": "test"}[sub]
			if name == "" {
				name = sub
			}
			t.names, t.extra = []string{name}, dropDashes(ops[1:])
		default:
			return t, false
		}
	case "bun":
		if len(ops) == 0 || bunFile(ops[0].val) {
			return t, false // bun run alone lists the scripts; a file is no task
		}
		t.names, t.extra = []string{ops[0].val}, dropDashes(ops[1:])
	case "pnpm", "yarn":
		if len(ops) == 0 {
			return t, false // yarn alone installs
		}
		sub := ops[0].val
		switch {
		case sub == "run" || sub == "run-script":
			if len(ops) < 2 {
				return t, false
			}
			t.names, t.extra = []string{ops[1].val}, dropDashes(ops[2:])
		case sub == "test" || sub == "t" || sub == "start" || sub == "stop" || sub == "restart":
			if sub == "t" {
				sub = "test"
			}
			t.names, t.extra = []string{sub}, dropDashes(ops[1:])
		case slices.Contains(npmBuiltins, sub) || strings.HasPrefix(sub, "-"):
			return t, false
		default:
			t.names, t.extra = []string{sub}, dropDashes(ops[1:])
		}
	}
	return t, len(t.names) > 0
}

func valsOf(as []arg) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.val
	}
	return out
}

// dropDashes returns the words after a script's name that reach it: all
// of them, the first -- left out.
func dropDashes(as []arg) []string {
	out := valsOf(as)
	if i := slices.Index(out, "--"); i >= 0 {
		out = slices.Delete(out, i, i+1)
	}
	return out
}
