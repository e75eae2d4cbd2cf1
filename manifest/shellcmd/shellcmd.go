package shellcmd

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// EffectKind says what a command does to a path.
type EffectKind string

// The kinds of effect a command can have on a path.
const (
	// Delete removes the paths: rm, unlink, git rm.
	Delete EffectKind = "delete"
	// Move renames Paths[0] to Paths[1] (into it when IntoDir): mv, git mv.
	Move EffectKind = "move"
	// Copy copies Paths[0] to Paths[1] (into it when IntoDir): cp.
	Copy EffectKind = "copy"
	// Create makes each path hold exactly Content, creating it if need be:
	// a heredoc with a quoted delimiter, echo or printf of literal text,
	// redirected with >.
	Create EffectKind = "create"
	// Append adds Content at the end of each path: the same with >>.
	Append EffectKind = "append"
	// Touch creates each path empty when it is absent and leaves its
	// content alone otherwise.
	Touch EffectKind = "touch"
	// Write changes the content of the paths in a way that cannot be
	// replayed (the output of a command, sed -i, a formatter, …). A Write
	// with no Paths stands for files that cannot be named; Result.Vague
	// says how the command named them.
	Write EffectKind = "write"
	// Dir makes or removes directories, never files: mkdir, rmdir.
	Dir EffectKind = "dir"
	// Run runs the script file Paths[0] in the directory Paths[1], with the
	// literal operands Paths[2:]: bash r.sh, ./r.sh, source env.sh, python3
	// fix.py. Verb says what reads it (sh, bash, source, python3, node, …,
	// or exec when it runs by its path). What it changes depends on the
	// file's content, which only the replay knows (ReadScript).
	Run EffectKind = "run"
	// Task runs a task a project file defines (make TARGET, mise run TASK,
	// npm run X, just RECIPE, task X), or a linter whose configuration says
	// whether it fixes files (golangci-lint run), in the directory Paths[0];
	// Verb is the command as written and Args its literal words after the
	// program's name, Args[0] being the program. What it changes depends on
	// the project's files, which only the replay knows (ReadTask).
	Task EffectKind = "task"
)

// Effect is one change a command makes to files.
type Effect struct {
	// Kind says what the command does to Paths.
	Kind EffectKind
	// Verb is what did it, e.g. "rm", "rm -r", "sed -i", "redirect", "tee".
	Verb string
	// Paths are literal paths as the command names them; a relative path
	// is joined onto the directory of any literal cd before it in the same
	// script. Move and Copy have exactly two: source and destination.
	Paths []string
	// Recursive says that a path may be a directory whose whole tree is
	// affected (rm -r, git rm -r, cp -r, a formatter given a directory).
	Recursive bool
	// IntoDir says that the destination of a Move or Copy is certainly a
	// directory (several sources, -t DIR, a trailing slash), so the file
	// lands at Paths[1]/base(Paths[0]).
	IntoDir bool
	// Content is the exact text of a Create or Append.
	Content string
	// Cond says that the command runs only under a condition (after ||,
	// inside if, while or case bodies, in the body of a for loop over
	// words that may be none or that may break off, in a function body,
	// after && whose list is not the script's last), so a successful exit
	// of the whole script does not prove that it ran.
	Cond bool
	// Patterns name files as the shell's pathname expansion does (src/*.go,
	// joined onto any literal cd like Paths): an unquoted *, ? or [...]
	// that matches within one path component and not a leading dot,
	// anything quoted or escaped standing for itself behind a backslash.
	// Specs are patterns the command expands itself (git pathspecs,
	// prettier and eslint globs), in which * also matches a slash. Such an
	// effect applies to every file that matched when it ran, which may be
	// more than the replay knows; for a Move or Copy, Paths holds only the
	// destination (a directory when IntoDir or when the pattern matched
	// several files). A pattern ending in a slash matches directories only.
	Patterns, Specs []string
	// Bound says that the command changed files it chose when it ran
	// (find -delete, git clean, git reset --hard, git stash, git checkout
	// BRANCH, git merge …), all of them at or under the places its Specs
	// name: no file there can be replayed, and every one the replay knows
	// is graded stale. Verb tells them apart (git stash and git stash pop
	// are read as a pair).
	Bound bool
	// Args are a Task's program and the literal words after it.
	Args []string
}

