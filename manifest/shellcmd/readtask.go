package shellcmd

import (
	"path"
	"slices"
	"strings"
)

// ReadFunc returns the content of the file at an absolute path as the
// replay knows it: what the transcript holds for it at this point, or else
// the host's copy. ok is false when neither knows the file.
type ReadFunc func(p string) (content string, ok bool)

// maxTaskDepth bounds how deep tasks run by tasks are read (make lint runs
// $(MAKE) fmt), so that a task that runs itself ends; maxTaskReads bounds
// how many tasks one command's reading goes through, and maxUpward how many
// directories above where a runner starts it looks for its file.
const (
	maxTaskDepth = 4
	maxTaskReads = 64
	maxUpward    = 32
)

// ReadTask reports what a Task effect does: args are its Args (the program
// first), dir the directory it ran in (absolute). The task's definition,
// or golangci-lint's configuration, is read with read; each command of the
// definition is read as a script run where the task runs, tasks it runs
// in turn, to a depth. Every effect's Verb says which command of which
// definition it comes from (mise run lint runs golangci-lint run --fix
// (mise.toml [tasks.lint])). A task whose definition cannot be read
// rewrites every file under dir when its name says it does (fmt, format,
// fix, lint:fix, -- --fix) and nothing otherwise. The paths of the result
// are absolute when dir is; a task run where no file can be read (a
// Windows directory) is read by its name, at places relative to it.
func ReadTask(args []string, dir string, read ReadFunc) Result {
	var res Result
	if len(args) == 0 {
		return res
	}
	t := &taskReader{read: read, budget: maxTaskReads}
	var effs []Effect
	if path.IsAbs(dir) {
		effs = t.resolve(args, path.Clean(dir), 0)
	} else {
		// A directory no file can be read in (C:\proj): the name says,
		// relative to where it ran.
		effs = t.byName(args, "")
	}
	what := strings.Join(args, " ")
	for _, e := range effs {
		if e.Kind != Run && e.Kind != Task && !strings.HasPrefix(e.Verb, what) {
			e.Verb = what + " " + e.Verb
		}
		res.Effects = append(res.Effects, e)
	}
	return res
}

// taskReader reads tasks for one command, within its budget.
type taskReader struct {
	read   ReadFunc
	budget int
}

// get reads a file, refusing one larger than a script may be: a
// definition so large is not read.
func (t *taskReader) get(p string) (string, bool) {
	if t.read == nil {
		return "", false
	}
	text, ok := t.read(p)
	if !ok || len(text) > MaxScript {
		return "", false
	}
	return text, true
}

// command is one command line of a task's definition, and where it is.
type command struct {
	text  string // shell text, or a script file's content when lang is set
	where string // mise.toml [tasks.lint], Makefile fmt, package.json scripts.lint
	lang  string // for a script file (a mise file task): what runs it
	dir   string // where it runs (absolute)
	extra []string
	main  bool // the command the words after the task's name go to
}

// definition is what a task runs: its commands, and the tasks it depends
// on, run before (make's prerequisites, mise's depends).
type definition struct {
	cmds []command
	deps []string
}

// resolve returns the effects of the task command args run in dir, their
// Verbs starting "runs LINE (WHERE)"; golangci-lint's say what in its
// configuration fixes.
func (t *taskReader) resolve(args []string, dir string, depth int) []Effect {
	if t.budget--; t.budget < 0 || depth > maxTaskDepth {
		return []Effect{treeWrite("runs tasks too deep to read", dir)}
	}
	if args[0] == "golangci-lint" {
		return t.golangci(args, dir)
	}
	call, ok := parseTaskCall(args)
	if !ok {
		return nil
	}
	if call.dir != "" {
		dir = joinDir(dir, call.dir)
	}
	var out []Effect
	for _, name := range call.names {
		def, ok := t.define(call, name, dir)
		if !ok && (call.runner == "yarn" || call.runner == "pnpm" || call.runner == "bun") && handlers[name] != nil && !call.other {
			// yarn eslint --fix, bun biome check --write: a package's
			// program, when no script has its name.
			def, ok = definition{cmds: []command{{text: quoteWords(append([]string{name}, call.extra...)), where: "its program " + name, dir: dir}}}, true
			call.extra = nil
		}
		if !ok {
			return t.byName(args, dir)
		}
		if n := len(def.cmds); n > 0 && call.runner != "make" && call.runner != "just" && call.runner != "task" {
			// npm run lint -- --fix: the script's words, then these; mise
			// passes them to the last of a task's commands, npm to the
			// script itself, not its pre and post scripts.
			at := n - 1
			for i, c := range def.cmds {
				if c.main {
					at = i
				}
			}
			def.cmds[at].extra = call.extra
		}
		out = append(out, t.run(call, def, depth, map[string]bool{name: true})...)
	}
	return out
}

// run reads a definition's dependencies, then its commands.
func (t *taskReader) run(call taskCall, def definition, depth int, seen map[string]bool) []Effect {
	var out []Effect
	for _, d := range def.deps {
		if seen[d] || len(seen) > maxTaskReads {
			continue
		}
		seen[d] = true
		dd, ok := t.define(call, d, def.dirOf())
		if t.budget--; !ok || t.budget < 0 {
			continue // a file, not a task (make's prerequisites)
		}
		out = append(out, t.run(call, dd, depth, seen)...)
	}
	for _, c := range def.cmds {
		out = append(out, t.command(c, depth)...)
	}
	return out
}

