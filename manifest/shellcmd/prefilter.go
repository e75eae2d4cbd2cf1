package shellcmd

// The prefilter answers most commands an agent runs (ls, grep, go test,
// git status, anything 2>&1) without building a syntax tree. It may only
// rule a script out when no spelling of a write Parse reports could be in
// it, so every reading of Parse that finds a write is gated by one of the
// needles below, and FuzzParse checks that it never drops a script the
// parser finds writing.

// commandWords are names of commands that write, and words without which
// one does not (git checkout, go mod tidy, cargo fmt). They are matched as
// whole words: the shell runs a command only when its name is a whole
// word, and no spelling (quotes, backslashes, a directory before it) adds
// letters of a word around it.
var commandWords = []string{
	"rm", "rmdir", "mkdir", "unlink", "mv", "cp", "install", "ln", "tee", "touch", "truncate", "rsync", "patch",
	"sed", "gsed", "perl", "gofmt", "goimports", "prettier", "eslint", "black", "ruff", "rustfmt",
	"clang-format", "shfmt", "cargo", "deno", "tar", "unzip",
	// git and go subcommands that write
	"checkout", "switch", "restore", "stash", "reset", "apply", "clean", "am", "pull", "merge", "rebase",
	"cherry-pick", "revert", "filter-branch", "bisect", "sparse-checkout", "read-tree", "checkout-index",
	"merge-file", "submodule", "lfs", "fmt", "fix", "generate", "mod", "get",
	// task names that rewrite files (mise run fmt, npm run format)
	"format",
	// task runners, whose tasks the replay reads, and linters that fix
	"make", "gmake", "mise", "just", "task", "npm", "pnpm", "yarn", "golangci-lint", "gofumpt",
	// biome check --apply and biome init spell no other needle
	"biome",
	// what runs a script file, whose content the replay may know
	"bash", "sh", "zsh", "dash", "ksh", "source", "python", "python2", "python3", "pypy3", "node", "ruby", "bun",
	"tsx", "ts-node",
}

// substrings are spellings matched anywhere: dd's of=, find -delete,
// PowerShell cmdlets, options passed on to a task (npm run lint -- --fix),
// and (added below) the calls by which scripts write.
var substrings = []string{"of=", "-delete", "-item", "-content", "out-file", "open(", "--fix", "--write",
	// a script run by its path with its extension (runsByPath; ./x is
	// found by dotSlash)
	".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".rb", ".pl"}

type needle struct {
	text string
	word bool
}

// byFirst indexes the needles, lower-cased, by their first byte.
var byFirst = func() (t [256][]needle) {
	for _, w := range commandWords {
		t[w[0]] = append(t[w[0]], needle{w, true})
	}
	for _, s := range append(substrings, scriptMarkers...) {
		t[s[0]] = append(t[s[0]], needle{s, false})
	}
	return t
}()

// mayWrite reports whether script could hold a write Parse would report.
// The shell removes quotes and backslashes from a command name ('r'm, r\m,
// "rm" and $'rm' all run rm), so those bytes are dropped before looking
// for needles, and case is ignored. A script that may hold a brace
// expansion may write.
func mayWrite(script string) bool {
	var buf [1024]byte
	b := buf[:0]
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '>':
			if redirectMayWrite(script[i+1:]) {
				return true
			}
		case c == '\'' || c == '"':
			continue
		case c == '$' && i+1 < len(script) && (script[i+1] == '\'' || script[i+1] == '"'):
			continue
		case c == '\\':
			if i+1 < len(script) && script[i+1] == '\n' {
				i++ // a line continuation joins the words around it
			}
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	if braces(b) {
		// Brace expansion can make a needle the script does not spell
		// ({r,}m, git {check,}out): the parser reads it.
		return true
	}
	for i := range b {
		if b[i] == '.' && dotSlash(b, i) {
			return true
		}
		for _, n := range byFirst[b[i]] {
			end := i + len(n.text)
			if end > len(b) || string(b[i:end]) != n.text {
				continue
			}
			if !n.word || (i == 0 || !wordByte(b[i-1])) && (end == len(b) || !wordByte(b[end])) {
				return true
			}
		}
	}
	return false
}

// dotSlash reports whether a word starts at i with ./ or ../ and a name
// (./r.sh, ../bin/fix), as a script run by its path does, or is a lone dot
// before a blank or a redirection (. env.sh, which sources it); ./... and ./ alone, which go
// test and ls take, do not.
func dotSlash(b []byte, i int) bool {
	if i > 0 && (wordByte(b[i-1]) || b[i-1] == '/') {
		return false
	}
	if i+1 < len(b) && (separator(b[i+1]) || b[i+1] == '\r') {
		return true
	}
	j := i + 1
	if j < len(b) && b[j] == '.' {
		j++
	}
	if j >= len(b) || b[j] != '/' {
		return false
	}
	k := j + 1 // the first component of the name after ./ or ../
	for k < len(b) && b[k] != '/' && !separator(b[k]) {
		k++
	}
	return alnum(string(b[j+1 : k]))
}

// wordByte reports whether c can be part of a command name around a needle
// word: a letter, digit, '_', '.' or '-'.
func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// redirectMayWrite reports whether the text after a '>' could redirect to
// a file: anything but >&N, >&-, or a device (>/dev/null) written as a
// plain word. A target with quotes, backslashes or $ in it may be spelled
// in ways this does not read, so it may write.
func redirectMayWrite(rest string) bool {
	i := 0
	if i < len(rest) && (rest[i] == '>' || rest[i] == '|') {
		i++
	}
	dup := i < len(rest) && rest[i] == '&'
	if dup {
		i++
	}
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
		i++
	}
	j := i
	for j < len(rest) && !separator(rest[j]) {
		switch rest[j] {
		case '\'', '"', '\\', '$', '`':
			return true
		}
		j++
	}
	word := rest[i:j]
	if dup && (isDigits(word) || word == "-") {
		return false
	}
	return word == "" || !device(word)
}

// separator reports whether c ends an unquoted word.
func separator(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
		return true
	}
	return false
}
