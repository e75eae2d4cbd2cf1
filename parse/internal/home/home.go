// Package home expands the ~ that some agents' file tools expand to the
// user's home directory, which a transcript does not record: the parsers of
// the agents whose tools do so call it.
package home

import (
	"path"
	"strings"
)

// Dir returns the home directory the working directory cwd lies in, by
// the layouts of macOS (/Users/NAME), Linux (/home/NAME) and root's
// (/root), or "" when it lies in none of them (a container's /workspace).
func Dir(cwd string) string {
	cwd = path.Clean(cwd)
	if cwd == "/root" || strings.HasPrefix(cwd, "/root/") {
		return "/root"
	}
	for _, top := range []string{"/Users/", "/home/"} {
		if rest, ok := strings.CutPrefix(cwd, top); ok && rest != "" {
			name, _, _ := strings.Cut(rest, "/")
			if name != "" && name != "." && name != ".." && name != "Shared" {
				return top + name
			}
		}
	}
	return ""
}

// Expand reports whether p starts with ~ or ~/, as the tools expand it,
// and returns it with the home directory cwd lies in put in its place.
// When that directory cannot be told, p is returned cleaned and not
// joined to cwd: a path outside the project, which recovery never writes
// on a guess. ~user is left alone (the tools leave it too).
func Expand(cwd, p string) (string, bool) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return "", false
	}
	h := Dir(cwd)
	if h == "" {
		return path.Clean(p), true
	}
	return path.Join(h, p[1:]), true
}
