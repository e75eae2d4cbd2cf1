// Package hostpath spells the paths agents record on any host, Windows
// ones included, one way: the parsers of agents that run on Windows and
// record its paths as they were given (GitHub Copilot CLI, Crush) share it,
// so that one file is one path however the tool was given it.
package hostpath

import (
	"path"
	"strings"
)

// Drive reports a Windows path with a drive letter (C:\…, c:/…).
func Drive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z')
}

// Clean cleans a path. A Windows one is spelled one way however the tool
// was given it: the drive letter upper case, forward slashes, so
// C:\w\a.txt, c:/w/a.txt and C:/w/./a.txt are one file.
func Clean(p string) string {
	if Drive(p) {
		return strings.ToUpper(p[:1]) + ":" + path.Clean("/"+strings.ReplaceAll(p[2:], `\`, "/"))
	}
	return path.Clean(p)
}

// Abs reports whether p is absolute on the host it was recorded on.
func Abs(p string) bool { return path.IsAbs(p) || Drive(p) }

// Join makes a tool's path p absolute against the working directory cwd,
// as the tool did; an absolute p, or one with no cwd to join, is only
// cleaned ("" stays "").
func Join(cwd, p string) string {
	switch {
	case p == "":
		return ""
	case Abs(p) || cwd == "":
		return Clean(p)
	case Drive(cwd):
		return Clean(cwd + "/" + strings.ReplaceAll(p, `\`, "/"))
	}
	return path.Join(cwd, p)
}
