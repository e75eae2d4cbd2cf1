// Package shellcmd recognises shell commands that change files in ways no
// tool call records: redirections, tee, sed -i, rm, mv, cp, formatters. Such
// commands cannot be replayed faithfully; sandbox reports them so that no
// write is ever silently ignored.
//
// The recogniser is a small tokenizer that honours quotes and skips heredoc
// bodies, so "echo 'a > b'" or a ">" inside a heredoc is not taken for a
// redirection.
package shellcmd

import (
	"path"
	"strings"
)

// Write is what a command is seen to write.
type Write struct {
	// Targets are the files the command names as written, as written in the
	// command (relative to its cwd). Empty when they cannot be told.
	Targets []string
	// Verbs are the reasons, e.g. "redirect", "sed -i", "rm".
	Verbs []string
	// Heredocs maps a target of "cat <<'X' > target" (quoted delimiter, so
	// no expansion) to the exact content written.
	Heredocs map[string]string
	// Appends maps a target of "cat <<'X' >> target" to the content appended.
	Appends map[string]string
}

type token struct {
	text string
	op   bool // an operator: ; && || | & > >> < << ( ) newline
	body string
	hd   bool // a heredoc delimiter word; body holds its content
	lit  bool // heredoc delimiter was quoted (no expansion)
}

// Detect reports whether script writes files, and what.
func Detect(script string) (Write, bool) {
	var w Write
	dir := ""
	for _, cmd := range commands(tokenize(script)) {
		// Follow "cd DIR" so that later relative targets are seen from DIR.
		if len(cmd) == 2 && !cmd[0].op && cmd[0].text == "cd" && !cmd[1].op {
			dir = joinDir(dir, cmd[1].text)
			continue
		}
		before := len(w.Targets)
		detectOne(cmd, &w)
		if dir != "" {
			for i := before; i < len(w.Targets); i++ {
				w.Targets[i] = joinDir(dir, w.Targets[i])
			}
			w.Heredocs = rebase(w.Heredocs, dir)
			w.Appends = rebase(w.Appends, dir)
		}
	}
	return w, len(w.Verbs) > 0
}

var writers = map[string]string{
	"tee": "tee", "rm": "rm", "mv": "mv", "cp": "cp", "touch": "touch", "truncate": "truncate",
	"dd": "dd", "install": "install", "ln": "ln", "unlink": "unlink", "patch": "patch", "rsync": "rsync",
	"gofmt": "", "rustfmt": "rustfmt", "black": "black", "prettier": "", "eslint": "", "cargo": "", "go": "",
	"git": "", "sed": "", "perl": "", "python": "", "python3": "", "node": "", "ruby": "", "npx": "",
}

func detectOne(argv []token, w *Write) {
	var words []string
	for i := 0; i < len(argv); i++ {
		t := argv[i]
		if t.op && (t.text == ">" || t.text == ">>" || t.text == ">|" || t.text == "&>") {
			if i+1 < len(argv) && !argv[i+1].op {
				target := argv[i+1].text
				i++
				if strings.HasPrefix(target, "/dev/") || strings.HasPrefix(target, "&") {
					continue
				}
				w.add("redirect", target)
				if (t.text == ">" || t.text == ">>") && len(words) == 1 && words[0] == "cat" {
					for _, h := range argv {
						if h.hd && h.lit {
							m := &w.Heredocs
							if t.text == ">>" {
								m = &w.Appends
							}
							if *m == nil {
								*m = map[string]string{}
							}
							(*m)[target] = h.body
						}
					}
				}
			}
			continue
		}
		if t.op || t.hd {
			continue
		}
		words = append(words, t.text)
	}
	// Skip env assignments and wrappers.
	for len(words) > 0 && (strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") ||
		words[0] == "sudo" || words[0] == "env" || words[0] == "command" || words[0] == "time" || words[0] == "nohup") {
		words = words[1:]
	}
	if len(words) == 0 {
		return
	}
	name := path.Base(words[0])
	args := words[1:]
	verb, known := writers[name]
	if !known {
		return
	}
	files := nonFlags(args)
	switch name {
	case "tee", "rm", "touch", "truncate", "unlink", "rustfmt", "black":
		w.add(verb, files...)
	case "mv", "cp", "install", "ln", "rsync":
		w.add(verb, files...)
	case "dd":
		for _, a := range args {
			if of, ok := strings.CutPrefix(a, "of="); ok {
				w.add("dd", of)
			}
		}
	case "patch":
		w.add("patch")
	case "sed", "perl":
		for _, a := range args {
			if strings.HasPrefix(a, "-i") || (name == "perl" && strings.HasPrefix(a, "-p") && strings.Contains(a, "i")) ||
				a == "--in-place" || strings.HasPrefix(a, "--in-place=") {
				w.add(name+" -i", lastNonFlags(args, name)...)
				return
			}
		}
	case "gofmt", "prettier", "eslint":
		for _, a := range args {
			if a == "-w" || a == "--write" || a == "--fix" {
				w.add(name+" "+a, nonFlags(args)...)
				return
			}
		}
	case "cargo":
		if len(args) > 0 && (args[0] == "fmt" || args[0] == "fix") {
			w.add("cargo " + args[0])
		}
	case "go":
		if len(args) > 0 && (args[0] == "fmt" || args[0] == "generate" || (args[0] == "mod" && len(args) > 1 && args[1] == "tidy") || args[0] == "get") {
			w.add("go " + args[0])
		}
	case "git":
		if len(args) > 0 {
			switch args[0] {
			case "checkout", "restore", "apply", "am", "reset", "stash", "mv", "rm", "merge", "rebase", "pull", "cherry-pick", "revert":
				w.add("git " + args[0])
			}
		}
	case "python", "python3", "node", "ruby", "npx":
		all := strings.Join(args, " ")
		for _, h := range argv {
			if h.hd {
				all += "\n" + h.body
			}
		}
		for _, m := range []string{".write(", "write_text(", "write_bytes(", "writeFile", "File.write", "os.remove", "unlink(", "shutil.", "rename("} {
			if strings.Contains(all, m) {
				w.add(name + " script")
				return
			}
		}
	}
}

