package jsonl

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/manifest/shellcmd"
)

// salvageLimit is how much of a lost line is searched for the files it
// names: a tool call's path comes before its content in every format, and
// an apply_patch names a file before each of its parts; past this much, a
// search would cost more than the line is likely to tell.
const salvageLimit = 16 << 20

// maxNames bounds the names kept of one lost line.
const maxNames = 4096

// Vocabulary is what one agent's transcripts call the parts of a tool call
// a lost line is searched for. Each agent declares its own
// (agent.About.Lost), and the registry teaches them to this package as the
// agents register (Learn): a lost line is searched with all of them, since
// it is lost before anything says whose it is.
type Vocabulary struct {
	PathKeys    []string // keys whose string values name files ("file_path")
	CommandKeys []string // keys whose values are shell commands, as a string or an argv
	WorkdirKeys []string // keys whose values are a call's working directory (relative paths resolve under it)
	ToolKeys    []string // keys whose values name a call's tool
	CallTypes   []string // values of "type" that make a record a tool call ("tool_use")
	HolderTypes []string // values of "type" of the records that hold a call ("assistant")
	WriteTools  []string // tools (lower case) whose calls the agent's parser replays as file changes
	WriteTypes  []string // values of "type" of calls that always write (a shell call of its own type)
	PatchTools  []string // tools (lower case) that take an apply_patch text
	// ArgumentKeys are keys whose string values hold the call's arguments
	// as JSON text: keys inside that text are looked for too.
	ArgumentKeys []string
}

// vocabulary is what Learn was taught, merged. It is written as the agents
// register (package initialisation) and only read after.
var vocabulary struct {
	Vocabulary
	callMarkers [][]byte // CallTypes, quoted
	writeTypes  [][]byte // "type":"…" of WriteTypes
	writeTools  map[string]bool
	stringArgs  *regexp.Regexp // finds where a key of ArgumentKeys holds a string
}

// Learn adds an agent's vocabulary to what lost lines are searched with.
// Keys keep the order they were first learnt in: a line's names are listed
// key by key.
func Learn(v Vocabulary) {
	w := &vocabulary.Vocabulary
	for _, m := range []struct{ to, from *[]string }{{&w.PathKeys, &v.PathKeys}, {&w.CommandKeys, &v.CommandKeys},
		{&w.WorkdirKeys, &v.WorkdirKeys}, {&w.ToolKeys, &v.ToolKeys}, {&w.CallTypes, &v.CallTypes},
		{&w.HolderTypes, &v.HolderTypes}, {&w.WriteTools, &v.WriteTools}, {&w.WriteTypes, &v.WriteTypes},
		{&w.PatchTools, &v.PatchTools}, {&w.ArgumentKeys, &v.ArgumentKeys}} {
		for _, k := range *m.from {
			if !slices.Contains(*m.to, k) {
				*m.to = append(*m.to, k)
			}
		}
	}
	vocabulary.callMarkers, vocabulary.writeTypes = nil, nil
	for _, t := range w.CallTypes {
		vocabulary.callMarkers = append(vocabulary.callMarkers, []byte(`"`+t+`"`))
	}
	for _, t := range w.WriteTypes {
		vocabulary.writeTypes = append(vocabulary.writeTypes, []byte(`"type":"`+t+`"`))
	}
	vocabulary.writeTools = map[string]bool{}
	for _, t := range w.WriteTools {
		vocabulary.writeTools[strings.ToLower(t)] = true
	}
	vocabulary.stringArgs = nil
	if len(w.ArgumentKeys) > 0 {
		quoted := make([]string, len(w.ArgumentKeys))
		for i, k := range w.ArgumentKeys {
			quoted[i] = regexp.QuoteMeta(k)
		}
		vocabulary.stringArgs = regexp.MustCompile(`"(?:` + strings.Join(quoted, "|") + `)"\s*:\s*"`)
	}
}

// typeKeys are the keys whose values type a record.
var typeKeys = []string{"type"}

// patchHeader finds where a file an apply_patch text names begins.
var patchHeader = regexp.MustCompile(`\*\*\* (?:Add File|Update File|Delete File|Move to): `)

