package jsonl

import (
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"strings"

	"github.com/agentsandbox/sandbox/parse/shellcmd"
)

// salvageLimit is how much of a lost line is searched for the files it
// names: a tool call's path comes before its content in every format, and
// an apply_patch names a file before each of its parts; past this much, a
// search would cost more than the line is likely to tell.
const salvageLimit = 16 << 20

// maxNames bounds the names kept of one lost line.
const maxNames = 4096

// The keys whose string values name files, commands and a Codex call's
// working directory.
var (
	pathKeys    = []string{"file_path", "filePath", "notebook_path", "absolute_path", "path"}
	cmdKeys     = []string{"command", "cmd"}
	workdirKeys = []string{"workdir"}
)

var (
	// lostValue matches a string value at the start of what follows a key
	// and its colon, whatever the spacing; lostValueIn the same in JSON held
	// in a string (a Codex call's arguments), where every quote and
	// backslash is escaped once more. arrayAt and arrayIn match an argv.
	lostValue   = regexp.MustCompile(`^\s*:\s*"((?:[^"\\]|\\.)*)"`)
	lostValueIn = regexp.MustCompile(`^\s*:\s*\\"((?:[^"\\]|\\\\(?:\\["\\]|[^"\\]))*)\\"`)
	arrayAt     = regexp.MustCompile(`^\s*:\s*\[([^\]]*)\]`)
	stringValue = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	// patchHeader finds where a file an apply_patch text names begins.
	patchHeader = regexp.MustCompile(`\*\*\* (?:Add File|Update File|Delete File|Move to): `)
)

// valueWindow bounds how far past its key a value is looked for: a value
// longer than that (a path is at most 4096 bytes; a command may be a long
// heredoc) is not read, so the search costs what the keys' values do,
// not the line's length times the number of keys.
const valueWindow = 1 << 20

// Names returns the file paths a line that could not be read mentions, as
// written (relative ones are the caller's to resolve, but for those under
// a Codex call's workdir): the values of path keys, the files the shell
// commands it holds write, and the files of apply_patch headers, also
// inside JSON held in a string (a Codex call's arguments), in its first
// 16 MiB. It is a search, not a parse: a name may belong to a call that
// only read the file or never ran; what it is for is saying which files a
// lost line may have changed.
func Names(line []byte) []string {
	if len(line) > salvageLimit {
		line = line[:salvageLimit]
	}
	workdir := ""
	for _, v := range values(line, workdirKeys) {
		if path.IsAbs(v) {
			workdir = v
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" || len(p) > 4096 || len(out) >= maxNames || strings.ContainsAny(p, "\x00\n") {
			return
		}
		if workdir != "" && !path.IsAbs(p) {
			p = path.Join(workdir, p)
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, v := range values(line, pathKeys) {
		add(v)
	}
	for _, script := range commands(line) {
		for _, e := range shellcmd.Parse(script).Effects {
			if e.Kind != shellcmd.Dir {
				for _, p := range e.Paths {
					add(p)
				}
			}
		}
	}
	for _, loc := range patchHeader.FindAllIndex(line, -1) {
		add(headerName(line[loc[1]:]))
	}
	return out
}

// values returns the decoded string values of keys, in the line and in
// JSON held in its strings, found from each key's occurrences.
func values(line []byte, keys []string) []string {
	var out []string
	each(line, keys, func(rest []byte, in bool) {
		re := lostValue
		if in {
			re = lostValueIn
		}
		if m := re.FindSubmatch(rest); m != nil {
			if v, ok := unquoteN(string(m[1]), in); ok {
				out = append(out, v)
			}
		}
	})
	return out
}

// each calls fn with what follows every occurrence of a key ("key" in the
// line, \"key\" in JSON held in a string), at most valueWindow of it.
func each(line []byte, keys []string, fn func(rest []byte, in bool)) {
	for _, k := range keys {
		for _, in := range []bool{false, true} {
			needle := []byte(`"` + k + `"`)
			if in {
				needle = []byte(`\"` + k + `\"`)
			}
			for off := 0; off < len(line); {
				i := bytes.Index(line[off:], needle)
				if i < 0 {
					break
				}
				if !in && off+i > 0 && line[off+i-1] == '\\' {
					off += i + len(needle) // the escaped form, read as such
					continue
				}
				rest := line[off+i+len(needle):]
				fn(rest[:min(len(rest), valueWindow)], in)
				off += i + len(needle)
			}
		}
	}
}

// unquoteN decodes a value found in the line (once) or in JSON held in
// one of its strings (twice).
func unquoteN(s string, in bool) (string, bool) {
	v, ok := unquote(s)
	if ok && in {
		v, ok = unquote(v)
	}
	return v, ok
}

// commands returns the shell scripts a line's command keys hold: a string,
// or an argv (["bash", "-lc", script] gives the script; any other its
// words joined).
func commands(line []byte) []string {
	out := values(line, cmdKeys)
	each(line, cmdKeys, func(rest []byte, in bool) {
		if in {
			rest = bytes.ReplaceAll(rest[:min(len(rest), 1<<16)], []byte(`\"`), []byte(`"`))
		}
		m := arrayAt.FindSubmatch(rest)
		if m == nil {
			return
		}
		var words []string
		for _, s := range stringValue.FindAllSubmatch(m[1], -1) {
			if v, ok := unquoteN(string(s[1]), in); ok {
				words = append(words, v)
			}
		}
		if len(words) >= 3 && (words[1] == "-lc" || words[1] == "-c") {
			out = append(out, words[2])
		} else if len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	})
	return out
}

// headerName reads the file name after an apply_patch header up to the
// end of its line, which in a transcript is an escaped newline (\n in a
// JSON string, \\n in JSON held in one) or the end of the string, and
// decodes its escapes.
func headerName(b []byte) string {
	end := len(b)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\n' || c == '"' {
			end = i
			break
		}
		if c == '\\' {
			j := i
			for j < len(b) && b[j] == '\\' {
				j++
			}
			if j < len(b) && (b[j] == 'n' || b[j] == 'r' || b[j] == '"') && (j-i == 1 || j-i == 2 || b[j] == '"') {
				end = i
				break
			}
			i = j - 1 + min(1, len(b)-j) // the escaped byte goes with its backslashes
		}
	}
	name := string(b[:end])
	for range 2 {
		if !strings.Contains(name, `\`) {
			break
		}
		v, ok := unquote(name)
		if !ok {
			break
		}
		name = v
	}
	return name
}

// unquote decodes the body of a JSON string.
func unquote(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var v string
	if json.Unmarshal([]byte(`"`+s+`"`), &v) != nil {
		return "", false
	}
	return v, true
}
