package shellcmd

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// The readers of task definitions. Their files come from a transcript or a
// host and are hostile: each is read only up to MaxScript bytes, with a
// bounded number of lines, names and expansions, and a reader that fails
// (a panic in a decoder included) reads no definition, never a wrong one.
// TOML, YAML and JSON are read by their decoders; a Makefile's and a
// justfile's rules by the small readers below, which know only what tells
// a task's commands apart.

// define finds the definition of the task name of a runner's call run in
// dir: false when no file the reader knows defines it.
func (t *taskReader) define(call taskCall, name, dir string) (def definition, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			def, ok = definition{}, false
		}
	}()
	switch call.runner {
	case "make":
		return t.makeTask(call, name, dir)
	case "just":
		return t.justTask(call, name, dir)
	case "mise":
		return t.miseTask(name, dir)
	case "npm", "pnpm", "yarn", "bun":
		if call.other {
			return definition{}, false // another package's script
		}
		return t.npmTask(call.runner, name, dir)
	case "task":
		return t.goTask(call, name, dir)
	}
	return definition{}, false
}

// rel names a file for a reason: relative to dir when it is under it.
func rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// Makefiles.

func (t *taskReader) makeTask(call taskCall, name, dir string) (definition, bool) {
	files := []string{"GNUmakefile", "makefile", "Makefile"}
	if call.file != "" {
		files = []string{call.file}
	}
	for _, f := range files {
		p := joinDir(dir, f)
		text, ok := t.get(p)
		if !ok {
			continue
		}
		target, recipe, deps, ok := makeRule(text, name, dir)
		if !ok {
			return definition{}, false
		}
		def := definition{deps: deps}
		for _, r := range recipe {
			def.cmds = append(def.cmds, command{text: r, where: rel(dir, p) + " " + target, dir: dir})
		}
		if len(def.cmds) == 0 {
			def.cmds = []command{{where: rel(dir, p) + " " + target, dir: dir}}
		}
		return def, true
	}
	return definition{}, false
}

// makeVar matches a variable's assignment: NAME = value, :=, ::=, :::=,
// ?=, +=, != (the last, a shell's output, is not known).
var makeVar = regexp.MustCompile(`^(?:export\s+|override\s+)*([A-Za-z0-9_.-]+)\s*(:::=|::=|:=|\?=|\+=|!=|=)\s*(.*)$`)

