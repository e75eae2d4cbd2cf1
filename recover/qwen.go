package recover

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/manifest"
)

func init() {
	editRules[manifest.RuleQwen] = (*Reconstructor).qwenEdit
	writeRules[manifest.RuleQwen] = (*Reconstructor).qwenWrite
}

// qwenWrite replays a Qwen Code write_file: the content as sent, given the
// line endings and BOM of the file it overwrites (Qwen Code keeps them, as
// its edits do; a new file is written as sent).
func (r *Reconstructor) qwenWrite(op *manifest.Op) {
	if op.Content == nil || len(op.Paths) == 0 {
		return
	}
	f := r.file(op.Paths[0], op, false)
	if !f.cur.Known {
		r.created(f)
	}
	crlf := f.crlf || f.cur.Exists && strings.Contains(f.cur.Text, "\r\n")
	bom := f.cur.Exists && strings.HasPrefix(f.cur.Text, "\uFEFF")
	text := *op.Content
	if crlf {
		text = lf(text)
	}
	if bom && !strings.HasPrefix(text, "\uFEFF") {
		text = "\uFEFF" + text
	}
	r.writeWhole(f, text)
	f.crlf = crlf
}

// qwenEdit replays a Qwen Code edit with its own rules (applyQwenEdit).
// What Qwen Code recorded after the call (resultDisplay.newContent) is
// adopted afterwards as evidence: a replay it contradicts is drift.
func (r *Reconstructor) qwenEdit(op *manifest.Op) {
	if len(op.Edits) == 0 {
		return
	}
	e := op.Edits[0]
	f := r.file(op.Paths[0], op, e.Old != "")
	if e.Old == "" && !f.cur.Known {
		r.created(f) // created by the call: absent before, as far as anyone knows
	}
	f.res.Ops++
	f.remember()
	var out string
	var err error
	switch {
	case e.Old == "" && (!f.cur.Known || !f.cur.Exists):
		out = e.New // a missing file is created from new_string, as sent
	case !f.cur.Known:
		err = fmt.Errorf("its content before the edit is unknown (no evidence in the transcript, no host copy)")
	case !f.cur.Exists:
		err = fmt.Errorf("the host has no copy to start from (--base DIR can point at the files as they were when the session started)")
	default:
		if strings.Contains(f.cur.Text, "\r\n") && !f.crlf {
			// Qwen Code edits the text with CRLF turned into LF and puts
			// CRLF back on every line when it writes.
			f.crlf, f.cur.Text = true, lf(f.cur.Text)
		}
		var loose bool
		out, loose, err = applyQwenEdit(f.cur.Text, e)
		if err == nil && loose && !f.faithful() {
			f.res.Fuzz = append(f.res.Fuzz, where(op)+": old_string matched by Qwen Code's tolerant pass (Unicode quotes, dashes and spaces, trailing whitespace) on the host's copy")
		}
		if err != nil && !f.pinned && reversible(f.cur.Text, op.Edits, func(text string, e []manifest.Edit) bool { _, _, err := applyQwenEdit(text, e[0]); return err == nil }) {
			out, err = f.cur.Text, nil
			f.res.Notes = append(f.res.Notes, where(op)+": the host copy already has this change")
		}
	}
	if err != nil {
		f.res.Reason = fmt.Sprintf("%s: edited by the agent, but %v", where(op), err)
		if f.pinned && f.cur.Known && f.cur.Exists {
			f.res.Drift = append(f.res.Drift, f.res.Reason)
		}
		f.cur, f.pinned = Content{}, false
		return
	}
	if e.Old == "" {
		f.pinned, f.guess = true, false
	}
	f.cur = Content{Known: true, Exists: true, Text: out}
	f.remember()
}