// Result is what a script does to files.
type Result struct {
	// Effects are the changes to named paths, in execution order.
	Effects []Effect
	// Vague lists targets the script names but not literally (globs, $VAR,
	// $(…), ~, brace expansion) and commands that change files they choose
	// themselves (git checkout BRANCH, xargs rm, a Python script that
	// writes), in their printed form.
	Vague []string
	// Err is set when a script that could write (see Parse) does not
	// parse as bash; Effects and Vague then come from a scan of its text
	// that names no path.
	Err error
}

// Writes reports whether r changes any file: an effect other than Dir, or
// a target that is not literal.
func (r Result) Writes() bool {
	for _, e := range r.Effects {
		if e.Kind != Dir {
			return true
		}
	}
	return len(r.Vague) > 0
}

// maxDepth bounds how deep scripts run by scripts (bash -c, eval, bash
// <<EOF) are read, so a hostile script cannot make the parser recurse
// without end.
const maxDepth = 4

// errInternal marks a panic recovered while reading a script: a bug, which
// the fuzz test looks for, but one that must not stop a whole transcript.
var errInternal = errors.New("shellcmd: internal error")

var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// Parse reads script as bash and reports the changes it makes to files.
// It never fails: a script that does not parse has Result.Err set and a
// conservative result (see Result.Err). A script in which no spelling of
// a write occurs (no ">", no name of a command that writes) is not parsed
// at all and has an empty Result.
func Parse(script string) Result {
	// Most commands an agent runs (ls, grep, go test) cannot write: tell
	// them without building a syntax tree.
	if !mayWrite(script) {
		return Result{}
	}
	return parseScript(script)
}

// parseScript is Parse without the prefilter.
func parseScript(script string) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = fallback(script, fmt.Errorf("%w: %v", errInternal, v))
		}
	}()
	w := newWalker(&res)
	if err := w.script(script, &scope{}, ctx{tail: true}); err != nil {
		return fallback(script, err)
	}
	return res
}

// newWalker returns a walker of a whole script that adds to res, with its
// counts and bounds.
func newWalker(res *Result) *walker {
	counts := &struct {
		nvague, budget int
		pats           patterns
	}{budget: maxUnrolled} // one allocation for all
	return &walker{res: res, nvague: &counts.nvague, budget: &counts.budget, pats: &counts.pats}
}

// parse parses script, retrying with the delimiters of heredocs the script
// leaves open: bash runs such a script (a heredoc ends at the end of the
// input), so reading it as broken would hide what it did.
func parse(script string) (*syntax.File, string, error) {
	// Bash takes any bytes but NUL, which it drops; the parser wants UTF-8
	// and drops NUL too, joining the bytes around it. Both are replaced by
	// U+FFFD, which no literal word or exact content may hold.
	script = strings.ToValidUTF8(script, string(utf8.RuneError))
	if strings.IndexByte(script, 0) >= 0 {
		script = strings.ReplaceAll(script, "\x00", string(utf8.RuneError))
	}
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	for range 4 {
		f, err := p.Parse(strings.NewReader(script), "")
		var pe syntax.ParseError
		if err == nil || !errors.As(err, &pe) {
			return f, script, err
		}
		delim, open := strings.CutPrefix(pe.Text, "unclosed here-document `")
		delim, closed := strings.CutSuffix(delim, "`")
		if !open || !closed || delim == "" || strings.ContainsAny(delim, "\n`") {
			return nil, script, err
		}
		if !strings.HasSuffix(script, "\n") {
			script += "\n"
		}
		script += delim + "\n"
	}
	return nil, script, errors.New("shellcmd: too many unclosed heredocs")
}
