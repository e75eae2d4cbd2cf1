package shellcmd

import (
	"path"
	"slices"
	"strings"
)

// fallback reads a script that does not parse. It cannot tell commands
// from text, so it reports what could be a write as an unknown write named
// by its verb, and never a path.
func fallback(script string, err error) Result {
	res := Result{Err: err}
	if !mayWrite(script) {
		return res // no spelling of a write is in it, parsed or not
	}
	w := &walker{res: &res, nvague: new(int)}
	found := func(verb string) {
		if !slices.Contains(res.Vague, verb+" (does not parse)") {
			w.unknown(verb, verb+" (does not parse)", ctx{cond: true})
		}
	}
	// tree is found for a command that changes files it chooses anywhere
	// in the tree it runs in (git reset --hard, find -delete): every file
	// there may have changed, if it ran.
	tree := func(verb string) {
		if !slices.Contains(res.Vague, verb+" (does not parse)") {
			w.vague(verb + " (does not parse)")
			w.add(Effect{Kind: Write, Verb: verb, Recursive: true, Specs: []string{"*"}, Bound: true}, ctx{cond: true})
		}
	}
	if redirectsToFile(script) {
		found("redirect")
	}
	toks := strings.FieldsFunc(script, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n;|&()`<>{}$", r)
	})
	for i, t := range toks {
		toks[i] = strings.Trim(t, `'"\`)
	}
	later := func(i int, ok func(string) bool) bool { return slices.ContainsFunc(toks[i+1:], ok) }
	for i, t := range toks {
		name := path.Base(t)
		switch name {
		case "rm", "unlink", "mv", "cp", "install", "ln", "tee", "touch", "truncate", "rsync", "patch",
			"black", "rustfmt":
			found(name)
		case "sed", "perl":
			if later(i, inPlaceFlag) {
				found(name + " -i")
			}
		case "dd":
			if later(i, func(s string) bool { return strings.HasPrefix(s, "of=") }) {
				found("dd")
			}
		case "git":
			for _, s := range toks[i+1:] {
				if strings.HasPrefix(s, "-") {
					continue
				}
				switch s {
				case "rm", "mv", "restore":
					found("git " + s)
				case "checkout", "switch", "stash", "reset", "apply", "clean", "am", "pull", "merge", "rebase",
					"cherry-pick", "revert", "filter-branch", "bisect", "sparse-checkout", "read-tree", "checkout-index",
					"submodule", "lfs":
					tree("git " + s)
				}
				break
			}
		case "gofmt", "goimports", "prettier", "eslint", "ruff", "shfmt", "clang-format", "go", "cargo", "deno",
			"biome", "dprint", "standard", "xo", "stylelint", "oxlint":
			if later(i, func(s string) bool { return slices.Contains(writeWords[name], s) }) {
				found(name)
			}
		case "find":
			if later(i, func(s string) bool { return s == "-delete" }) {
				tree("find -delete")
			}
		case "tar", "unzip":
			tree(name)
		default:
			if powershell(name) {
				found(name)
			}
		}
	}
	if scriptWrites(script) {
		found("script")
	}
	return res
}

// writeWords are, per tool, the words that make it write.
var writeWords = map[string][]string{
	"gofmt": {"-w"}, "goimports": {"-w"}, "shfmt": {"-w", "--write"}, "prettier": {"-w", "--write"},
	"eslint": {"--fix"}, "ruff": {"format", "--fix"}, "clang-format": {"-i"},
	"go": {"fmt", "generate", "mod", "get", "fix"}, "cargo": {"fmt", "fix"}, "deno": {"fmt", "--fix"},
	"biome": {"--write", "--fix", "--apply", "--apply-unsafe", "init"}, "dprint": {"fmt"}, "standard": {"--fix"},
	"xo": {"--fix"}, "stylelint": {"--fix"}, "oxlint": {"--fix", "--fix-suggestions", "--fix-dangerously"},
}

// inPlaceFlag reports whether s is a sed or perl option bundle with -i.
func inPlaceFlag(s string) bool {
	if strings.HasPrefix(s, "--in-place") {
		return true
	}
	return len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s, "i")
}

// redirectsToFile reports whether text holds a > that could send output
// to a file: not >&2, not 2>/dev/null.
func redirectsToFile(text string) bool {
	for rest := text; ; {
		i := strings.IndexByte(rest, '>')
		if i < 0 {
			return false
		}
		rest = strings.TrimLeft(rest[i+1:], ">|")
		if strings.HasPrefix(rest, "&") {
			continue
		}
		target := strings.TrimLeft(rest, " \t")
		if end := strings.IndexAny(target, " \t\n;|&)"); end >= 0 {
			target = target[:end]
		}
		if target != "" && !device(strings.Trim(target, `'"`)) {
			return true
		}
	}
}