// applyQwenEdit applies one Qwen Code edit to LF text (docs/formats/qwen.md
// §5): a BOM is kept aside; old_string is first made the slice of the file
// it stands for (qwenSlice), a deletion takes the newline after its text
// along, and then it must occur once (or any number of times with
// replace_all), differ from new_string, and change the file; every
// occurrence is replaced literally. loose says old_string was found only
// past the literal match.
func applyQwenEdit(text string, e manifest.Edit) (out string, loose bool, err error) {
	bom := ""
	if strings.HasPrefix(text, "\uFEFF") {
		bom, text = "\uFEFF", text[len("\uFEFF"):]
	}
	old, repl := e.Old, e.New
	if old == "" {
		return "", false, fmt.Errorf("an empty old_string on an existing file: Qwen Code refuses to create a file that exists")
	}
	if slice, trimmed, ok := qwenSlice(text, old); ok {
		loose = slice != old
		old = slice
		if trimmed {
			repl = trimFinalNewline(repl)
		}
	}
	if repl == "" && !strings.HasSuffix(old, "\n") && strings.Contains(text, old+"\n") {
		old += "\n"
	}
	n := 0
	if old != "" {
		n = strings.Count(text, old)
	}
	switch {
	case n == 0:
		return "", loose, fmt.Errorf("old_string not found, literally or by Qwen Code's tolerant pass: %q", firstLine(e.Old))
	case n > 1 && !e.ReplaceAll:
		return "", loose, fmt.Errorf("old_string occurs %d times and replace_all is false: Qwen Code refuses to pick one", n)
	case old == repl:
		return "", loose, fmt.Errorf("old_string and new_string are identical: Qwen Code reports no change")
	}
	out = strings.ReplaceAll(text, old, repl)
	if out == text {
		return "", loose, fmt.Errorf("the replacement changes nothing: Qwen Code reports no change")
	}
	return bom + out, loose, nil
}

// trimFinalNewline drops one line end from the end of s.
func trimFinalNewline(s string) string {
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		return t
	}
	if strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\r") {
		return s[:len(s)-1]
	}
	return s
}

// qwenSlice finds the slice of text that old_string stands for, as Qwen
// Code's normalizeEditStrings does: the literal text; else the same place
// once both are put through unicodePunct (the slice keeps the file's own
// characters); else a run of whole lines equal as they are, or with
// trailing whitespace dropped, or with unicodePunct too; else, when
// old_string ends with an empty line, the same without it (trimmed: the
// final newline of new_string is dropped too).
func qwenSlice(text, old string) (slice string, trimmed, ok bool) {
	if strings.Contains(text, old) {
		return old, false, true
	}
	if nt, no := unicodePunct.Replace(text), unicodePunct.Replace(old); nt != text || no != old {
		if i := strings.Index(nt, no); i >= 0 {
			// The map is one character for one: the match's characters are
			// counted in the mapped text and taken from the original.
			start := runeOffset(text, utf8.RuneCountInString(nt[:i]))
			end := start + runeOffset(text[start:], utf8.RuneCountInString(old))
			return text[start:end], false, true
		}
	}
	lines := strings.Split(text, "\n")
	offsets := make([]int, len(lines)+1)
	for i, l := range lines {
		offsets[i+1] = offsets[i] + len(l) + 1
	}
	offsets[len(lines)] = len(text)
	pattern := strings.Split(old, "\n")
	nl := strings.HasSuffix(old, "\n")
	cut := func(start, count int, withNewline bool) string {
		if count == 0 {
			if withNewline {
				return "\n"
			}
			return ""
		}
		last := start + count - 1
		end := offsets[last] + len(lines[last])
		if withNewline {
			end = offsets[start+count]
		}
		return text[offsets[start]:end]
	}
	if at, ok := seekLines(lines, pattern); ok {
		n := len(pattern)
		if nl {
			n--
		}
		return cut(at, n, nl), false, true
	}
	if pattern[len(pattern)-1] == "" && len(pattern) > 1 {
		pattern = pattern[:len(pattern)-1]
		if at, ok := seekLines(lines, pattern); ok {
			return cut(at, len(pattern), false), true, true
		}
	}
	return "", false, false
}

// seekLines finds the first run of lines equal to pattern as they are,
// else with trailing whitespace dropped, else with unicodePunct too.
func seekLines(lines, pattern []string) (int, bool) {
	passes := []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, jsSpace) },
		func(s string) string { return strings.TrimRight(unicodePunct.Replace(s), jsSpace) },
	}
	for _, pass := range passes {
	outer:
		for i := 0; i+len(pattern) <= len(lines); i++ {
			for j, p := range pattern {
				if pass(lines[i+j]) != pass(p) {
					continue outer
				}
			}
			return i, true
		}
	}
	return 0, false
}

// runeOffset is the byte offset of the n-th character of s.
func runeOffset(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}