func (w *Write) add(verb string, targets ...string) {
	w.Verbs = append(w.Verbs, verb)
	for _, t := range targets {
		if t != "" && !containsStr(w.Targets, t) {
			w.Targets = append(w.Targets, t)
		}
	}
}

func rebase(m map[string]string, dir string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for t, body := range m {
		out[joinDir(dir, t)] = body
	}
	return out
}

func joinDir(dir, p string) string {
	if dir == "" || strings.HasPrefix(p, "/") {
		return p
	}
	return path.Join(dir, p)
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func nonFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// lastNonFlags returns the files of a sed/perl command: its non-flag
// arguments, less the script (the argument of -e, or else the first one).
func lastNonFlags(args []string, _ string) []string {
	var files []string
	hasE := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--expression" || a == "-f":
			hasE = true
			i++
		case strings.HasPrefix(a, "-"):
			if strings.HasSuffix(a, "e") && (strings.HasPrefix(a, "-p") || strings.HasPrefix(a, "-n")) {
				hasE = true // perl -pie / -ne bundles: the next argument is the script
				i++
			}
		default:
			files = append(files, a)
		}
	}
	if !hasE && len(files) > 0 {
		files = files[1:]
	}
	return files
}

// commands splits tokens into simple commands at ; && || | & and newlines.
func commands(toks []token) [][]token {
	var out [][]token
	var cur []token
	for _, t := range toks {
		if t.op && (t.text == ";" || t.text == "&&" || t.text == "||" || t.text == "|" || t.text == "&" || t.text == "\n" || t.text == "(" || t.text == ")") {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// tokenize splits a script into words and operators, honouring quotes and
// collecting heredoc bodies (which follow the line that opens them).
func tokenize(s string) []token {
	var toks []token
	var pending []int // indexes of heredoc delimiter tokens awaiting bodies
	var word strings.Builder
	inWord := false
	quoted := false
	flush := func() {
		if inWord {
			toks = append(toks, token{text: word.String(), lit: quoted})
			word.Reset()
			inWord, quoted = false, false
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord, quoted = true, true
			i += j + 2
			continue
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				word.WriteByte(s[j])
				j++
			}
			inWord, quoted = true, true
			i = j + 1
			continue
		case c == '\\' && i+1 < len(s):
			if s[i+1] != '\n' {
				word.WriteByte(s[i+1])
				inWord = true
			}
			i += 2
			continue
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == ' ' || c == '\t':
			flush()
		case c == '\n':
			flush()
			toks = append(toks, token{text: "\n", op: true})
			i++
			// Heredoc bodies start on the line after the one that opened them.
			for _, k := range pending {
				body, n := readBody(s[i:], toks[k].text)
				toks[k].body = body
				i += n
			}
			pending = pending[:0]
			continue
		case strings.IndexByte(";&|<>()", c) >= 0:
			flush()
			op := string(c)
			for _, two := range []string{"&&", "||", ">>", "<<", ">|", "&>"} {
				if strings.HasPrefix(s[i:], two) {
					op = two
					break
				}
			}
			if op == ">" && i > 0 && s[i-1] >= '0' && s[i-1] <= '9' && len(toks) > 0 && !toks[len(toks)-1].op {
				// "2>" redirects a descriptor; drop the number word.
				last := toks[len(toks)-1].text
				if strings.Trim(last, "0123456789") == "" {
					toks = toks[:len(toks)-1]
				}
			}
			i += len(op)
			if op == "<<" {
				if i < len(s) && s[i] == '-' {
					i++
				}
				for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
					i++
				}
				start := len(toks)
				// read the delimiter word
				j := i
				var d strings.Builder
				lit := false
				for j < len(s) && strings.IndexByte(" \t\n;&|<>()", s[j]) < 0 {
					if s[j] == '\'' || s[j] == '"' {
						lit = true
					} else {
						d.WriteByte(s[j])
					}
					j++
				}
				i = j
				toks = append(toks, token{text: d.String(), hd: true, lit: lit})
				pending = append(pending, start)
				continue
			}
			toks = append(toks, token{text: op, op: true})
			continue
		default:
			word.WriteByte(c)
			inWord = true
		}
		i++
	}
	flush()
	return toks
}

func readBody(s, delim string) (string, int) {
	var b strings.Builder
	n := 0
	for n < len(s) {
		line, _, found := strings.Cut(s[n:], "\n")
		adv := len(line)
		if found {
			adv++
		}
		n += adv
		if strings.TrimLeft(line, "\t") == delim {
			return b.String(), n
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), n
}