// valueWindow bounds how far past its key a value is looked for: a value
// longer than that (a path is at most 4096 bytes; a command may be a long
// heredoc) is read as far as the window goes, so the search costs what the
// keys' values do, not the line's length times the number of keys.
const valueWindow = 1 << 20

// names returns the file paths a line that could not be read mentions, as
// written (relative ones are the caller's to resolve, but for those under
// a Codex call's workdir): the values of path keys, the files the shell
// commands it holds write, and the files of apply_patch headers, also
// inside JSON held in a string (a Codex call's arguments), in its first
// 16 MiB. It is a search, not a parse: a name may belong to a call that
// only read the file or never ran; what it is for is saying which files a
// lost line may have changed.
//
// unnamed reports a line that holds a call which may have changed files
// it does not name: a call to a tool that writes (or whose tool is cut
// off) whose path, command or patch header is cut inside itself, or is
// missing altogether (the line was cut before it). A command cut short
// still names what its whole commands before the cut write.
func names(line []byte) (names []string, unnamed bool) {
	if len(line) > salvageLimit {
		line = line[:salvageLimit]
	}
	// named: a path, command or header was found; cut: one of them, or
	// a workdir they resolve under, is cut.
	named, cut := false, false
	workdir := ""
	for _, v := range values(line, vocabulary.WorkdirKeys) {
		if !v.whole {
			cut = true
		} else if path.IsAbs(v.s) {
			workdir = v.s
		}
	}
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" || len(p) > 4096 || len(names) >= maxNames || strings.ContainsAny(p, "\x00\n") {
			return
		}
		if workdir != "" && !path.IsAbs(p) {
			p = path.Join(workdir, p)
		}
		if !seen[p] {
			seen[p] = true
			names = append(names, p)
		}
	}
	for _, v := range values(line, vocabulary.PathKeys) {
		named = true
		if v.whole {
			add(v.s)
		} else {
			cut = true
		}
	}
	for _, c := range commands(line) {
		named = true
		cut = cut || !c.whole
		if len(names) >= maxNames {
			continue // what is left to learn is whether one is cut
		}
		script := c.s
		if !c.whole {
			script = wholeWords(script)
		}
		for _, e := range shellcmd.Parse(script).Effects {
			if e.Kind != shellcmd.Dir && e.Kind != shellcmd.Task { // a task's path is where it runs
				for _, p := range e.Paths {
					add(p)
				}
			}
		}
	}
	writes, tools := writeCall(line)
	if slices.ContainsFunc(tools, func(t string) bool { return slices.Contains(vocabulary.PatchTools, t) }) && bytes.Contains(line, []byte("*** Begin Patch")) {
		// A patch cut before its end may name more files past the cut.
		named = true
		cut = cut || !bytes.Contains(line, []byte("*** End Patch"))
	}
	for _, loc := range patchHeader.FindAllIndex(line, -1) {
		named = true
		if name, whole := headerName(line[loc[1]:]); whole {
			add(name)
		} else {
			cut = true
		}
	}
	return names, (cut || !named) && writes
}

// writeCall reports a line that holds a tool call to a tool that writes,
// or one whose tool's name is cut off, and the names (lower case) of the
// tools it calls.
func writeCall(line []byte) (writes bool, tools []string) {
	call := false
	for _, m := range vocabulary.callMarkers {
		if bytes.Contains(line, m) {
			call = true
			break
		}
	}
	for _, m := range vocabulary.writeTypes {
		if bytes.Contains(line, m) {
			return true, nil
		}
	}
	if !call {
		// A line cut inside a type that may be a call's ("type":"too)
		// may be one.
		for _, v := range values(line, typeKeys) {
			if !v.whole && (slices.ContainsFunc(vocabulary.CallTypes, func(t string) bool { return strings.HasPrefix(t, v.s) }) ||
				slices.ContainsFunc(vocabulary.HolderTypes, func(t string) bool { return strings.HasPrefix(t, v.s) })) {
				return true, nil
			}
		}
		return false, nil
	}
	named := false
	for _, v := range values(line, vocabulary.ToolKeys) {
		if !v.whole {
			writes = true
			continue
		}
		named = true
		t := strings.ToLower(v.s)
		tools = append(tools, t)
		writes = writes || vocabulary.writeTools[t]
	}
	return writes || !named, tools
}