// makeRule reads a Makefile's rules for target ("" is the default goal,
// the first target that is not special or a pattern): the target's name,
// its recipe lines with make's variables expanded as far as the file sets
// them, and its prerequisites; ok false when no rule has the target. Both
// branches of a conditional are read: what either may run.
func makeRule(text, target, dir string) (name string, recipe, prereqs []string, ok bool) {
	vars := map[string]string{}
	var cur []string // the targets of the rule being read
	inDefine := false
	lines := strings.Split(text, "\n")
	var raw []string // the recipe lines, unexpanded
	for i := 0; i < len(lines) && i < 1<<16; i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		if strings.HasPrefix(line, "\t") && cur != nil {
			// A recipe line; a backslash at its end goes to the shell.
			for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
				i++
				line += "\n" + strings.TrimPrefix(strings.TrimSuffix(lines[i], "\r"), "\t")
			}
			if target != "" && slices.Contains(cur, target) {
				raw = append(raw, line[1:])
			}
			continue
		}
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		trim := strings.TrimSpace(line)
		if inDefine {
			inDefine = !strings.HasPrefix(trim, "endef")
			continue
		}
		if trim == "" || strings.HasPrefix(trim, "#") {
			continue
		}
		first, _, _ := strings.Cut(trim, " ")
		switch first {
		case "define":
			inDefine, cur = true, nil
			continue
		case "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "include", "-include", "sinclude", "vpath", "export", "unexport":
			if !makeVar.MatchString(trim) || first == "ifeq" || first == "ifneq" || first == "ifdef" || first == "ifndef" {
				continue
			}
		}
		colon := ruleColon(trim)
		if colon < 0 {
			if m := makeVar.FindStringSubmatch(trim); m != nil {
				switch m[2] {
				case "?=":
					if _, set := vars[m[1]]; !set {
						vars[m[1]] = m[3]
					}
				case "+=":
					vars[m[1]] = strings.TrimSpace(vars[m[1]] + " " + m[3])
				case "!=":
					delete(vars, m[1])
				default:
					vars[m[1]] = m[3]
				}
			}
			cur = nil
			continue
		}
		targets := strings.Fields(trim[:colon])
		rest := strings.TrimLeft(trim[colon:], ":")
		if strings.Contains(strings.SplitN(rest, ";", 2)[0], "=") {
			cur = nil // a target's own variable: target: VAR = value
			continue
		}
		cur = targets
		if target == "" {
			for _, tg := range targets {
				if !strings.HasPrefix(tg, ".") && !strings.Contains(tg, "%") && !strings.Contains(tg, "$") {
					target = tg
					break
				}
			}
		}
		if target == "" || !slices.Contains(targets, target) {
			continue
		}
		ok = true
		deps, inline, _ := strings.Cut(rest, ";")
		if i := strings.Index(deps, "|"); i >= 0 {
			deps = deps[:i] + " " + deps[i+1:] // order-only prerequisites run too
		}
		for _, d := range strings.Fields(expandMake(deps, vars, target, dir, nil, 0)) {
			if !slices.Contains(prereqs, d) && len(prereqs) < 256 {
				prereqs = append(prereqs, d)
			}
		}
		if inline = strings.TrimSpace(inline); inline != "" {
			raw = append(raw, inline)
		}
	}
	for _, r := range raw {
		r = strings.TrimLeft(r, " \t")
		r = strings.TrimLeft(r, "@-+ \t")
		if r = expandMake(r, vars, target, dir, prereqs, 0); strings.TrimSpace(r) != "" {
			recipe = append(recipe, r)
		}
	}
	return target, recipe, prereqs, ok
}

// ruleColon returns the index of the colon that makes a line a rule, or -1
// for an assignment or any other line.
func ruleColon(line string) int {
	depth := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case '=':
			if depth == 0 {
				return -1
			}
		case ':':
			if depth == 0 {
				if strings.HasPrefix(line[i:], ":=") || strings.HasPrefix(line[i:], "::=") || strings.HasPrefix(line[i:], ":::=") {
					return -1
				}
				return i
			}
		}
	}
	return -1
}

// maxExpansion bounds what a Makefile's variables expand to, so that
// variables made of variables cannot grow without end.
const maxExpansion = 64 << 10

// expandMake expands make's variables in s: those the file sets, $(MAKE)
// as make, $(CURDIR), $@, $< and $^, $$ as $; a variable the file does not
// set is empty, as in make; a function ($(shell …), $(wildcard …)) is kept
// as written, which the shell then reads as a word it cannot tell.
func expandMake(s string, vars map[string]string, target, dir string, prereqs []string, depth int) string {
	if depth > 8 || !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxExpansion; i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		var name string
		switch c := s[i]; c {
		case '$':
			b.WriteByte('$')
			continue
		case '(', '{':
			end := matching(s, i)
			if end < 0 {
				b.WriteString(s[i-1:])
				return b.String()
			}
			name = s[i+1 : end]
			if strings.ContainsAny(name, " \t,") {
				b.WriteString(s[i-1 : end+1]) // a function
				i = end
				continue
			}
			i = end
		default:
			name = string(c)
		}
		switch name {
		case "MAKE":
			b.WriteString("make")
		case "CURDIR":
			b.WriteString(dir)
		case "@":
			b.WriteString(target)
		case "<":
			if len(prereqs) > 0 {
				b.WriteString(prereqs[0])
			}
		case "^", "+":
			b.WriteString(strings.Join(prereqs, " "))
		default:
			if v, ok := vars[name]; ok {
				b.WriteString(expandMake(v, vars, target, dir, prereqs, depth+1))
			}
		}
	}
	return b.String()
}

