package jsonl

import (
	"encoding/json"
	"regexp"
	"strings"
)

// salvageLimit is how much of a lost line is searched for the files it
// names: a tool call's path comes before its content in every format, so
// the start of a line is where it is.
const salvageLimit = 1 << 20

// maxNames bounds the names kept of one lost line.
const maxNames = 64

var (
	// pathKey finds a path-valued key and its string value, whatever the
	// spacing; pathKeyIn the same in JSON held in a string (a Codex call's
	// arguments), where every quote and backslash is escaped once more.
	pathKey   = regexp.MustCompile(`"(?:` + pathKeys + `)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	pathKeyIn = regexp.MustCompile(`\\"(?:` + pathKeys + `)\\"\s*:\s*\\"((?:[^"\\]|\\\\(?:\\["\\]|[^"\\]))*)\\"`)
	// patchHeader finds the files an apply_patch text names, its newline
	// escaped or not.
	patchHeader = regexp.MustCompile(`\*\*\* (?:Add File|Update File|Delete File|Move to): ([^"\\\n]+)`)
)

const pathKeys = `file_path|filePath|notebook_path|absolute_path|path`

// Names returns the file paths a line that could not be read mentions, as
// written (relative ones are the caller's to resolve): the values of
// path keys, also inside JSON held in a string (a Codex call's
// arguments), and the files of apply_patch headers, in its first MiB. It
// is a search, not a parse: a name may belong to a call that only read
// the file or never ran; what it is for is saying which files a lost line
// may have changed.
func Names(line []byte) []string {
	if len(line) > salvageLimit {
		line = line[:salvageLimit]
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" || len(p) > 4096 || seen[p] || len(out) >= maxNames || strings.ContainsAny(p, "\x00\n") {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	for _, m := range pathKey.FindAllSubmatch(line, -1) {
		if v, ok := unquote(string(m[1])); ok {
			add(v)
		}
	}
	for _, m := range pathKeyIn.FindAllSubmatch(line, -1) {
		if v, ok := unquote(string(m[1])); ok {
			if v, ok = unquote(v); ok {
				add(v)
			}
		}
	}
	for _, m := range patchHeader.FindAllSubmatch(line, -1) {
		add(string(m[1]))
	}
	return out
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