// dirOf is where a definition's commands run.
func (d definition) dirOf() string {
	if len(d.cmds) > 0 {
		return d.cmds[0].dir
	}
	return ""
}

// command reads one command of a definition as a script run in its
// directory, and the tasks it runs in turn.
func (t *taskReader) command(c command, depth int) []Effect {
	text := c.text
	if len(c.extra) > 0 && c.lang == "" {
		text = strings.TrimRight(text, " \t\n") + " " + quoteWords(c.extra)
	}
	var res Result
	if c.lang != "" && !slices.Contains([]string{"sh", "bash", "zsh", "dash", "ksh"}, c.lang) {
		res = ReadScript(c.lang, path.Join(c.dir, "task"), text, nil)
		// Paths of code are relative to where it runs.
		for i := range res.Effects {
			res.Effects[i].Paths = absAll(c.dir, res.Effects[i].Paths)
			res.Effects[i].Specs = absPatterns(c.dir, res.Effects[i].Specs)
			res.Effects[i].Patterns = absPatterns(c.dir, res.Effects[i].Patterns)
		}
	} else {
		res = t.script(text, c.dir)
	}
	line := ""
	var out []Effect
	for _, e := range res.Effects {
		if e.Kind == Dir {
			continue
		}
		if line == "" {
			line = writingLine(text)
		}
		says := "runs " + line + " (" + c.where + ")"
		if e.Kind == Task {
			if len(e.Paths) == 0 || len(e.Args) == 0 {
				continue
			}
			for _, s := range t.resolve(e.Args, e.Paths[0], depth+1) {
				s.Cond = s.Cond || e.Cond
				if s.Kind != Run {
					s.Verb = says + ", which " + s.Verb
				}
				out = append(out, s)
			}
			continue
		}
		if e.Kind != Run {
			e.Verb = says
		}
		out = append(out, e)
	}
	return out
}

// script reads shell text run in dir (absolute).
func (t *taskReader) script(text, dir string) Result {
	var res Result
	if strings.Contains(strings.ReplaceAll(text, "\r\n", ""), "\r") {
		return Result{Effects: []Effect{treeWrite("runs a script with carriage returns", dir)}}
	}
	defer func() {
		if v := recover(); v != nil {
			res = Result{Effects: []Effect{treeWrite("runs a script that could not be read", dir)}}
		}
	}()
	w := newWalker(&res)
	w.depth = 1
	sc := &scope{cur: dirState{dir: dir}}
	if err := w.script(text, sc, ctx{tail: true}); err != nil {
		if fallback(text, err).Writes() {
			return Result{Effects: []Effect{treeWrite("runs a script that does not parse", dir)}}
		}
		return Result{}
	}
	return res
}

// writingLine names the line of a command that writes: the first line
// that writes when read alone, else the first line.
func writingLine(text string) string {
	first := ""
	for l := range strings.SplitSeq(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if first == "" {
			first = l
		}
		if parseScript(l).Writes() {
			return clip(l)
		}
	}
	return clip(first)
}

// clip shortens a line for a reason.
func clip(s string) string {
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:117], "") + "..."
	}
	return s
}

// treeWrite is a write of anything under dir.
func treeWrite(verb, dir string) Effect {
	return Effect{Kind: Write, Verb: verb, Specs: []string{escapeGlob(dir) + "/*"}, Recursive: true, Bound: true}
}

// byName reads a task whose definition cannot be read by its name, as
// the parser did before there were definitions to read.
func (t *taskReader) byName(args []string, dir string) []Effect {
	var res Result
	w := newWalker(&res)
	c := &call{w: w, sc: &scope{cur: dirState{dir: dir}}, cx: ctx{tail: true}}
	as := make([]arg, len(args)-1)
	for i, a := range args[1:] {
		as[i] = arg{val: a, lit: true, text: a}
	}
	c.taskByName(args[0], as)
	for i := range res.Effects {
		res.Effects[i].Verb = "(no definition read: its name says it formats or fixes)"
	}
	return res.Effects
}

// joinDir resolves a directory a runner is given against dir.
func joinDir(dir, d string) string {
	if path.IsAbs(d) {
		return path.Clean(d)
	}
	return path.Join(dir, d)
}

func absAll(dir string, ps []string) []string {
	for i, p := range ps {
		ps[i] = joinDir(dir, p)
	}
	return ps
}

func absPatterns(dir string, ps []string) []string {
	for i, p := range ps {
		if !path.IsAbs(p) {
			ps[i] = escapeGlob(dir) + "/" + p
		}
	}
	return ps
}

// quoteWords spells words for a shell, each quoted when it must be.
func quoteWords(ws []string) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@+") == "" {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// upward lists dir and the directories above it, nearest first.
func upward(dir string) []string {
	var out []string
	for d := dir; len(out) < maxUpward; d = path.Dir(d) {
		out = append(out, d)
		if d == "/" || d == "." {
			break
		}
	}
	return out
}