// matching returns the index of the bracket closing the one at i.
func matching(s string, i int) int {
	open, close := s[i], byte(')')
	if open == '{' {
		close = '}'
	}
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case close:
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// justfiles.

func (t *taskReader) justTask(call taskCall, name, dir string) (definition, bool) {
	var cands []string
	if call.file != "" {
		cands = []string{joinDir(dir, call.file)}
	} else {
		for _, d := range upward(dir) {
			for _, n := range []string{"justfile", "Justfile", ".justfile", "JUSTFILE"} {
				cands = append(cands, path.Join(d, n))
			}
		}
	}
	for _, p := range cands {
		text, ok := t.get(p)
		if !ok {
			continue
		}
		root := path.Dir(p)
		if call.dir != "" {
			root = dir // -d: where it was told to run
		}
		r, ok := justRecipe(text, name)
		if !ok {
			return definition{}, false
		}
		where := rel(dir, p) + " " + r.name
		def := definition{deps: r.deps}
		if r.shebang != "" {
			def.cmds = []command{{text: r.body[0], where: where, lang: r.shebang, dir: root}}
		} else {
			for _, l := range r.body {
				def.cmds = append(def.cmds, command{text: l, where: where, dir: root})
			}
		}
		if len(def.cmds) == 0 {
			def.cmds = []command{{where: where, dir: root}}
		}
		return def, true
	}
	return definition{}, false
}

// justHeader matches a recipe's first line: [@]name params…: deps.
var justHeader = regexp.MustCompile(`^@?([A-Za-z_][A-Za-z0-9_-]*)((?:\s+[^:]*)?):(.*)$`)

// justVar matches an assignment: [export] name := 'value' or "value".
var justVar = regexp.MustCompile(`^(?:export\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*:=\s*(?:'([^']*)'|"([^"\\]*)")\s*$`)

type recipe struct {
	name    string
	body    []string // its lines, or for a shebang recipe its whole text
	shebang string
	deps    []string
}

// justRecipe reads a justfile's recipe name ("" is the first one): its
// lines, {{var}} filled in for the variables set with literal strings, and
// its dependencies.
func justRecipe(text, name string) (recipe, bool) {
	vars := map[string]string{}
	aliases := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines) && i < 1<<16; i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '[' {
			continue
		}
		if m := justVar.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[2] + m[3]
			continue
		}
		if a, ok := strings.CutPrefix(line, "alias "); ok {
			if k, v, ok := strings.Cut(a, ":="); ok {
				aliases[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			continue
		}
		m := justHeader.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[3], "=") {
			continue
		}
		if name == "" {
			name = m[1]
		}
		if a, ok := aliases[name]; ok {
			name = a
		}
		if m[1] != name {
			continue
		}
		r := recipe{name: name}
		for _, d := range strings.Fields(strings.NewReplacer("(", " ", ")", " ", "&&", " ").Replace(m[3])) {
			if justName(d) && len(r.deps) < 256 {
				r.deps = append(r.deps, d)
			}
		}
		var body []string
		for j := i + 1; j < len(lines) && j < i+1<<16; j++ {
			l := strings.TrimSuffix(lines[j], "\r")
			if l != "" && l[0] != ' ' && l[0] != '\t' {
				break
			}
			body = append(body, l)
		}
		for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
			body = body[:len(body)-1]
		}
		fill := func(s string) string { return fillJust(s, vars) }
		if len(body) > 0 && strings.HasPrefix(strings.TrimSpace(body[0]), "#!") {
			whole := dedent(body)
			r.shebang = shebang(whole)
			r.body = []string{fill(whole)}
			return r, true
		}
		for k := 0; k < len(body); k++ {
			l := strings.TrimSpace(body[k])
			for strings.HasSuffix(l, `\`) && k+1 < len(body) {
				k++
				l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(body[k])
			}
			if l = strings.TrimLeft(l, "@-"); l != "" && !strings.HasPrefix(l, "#") {
				r.body = append(r.body, fill(l))
			}
		}
		return r, true
	}
	return recipe{}, false
}

// justName reports whether a word after a recipe's colon names a recipe.
func justName(s string) bool {
	return s != "" && !strings.ContainsAny(s, `'"{}$`) && justHeader.MatchString(s+":")
}

// fillJust replaces {{name}} by the value of a variable set literally.
func fillJust(s string, vars map[string]string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 || b.Len() > maxExpansion {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if v, ok := vars[strings.TrimSpace(s[i+2:i+j])]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+2])
		}
		s = s[i+j+2:]
	}
}

