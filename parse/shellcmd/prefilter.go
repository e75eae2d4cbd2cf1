package shellcmd

// needles are spellings, lower-cased, of which every write Parse can report
// holds at least one: the redirection operator, and the names of the
// commands and script calls it reads (or a word they need, such as "of="
// for dd or "fmt" for go fmt). Wrappers, shells and xargs need none: the
// command they run carries its own.
var needles = []string{
	">",
	"rm", "unlink", "mv", "cp", "install", "ln", "tee", "touch", "truncate", "of=", "rsync", "patch",
	"sed", "perl", "mkdir", "git", "fmt", "goimports", "prettier", "eslint", "black", "ruff",
	"clang-format", "fix", "generate", "mod", "get", "delete", "-item", "-content", "out-file",
	// scriptMarkers and open( with a mode that writes
	"write", "unlink", "shutil", "rename", "copyfile", "appendfile", "fileutils", "os.replace", "open(",
	"deno.remove",
}

// byFirst indexes needles by their first byte.
var byFirst = func() (t [256][]string) {
	for _, n := range needles {
		t[n[0]] = append(t[n[0]], n)
	}
	return t
}()

// mayWrite reports whether script could hold a write Parse would report.
// It may only say no when no spelling of one is there: the shell removes
// quotes and backslashes from a command name ('r'm, r\m and "rm" all run
// rm), so those bytes are dropped before looking, and case is ignored.
func mayWrite(script string) bool {
	var buf [1024]byte
	b := buf[:0]
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '>':
			return true
		case c == '\'' || c == '"':
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
	for i := range b {
		for _, n := range byFirst[b[i]] {
			if len(b)-i >= len(n) && string(b[i:i+len(n)]) == n {
				return true
			}
		}
	}
	return false
}