// found is a string value found after a key: decoded, and whole unless the
// line (or the window) ends inside it.
type found struct {
	s     string
	whole bool
}

// values returns the string values of keys, in the line and in JSON held
// in its strings, found from each key's occurrences.
func values(line []byte, keys []string) []found {
	var out []found
	each(line, keys, func(rest []byte, in bool) {
		t := text(rest, in)
		if c, ok := skipSpace(t); !ok || c != ':' {
			return
		}
		if c, ok := skipSpace(t); ok && c == '"' {
			out = append(out, readString(t))
		}
	})
	return out
}

// each calls fn with what follows every occurrence of a key ("key" in the
// line, \"key\" in JSON held in a string), at most valueWindow of it. Keys
// in JSON held in a string are looked for only in a line whose call holds
// its arguments so (Codex's "arguments":"{…}"): elsewhere such a string is
// a file's content or a command's output, whose keys name nothing.
func each(line []byte, keys []string, fn func(rest []byte, in bool)) {
	levels := []bool{false}
	if vocabulary.stringArgs != nil && vocabulary.stringArgs.Match(line) {
		levels = append(levels, true)
	}
	for _, k := range keys {
		for _, in := range levels {
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

// commands returns the shell scripts a line's command keys hold: a string,
// or an argv (["bash", "-lc", script] gives the script; any other its
// words joined). A script is whole unless the line ends inside it.
func commands(line []byte) []found {
	var out []found
	each(line, vocabulary.CommandKeys, func(rest []byte, in bool) {
		t := text(rest, in)
		if c, ok := skipSpace(t); !ok || c != ':' {
			return
		}
		c, ok := skipSpace(t)
		if !ok {
			return
		}
		switch c {
		case '"':
			out = append(out, readString(t))
		case '[':
			var words []found
			whole := false // the argv's closing bracket was read
			for {
				c, ok := skipSpace(t)
				if !ok || c != '"' {
					whole = ok && c == ']'
					break
				}
				w := readString(t)
				words = append(words, w)
				if !w.whole {
					break
				}
				if c, ok = skipSpace(t); !ok || c != ',' {
					whole = ok && c == ']'
					break
				}
			}
			if len(words) >= 3 && (words[1].s == "-lc" || words[1].s == "-c") {
				// The script is whole when its own string is: what follows
				// it in the argv changes nothing it ran.
				out = append(out, words[2])
			} else if len(words) > 0 {
				s := make([]string, len(words))
				for i, w := range words {
					s[i] = w.s
				}
				out = append(out, found{strings.Join(s, " "), whole})
			}
		}
	})
	return out
}

// wholeWords returns what a cut script ran to its last whole word, without
// an operator or redirection the cut left with nothing after it (rm a &&,
// echo x >, rm a 0<), with the file descriptor of such a redirection. A
// blank or operator escaped by a backslash is part of a word (>a\&b), not
// its end.
func wholeWords(s string) string {
	const seps = " \t\r\n;&|<>" // a lone CR is a blank to the shell parser
	unescaped := func(i int) bool {
		j := i
		for j > 0 && s[j-1] == '\\' {
			j--
		}
		return (i-j)%2 == 0
	}
	// Back to the last separator that ends a word.
	i := len(s) - 1
	for i >= 0 && !(strings.IndexByte(seps, s[i]) >= 0 && unescaped(i)) {
		i--
	}
	s = s[:i+1]
	for len(s) > 0 && strings.IndexByte(seps, s[len(s)-1]) >= 0 && unescaped(len(s)-1) {
		c := s[len(s)-1]
		s = s[:len(s)-1]
		if c == '<' || c == '>' {
			// Digits right before a redirection are its file descriptor
			// (rm a 0<f, 2>), not a word.
			j := len(s)
			for j > 0 && '0' <= s[j-1] && s[j-1] <= '9' {
				j--
			}
			if j < len(s) && (j == 0 || strings.IndexByte(seps, s[j-1]) >= 0 && unescaped(j-1)) {
				s = s[:j]
			}
		}
	}
	return s
}

// A stream yields the bytes of a lost line's text at one level of JSON
// quoting: the line itself, or the body of a string in it, decoded.
type stream interface {
	// next returns the next byte, or false at the end of the text.
	next() (byte, bool)
}

// raw streams bytes as they are.
type raw struct {
	b []byte
	i int
}

func (r *raw) next() (byte, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	r.i++
	return r.b[r.i-1], true
}

// body decodes the body of a JSON string from the stream under it, which
// stands after its opening quote; its text ends at the closing quote
// (closed), at the end of the stream under it, or at a bad escape.
type body struct {
	s      stream
	pend   []byte // decoded bytes of a \u escape not yet returned
	done   bool
	closed bool
}

func (d *body) next() (byte, bool) {
	if len(d.pend) > 0 {
		c := d.pend[0]
		d.pend = d.pend[1:]
		return c, true
	}
	if d.done {
		return 0, false
	}
	c, ok := d.s.next()
	switch {
	case !ok:
	case c == '"':
		d.closed = true
	case c != '\\':
		return c, true
	default:
		e, ok := d.s.next()
		if !ok {
			break
		}
		switch e {
		case '"', '\\', '/':
			return e, true
		case 'b':
			return '\b', true
		case 'f':
			return '\f', true
		case 'n':
			return '\n', true
		case 'r':
			return '\r', true
		case 't':
			return '\t', true
		case 'u':
			r, ok := d.hex()
			if !ok {
				break
			}
			if utf16.IsSurrogate(r) {
				// A pair is two escapes; a lone half is U+FFFD, as
				// encoding/json decodes it.
				r2 := utf8.RuneError
				if c, ok := d.s.next(); ok && c == '\\' {
					if c, ok := d.s.next(); ok && c == 'u' {
						if lo, ok := d.hex(); ok {
							r2 = utf16.DecodeRune(r, lo)
						}
					}
				}
				r = r2
			}
			d.pend = utf8.AppendRune(d.pend[:0], r)
			return d.next()
		}
	}
	d.done = true
	return 0, false
}

// hex reads the four hex digits of a \u escape.
func (d *body) hex() (rune, bool) {
	var r rune
	for range 4 {
		c, ok := d.s.next()
		if !ok {
			return 0, false
		}
		h := unhex(c)
		if h < 0 {
			return 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, true
}

// text is what follows a key: the line's bytes, or, for a key in JSON held
// in a string, that string's body decoded.
func text(rest []byte, in bool) stream {
	var s stream = &raw{b: rest}
	if in {
		s = &body{s: s}
	}
	return s
}

// skipSpace returns the next byte of s that is not JSON whitespace.
func skipSpace(s stream) (byte, bool) {
	for {
		c, ok := s.next()
		if !ok || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return c, ok
		}
	}
}

// readString reads a string's body from s, which stands after its opening
// quote.
func readString(s stream) found {
	d := &body{s: s}
	var b []byte
	for {
		c, ok := d.next()
		if !ok {
			break
		}
		b = append(b, c)
	}
	return found{string(b), d.closed}
}

// headerName reads the file name after an apply_patch header up to the
// end of its line, which in a transcript is an escaped newline (\n in a
// JSON string, \\n in JSON held in one) or the end of the string, and
// decodes its escapes; whole is false when the line ends first.
func headerName(b []byte) (name string, whole bool) {
	end := len(b)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\n' || c == '"' {
			end, whole = i, true
			break
		}
		if c == '\\' {
			j := i
			for j < len(b) && b[j] == '\\' {
				j++
			}
			if j < len(b) && (b[j] == 'n' || b[j] == 'r' || b[j] == '"') && (j-i == 1 || j-i == 2 || b[j] == '"') {
				end, whole = i, true
				break
			}
			i = j - 1 + min(1, len(b)-j) // the escaped byte goes with its backslashes
		}
	}
	name = string(b[:end])
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
	return name, whole
}

// unquote decodes the body of a JSON string (String, without the quotes).
func unquote(s string) (string, bool) {
	v, ok := String([]byte(`"` + s + `"`))
	return string(v), ok
}

// Learnt returns what Learn was taught, merged.
func Learnt() Vocabulary { return vocabulary.Vocabulary }