// dedent removes the indentation of a recipe's first line from each.
func dedent(lines []string) string {
	ind := len(lines[0]) - len(strings.TrimLeft(lines[0], " \t"))
	var b strings.Builder
	for _, l := range lines {
		if len(l) >= ind && strings.TrimLeft(l[:ind], " \t") == "" {
			l = l[ind:]
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// mise.

// miseConfigs are mise's configuration files, relative to a directory, in
// the order it lets them override each other.
var miseConfigs = []string{"mise.local.toml", "mise.toml", ".mise.local.toml", ".mise.toml", "mise/config.toml",
	".mise/config.toml", ".config/mise.toml", ".config/mise/config.toml"}

// miseTaskDirs hold mise's file tasks: lint:go is DIR/lint/go, lint may be
// DIR/lint/_default.
var miseTaskDirs = []string{"mise-tasks", ".mise-tasks", "mise/tasks", ".mise/tasks", ".config/mise/tasks"}

func (t *taskReader) miseTask(name, dir string) (definition, bool) {
	if name == "" || strings.Contains(name, "..") || strings.ContainsAny(name, "*?[") {
		return definition{}, false
	}
	for _, root := range upward(dir) {
		for _, c := range miseConfigs {
			p := path.Join(root, c)
			text, ok := t.get(p)
			if !ok {
				continue
			}
			if def, ok := t.miseToml(text, name, root, rel(dir, p)); ok {
				return def, true
			}
		}
		for _, td := range miseTaskDirs {
			base := path.Join(root, td, strings.ReplaceAll(name, ":", "/"))
			for _, p := range []string{base, base + "/_default", base + ".sh"} {
				text, ok := t.get(p)
				if !ok {
					continue
				}
				return miseFileTask(text, rel(dir, p), root), true
			}
		}
	}
	return definition{}, false
}

// miseToml reads task name of a mise.toml: run (a string, or a list of
// strings and {task = …} tables), file, dir and depends.
func (t *taskReader) miseToml(text, name, root, where string) (definition, bool) {
	var doc struct {
		Tasks map[string]any `toml:"tasks"`
	}
	if toml.Unmarshal([]byte(text), &doc) != nil {
		return definition{}, false
	}
	v, ok := doc.Tasks[name]
	if !ok {
		for k, tv := range doc.Tasks { // an alias of another task
			if m, ok := tv.(map[string]any); ok && slices.Contains(stringsOf(m["alias"]), name) {
				v, name, ok = tv, k, true
				break
			}
		}
		if v == nil {
			return definition{}, false
		}
	}
	where = where + " [tasks." + tomlKey(name) + "]"
	def := definition{}
	run := v
	dir := root
	if m, ok := v.(map[string]any); ok {
		run = m["run"]
		def.deps = append(stringsOf(m["depends"]), stringsOf(m["depends_post"])...)
		if d, ok := m["dir"].(string); ok && d != "" {
			dir = joinDir(root, strings.ReplaceAll(d, "{{config_root}}", root))
		}
		if f, ok := m["file"].(string); ok && f != "" {
			p := joinDir(root, f)
			text, ok := t.get(p)
			if !ok {
				return definition{}, false
			}
			fd := miseFileTask(text, where, dir)
			fd.deps = append(def.deps, fd.deps...)
			return fd, true
		}
	}
	var items []any
	switch r := run.(type) {
	case string:
		items = []any{r}
	case []any:
		items = r
	}
	for _, it := range items {
		switch it := it.(type) {
		case string:
			def.cmds = append(def.cmds, command{text: strings.ReplaceAll(it, "{{config_root}}", root), where: where, dir: dir})
		case map[string]any:
			def.deps = append(def.deps, stringsOf(it["task"])...)
			def.deps = append(def.deps, stringsOf(it["tasks"])...)
		}
	}
	if len(def.cmds) == 0 {
		def.cmds = []command{{where: where, dir: dir}}
	}
	return def, true
}

// tomlKey spells a TOML key as a user writes it: quoted when it must be.
func tomlKey(k string) string {
	if k != "" && strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == "" {
		return k
	}
	return fmt.Sprintf("%q", k)
}

// stringsOf reads a string or a list of strings.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok && len(out) < 256 {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// miseHeader matches a file task's header line: #MISE key=value, # [MISE]
// key=value, //MISE key=value.
var miseHeader = regexp.MustCompile(`^(?:#|//)\s*(?:MISE|\[MISE\])\s+(.*)$`)

// miseFileTask reads a mise file task: a script, with its depends in its
// header, run where its configuration root is.
func miseFileTask(text, where, root string) definition {
	def := definition{}
	for _, l := range strings.SplitN(text, "\n", 200) {
		m := miseHeader.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		var kv map[string]any
		if toml.Unmarshal([]byte(m[1]), &kv) == nil {
			def.deps = append(def.deps, stringsOf(kv["depends"])...)
			def.deps = append(def.deps, stringsOf(kv["depends_post"])...)
			if d, ok := kv["dir"].(string); ok && d != "" {
				root = joinDir(root, strings.ReplaceAll(d, "{{config_root}}", root))
			}
		}
	}
	def.cmds = []command{{text: text, where: where, lang: shebang(text), dir: root}}
	return def
}

// npm, pnpm, yarn and bun.

func (t *taskReader) npmTask(runner, name, dir string) (definition, bool) {
	for _, d := range upward(dir) {
		p := path.Join(d, "package.json")
		text, ok := t.get(p)
		if !ok {
			continue
		}
		var pkg struct {
			Scripts map[string]any `json:"scripts"`
		}
		if json.Unmarshal([]byte(text), &pkg) != nil {
			return definition{}, false
		}
		s, ok := pkg.Scripts[name].(string)
		if !ok {
			return definition{}, false
		}
		where := rel(dir, p) + " scripts."
		def := definition{}
		names := []string{name}
		if runner != "pnpm" {
			names = []string{"pre" + name, name, "post" + name} // npm, yarn 1 and bun run pre and post scripts
		}
		for _, n := range names {
			if s2, ok := pkg.Scripts[n].(string); ok && s2 != "" {
				def.cmds = append(def.cmds, command{text: s2, where: where + n, dir: d, main: n == name})
			}
		}
		if s == "" || len(def.cmds) == 0 {
			def.cmds = []command{{where: where + name, dir: d}}
		}
		return def, true
	}
	return definition{}, false
}

// Taskfiles (go-task).

var taskfiles = []string{"Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml",
	"taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml"}

func (t *taskReader) goTask(call taskCall, name, dir string) (definition, bool) {
	var cands []string
	if call.file != "" {
		cands = []string{joinDir(dir, call.file)}
	} else {
		for _, d := range upward(dir) {
			for _, n := range taskfiles {
				cands = append(cands, path.Join(d, n))
			}
		}
	}
	if name == "" {
		name = "default"
	}
	for _, p := range cands {
		text, ok := t.get(p)
		if !ok {
			continue
		}
		var doc struct {
			Tasks map[string]any `yaml:"tasks"`
		}
		if yaml.Unmarshal([]byte(text), &doc) != nil {
			return definition{}, false
		}
		v, ok := doc.Tasks[name]
		if !ok {
			return definition{}, false
		}
		root := path.Dir(p)
		if call.dir != "" {
			root = dir
		}
		where := rel(dir, p) + " tasks." + name
		def := definition{}
		cmds := v
		if m, ok := v.(map[string]any); ok {
			cmds = m["cmds"]
			if c, ok := m["cmd"].(string); ok {
				cmds = []any{c}
			}
			if d, ok := m["dir"].(string); ok && d != "" {
				root = joinDir(root, d)
			}
			for _, dep := range listOf(m["deps"]) {
				switch dep := dep.(type) {
				case string:
					def.deps = append(def.deps, dep)
				case map[string]any:
					def.deps = append(def.deps, stringsOf(dep["task"])...)
				}
			}
		}
		args := quoteWords(call.extra)
		for _, c := range listOf(cmds) {
			switch c := c.(type) {
			case string:
				def.cmds = append(def.cmds, command{text: taskVars(c, args), where: where, dir: root})
			case map[string]any:
				if s, ok := c["cmd"].(string); ok {
					def.cmds = append(def.cmds, command{text: taskVars(s, args), where: where, dir: root})
				}
				def.deps = append(def.deps, stringsOf(c["task"])...)
			}
		}
		if len(def.cmds) == 0 {
			def.cmds = []command{{where: where, dir: root}}
		}
		return def, true
	}
	return definition{}, false
}

// cliArgs matches go-task's {{.CLI_ARGS}}, the words after --.
var cliArgs = regexp.MustCompile(`\{\{\s*\.CLI_ARGS\s*\}\}`)

func taskVars(s, args string) string {
	return cliArgs.ReplaceAllLiteralString(s, args)
}

// listOf reads a YAML list, or one item as a list of one.
func listOf(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case nil:
		return nil
	}
	return []any{v}
}

// golangci-lint.

// golangciConfigs are golangci-lint's configuration files, looked for from
// where it runs upwards.
var golangciConfigs = []string{".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"}

// golangci reads golangci-lint run (without --fix or --fix=false): it
// rewrites the .go files of the packages it names when the configuration
// it finds (-c FILE, or the nearest .golangci.* from where it runs up) sets
// issues.fix, in version 1's format and version 2's alike.
func (t *taskReader) golangci(args []string, dir string) []Effect {
	as := make([]arg, len(args)-1)
	for i, a := range args[1:] {
		as[i] = arg{val: a, lit: a != "$", text: a}
	}
	opts, ops := flags{shortVal: "cjEDp", longVal: golangciValued}.parse(as)
	if len(ops) == 0 || ops[0].val != "run" || has(opts, "no-config") {
		return nil
	}
	var cands []string
	if v, ok := value(opts, "c", "config"); ok {
		if !v.lit {
			return nil
		}
		cands = []string{joinDir(dir, v.val)}
	} else {
		for _, d := range upward(dir) {
			for _, n := range golangciConfigs {
				cands = append(cands, path.Join(d, n))
			}
		}
	}
	for _, p := range cands {
		text, ok := t.get(p)
		if !ok {
			continue
		}
		if !golangciFixes(p, text) {
			return nil
		}
		var res Result
		c := &call{w: newWalker(&res), sc: &scope{cur: dirState{dir: dir}}, cx: ctx{tail: true}}
		c.bounded("fixes files (issues.fix is true in "+rel(dir, p)+")", "golangci-lint run", goPackages(ops[1:], "*.go")...)
		return res.Effects
	}
	return nil
}

// golangciFixes reports whether a golangci-lint configuration sets
// issues.fix, read by the decoder its name says.
func golangciFixes(name, text string) (fix bool) {
	defer func() {
		if recover() != nil {
			fix = false
		}
	}()
	switch path.Ext(name) {
	case ".toml":
		var doc struct {
			Issues struct {
				Fix bool `toml:"fix"`
			} `toml:"issues"`
		}
		return toml.Unmarshal([]byte(text), &doc) == nil && doc.Issues.Fix
	case ".json":
		var doc struct {
			Issues struct {
				Fix bool `json:"fix"`
			} `json:"issues"`
		}
		return json.Unmarshal([]byte(text), &doc) == nil && doc.Issues.Fix
	}
	var doc struct {
		Issues struct {
			Fix bool `yaml:"fix"`
		} `yaml:"issues"`
	}
	return yaml.Unmarshal([]byte(text), &doc) == nil && doc.Issues.Fix
}
