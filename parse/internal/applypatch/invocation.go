package applypatch

import (
	"path"
	"strings"
)

// Invocation is an apply_patch found in a command.
type Invocation struct {
	// Patch is the patch text (a heredoc body or an argv element).
	Patch string
	// Cd is the directory of a leading "cd DIR &&" ("" when none).
	Cd string
	// Intercepted is true for the forms Codex intercepts and applies with
	// its own applier. False means the command ran as an ordinary shell
	// command that happened to call an apply_patch binary (for example
	// "cd x; apply_patch <<EOF"): it may or may not have applied.
	Intercepted bool
	// Heredoc is true when the patch came from a heredoc.
	Heredoc bool
}

// FromArgv recognises the argv forms Codex intercepts: ["apply_patch", P],
// ["applypatch", P], and [shell, flag, SCRIPT] where SCRIPT is an apply_patch
// heredoc (see FromScript).
func FromArgv(argv []string) (Invocation, bool) {
	if len(argv) == 2 && (argv[0] == "apply_patch" || argv[0] == "applypatch") {
		return Invocation{Patch: argv[1], Intercepted: true}, true
	}
	if script, ok := shellScript(argv); ok {
		return FromScript(script)
	}
	return Invocation{}, false
}

// shellScript returns the script of a [shell, flag, script] argv.
func shellScript(argv []string) (string, bool) {
	if len(argv) < 3 {
		return "", false
	}
	base := strings.ToLower(path.Base(strings.ReplaceAll(argv[0], `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	switch base {
	case "bash", "zsh", "sh":
		if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
			return argv[2], true
		}
	case "pwsh", "powershell":
		rest := argv[1:]
		if len(rest) > 0 && strings.EqualFold(rest[0], "-NoProfile") {
			rest = rest[1:]
		}
		if len(rest) == 2 && strings.EqualFold(rest[0], "-Command") {
			return rest[1], true
		}
	case "cmd":
		if len(argv) == 3 && strings.EqualFold(argv[1], "/c") {
			return argv[2], true
		}
	}
	return "", false
}

// ShellScript returns the script of a [shell, flag, script] argv, or the argv
// joined with spaces when it is not of that form.
func ShellScript(argv []string) string {
	if s, ok := shellScript(argv); ok {
		return s
	}
	return strings.Join(argv, " ")
}

// FromScript recognises a shell script that is exactly
// "[cd DIR &&] apply_patch <<'DELIM'\n…\nDELIM" (Codex's interception), and,
// as a non-intercepted invocation, any other script that feeds a full patch
// envelope to apply_patch through a heredoc.
func FromScript(script string) (Invocation, bool) {
	s := strings.TrimSpace(script)
	inv := Invocation{Intercepted: true}
	if rest, ok := strings.CutPrefix(s, "cd "); ok {
		dir, after, ok := shellWord(strings.TrimLeft(rest, " \t"))
		if !ok {
			return nonIntercepted(s)
		}
		after = strings.TrimLeft(after, " \t")
		switch {
		case strings.HasPrefix(after, "&&"):
			after = after[2:]
		case strings.HasPrefix(after, ";"):
			after = after[1:]
			inv.Intercepted = false
		default:
			return nonIntercepted(s)
		}
		inv.Cd = dir
		s = strings.TrimLeft(after, " \t")
	}
	var cmd string
	switch {
	case strings.HasPrefix(s, "apply_patch"):
		cmd = "apply_patch"
	case strings.HasPrefix(s, "applypatch"):
		cmd = "applypatch"
	default:
		return nonIntercepted(script)
	}
	body, rest, ok := heredoc(strings.TrimLeft(s[len(cmd):], " \t"))
	if !ok || strings.TrimSpace(rest) != "" {
		return nonIntercepted(script)
	}
	inv.Patch = body
	inv.Heredoc = true
	return inv, true
}

// nonIntercepted finds an apply_patch heredoc anywhere in a script that Codex
// would have run as a plain shell command.
func nonIntercepted(script string) (Invocation, bool) {
	i := strings.Index(script, "apply_patch")
	if i < 0 || !strings.Contains(script, beginMarker) {
		return Invocation{}, false
	}
	rest := strings.TrimLeft(script[i+len("apply_patch"):], " \t")
	body, _, ok := heredoc(rest)
	if !ok || !strings.Contains(body, beginMarker) {
		return Invocation{}, false
	}
	return Invocation{Patch: body, Heredoc: true}, true
}

// heredoc parses "<<[-] DELIM\nbody\nDELIM…" and returns body (with its final
// newline) and what follows the terminator line.
func heredoc(s string) (body, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, "<<")
	if !ok {
		return "", "", false
	}
	stripTabs := false
	if strings.HasPrefix(s, "-") {
		stripTabs = true
		s = s[1:]
	}
	s = strings.TrimLeft(s, " \t")
	delim, after, ok := shellWord(s)
	if !ok || delim == "" {
		return "", "", false
	}
	nl := strings.IndexByte(after, '\n')
	if nl < 0 || strings.TrimSpace(after[:nl]) != "" {
		return "", "", false
	}
	after = after[nl+1:]
	var b strings.Builder
	for after != "" {
		line, next, found := strings.Cut(after, "\n")
		cmp := line
		if stripTabs {
			cmp = strings.TrimLeft(line, "\t")
			line = cmp
		}
		if strings.TrimSuffix(cmp, "\r") == delim {
			return b.String(), next, true
		}
		b.WriteString(line)
		if found {
			b.WriteByte('\n')
		}
		after = next
	}
	// bash runs a heredoc that is never terminated, up to the end of input.
	return b.String(), "", true
}

// shellWord reads one shell word made of plain characters and single- or
// double-quoted parts, and returns it unquoted with the rest of s.
func shellWord(s string) (word, rest string, ok bool) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
				j++
			}
			if j >= len(s) {
				return "", "", false
			}
			i = j + 1
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i += 2
		case strings.IndexByte(" \t\n;&|<>()", c) >= 0:
			return b.String(), s[i:], b.Len() > 0
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), "", b.Len() > 0
}

// HeaderPaths returns the file names a patch's headers give (Add, Delete,
// Update, Move to), as written, in order: the files a patch that does not
// parse still names.
func HeaderPaths(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		for _, m := range []string{"*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "} {
			if rest, ok := strings.CutPrefix(l, m); ok && rest != "" {
				out = append(out, rest)
			}
		}
	}
	return out
}
