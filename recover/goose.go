package recover

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/agentsandbox/sandbox/manifest"
)

func init() { editRules[manifest.RuleGoose] = (*Reconstructor).gooseEdit }

// The tools parse/goose gives Goose's edits, by op.Tool: the developer
// extension's text_editor commands (str_replace, insert, undo_edit) and the
// platform developer extension's exact edit.
const (
	gooseReplace = "str_replace"
	gooseInsert  = "insert"
	gooseUndo    = "undo_edit"
	gooseExact   = "edit"
)

// gooseEdit replays a Goose edit with Goose's own rules
// (docs/formats/goose.md, "Edit semantics"): a text_editor str_replace or
// insert (which Goose writes back with LF line endings, no byte order mark
// and a final newline), an undo_edit of the last of them on the file, and
// the newer developer extension's edit (exact, unique, nothing
// normalised). Goose records no content after an edit: the replay is all
// there is, and a fuzzy match Goose would have made is reported.
func (r *Reconstructor) gooseEdit(op *manifest.Op) {
	if op.Tool == gooseUndo {
		r.gooseUndoEdit(op)
		return
	}
	if len(op.Edits) == 0 {
		return
	}
	f := r.file(op.Paths[0], op, true)
	f.res.Ops++
	f.remember()
	if op.Tool != gooseExact {
		// Goose saves the file as it was before the edit, for undo_edit:
		// what it saved is what the replay holds now (unknown, if so).
		f.undo = append(f.undo, gooseSaved{cur: f.cur, pinned: f.pinned, guess: f.guess, crlf: f.crlf, stale: f.stale})
	}
	switch {
	case !f.cur.Known:
		f.cur, f.pinned = Content{}, false
		f.res.Reason = where(op) + ": edited by the agent, but its content before the edit is unknown (no evidence in the transcript, no host copy)"
		return
	case !f.cur.Exists:
		f.cur, f.pinned = Content{}, false
		f.res.Reason = where(op) + ": edited by the agent, but the host has no copy to start from " +
			"(--base DIR can point at the files as they were when the session started)"
		return
	}
	e := op.Edits[0]
	var out string
	var fuzzy bool
	var err error
	switch {
	case op.Tool == gooseExact && f.crlf:
		// The edit matches the file's bytes, CRLF included; the file keeps
		// them.
		out, err = applyGooseExact(f.output(f.cur).Text, e)
		out = lf(out)
	case op.Tool == gooseExact:
		out, err = applyGooseExact(f.cur.Text, e)
	case e.InsertLine != nil:
		out, err = applyGooseInsert(f.cur.Text, *e.InsertLine, e.New)
	default:
		out, fuzzy, err = applyGooseReplace(f.cur.Text, e)
	}
	if err != nil {
		f.res.Reason = fmt.Sprintf("%s: the edit would not apply: %v", where(op), err)
		if f.pinned {
			f.res.Drift = append(f.res.Drift, f.res.Reason)
		}
		f.cur, f.pinned = Content{}, false
		return
	}
	if fuzzy {
		f.res.Fuzz = append(f.res.Fuzz, where(op)+": old_str matched by Goose's fuzzy pass (trailing whitespace, quotes, dashes, spaces normalised), as Goose since 2026 does; the whole file takes that normalisation")
	}
	if op.Tool != gooseExact {
		// Goose writes the file with the platform's line endings.
		f.crlf = gooseWindows(op.Paths[0])
	}
	f.cur = Content{Known: true, Exists: true, Text: out}
	f.remember()
}

// gooseUndoEdit replays undo_edit: the file goes back to what it held
// before the last str_replace or insert on it that the replay went
// through. Goose keeps that history in the memory of its process; a
// session resumed in a new process starts with none, which the replay does
// not tell (it keeps the history across the whole replay).
func (r *Reconstructor) gooseUndoEdit(op *manifest.Op) {
	f := r.file(op.Paths[0], op, true)
	f.res.Ops++
	f.remember()
	if len(f.undo) == 0 {
		f.cur, f.pinned = Content{}, false
		f.res.Reason = where(op) + ": undo_edit restored an edit the replay did not go through (made before the transcript, or in a part of it not read): the content is unknown"
		return
	}
	saved := f.undo[len(f.undo)-1]
	f.undo = f.undo[:len(f.undo)-1]
	f.cur, f.pinned, f.guess, f.crlf, f.stale = saved.cur, saved.pinned, saved.guess, saved.crlf, saved.stale
	if !f.cur.Known {
		f.res.Reason = where(op) + ": undo_edit restored the content before an edit, which was unknown"
	}
	f.remember()
}

// gooseSaved is a file's replayed state before an edit: what undo_edit
// restores.
type gooseSaved struct {
	cur                 Content
	pinned, guess, crlf bool
	stale               string
}

// gooseWindows reports whether a path is a Windows one (a drive letter, or
// backslashes): Goose there writes CRLF line endings.
func gooseWindows(p string) bool {
	return len(p) >= 2 && p[1] == ':' || strings.Contains(p, `\`)
}

// gooseLF turns CRLF and lone CR into LF, as Goose does to a file and to
// old_str and new_str before a str_replace.
func gooseLF(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// applyGooseReplace applies a text_editor str_replace to text: a leading
// BOM is dropped (Goose does not write it back), line endings become LF in
// the file, old_str and new_str; old_str is located exactly, or else in
// Goose's fuzzy normalisation of both (gooseFuzzy), in which case the whole
// file takes the normalisation; it must occur once; the first occurrence
// is replaced, and the file ends with a newline. fuzzy says the fuzzy pass
// matched.
func applyGooseReplace(text string, e manifest.Edit) (out string, fuzzy bool, err error) {
	text = gooseLF(strings.TrimPrefix(text, "\uFEFF"))
	old, repl := gooseLF(e.Old), gooseLF(e.New)
	work := text
	if !strings.Contains(text, old) {
		work, old, fuzzy = gooseFuzzy(text), gooseFuzzy(old), true
	}
	switch n := strings.Count(work, old); {
	case n == 0:
		return "", false, fmt.Errorf("old_str not found, exactly or by Goose's fuzzy pass: %q", firstLine(e.Old))
	case n > 1:
		return "", fuzzy, fmt.Errorf("old_str occurs %d times: Goose refuses a match that is not unique", n)
	}
	out = strings.Replace(work, old, repl, 1)
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out, fuzzy, nil
}

// gooseFuzzy is Goose's normalisation for a fuzzy str_replace: the text's
// lines (as Rust's lines() splits them: a final newline is dropped) with
// their trailing white space removed, joined with "\n"; typographic
// quotes, dashes and spaces made ASCII (the table pi uses, without NFKC).
// Lines are trimmed as Rust's trim_end does: of Unicode white space.
func gooseFuzzy(s string) string {
	lines := rustLines(s)
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return goosePunct.Replace(strings.Join(lines, "\n"))
}

// goosePunct is the character map of Goose's fuzzy str_replace.
var goosePunct = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ",
	"\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// applyGooseInsert applies a text_editor insert: new_str goes, as one
// more line, after line n of the file (0 the top; a negative n counts from
// the end, -1 after the last line); the lines are joined with "\n" and a
// final newline is ensured. The file's lines are as Rust's lines() splits
// them (a final "\n" ends the last line, a "\r" before a "\n" is dropped),
// so a new_str ending in "\n" leaves an empty line after it; a byte order
// mark stays in the first line, as Goose reads it.
func applyGooseInsert(text string, n int, s string) (string, error) {
	lines := rustLines(text)
	at := n
	if n < 0 {
		at = len(lines) + n + 1
	}
	if at < 0 || at > len(lines) {
		return "", fmt.Errorf("insert_line %d is outside the file's %d lines", n, len(lines))
	}
	out := make([]string, 0, len(lines)+1)
	out = append(out, lines[:at]...)
	out = append(out, s)
	out = append(out, lines[at:]...)
	res := strings.Join(out, "\n")
	if !strings.HasSuffix(res, "\n") {
		res += "\n"
	}
	return res, nil
}

// rustLines splits s as Rust's str::lines does.
func rustLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.Split(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	for i, x := range l {
		l[i] = strings.TrimSuffix(x, "\r")
	}
	return l
}

// applyGooseExact applies the developer extension's edit: before must
// occur exactly once, and is replaced by after; nothing is normalised.
func applyGooseExact(text string, e manifest.Edit) (string, error) {
	switch n := strings.Count(text, e.Old); {
	case e.Old == "":
		return "", fmt.Errorf("an empty before matches everywhere: Goose refuses it")
	case n == 0:
		return "", fmt.Errorf("before not found (Goose matches it exactly): %q", firstLine(e.Old))
	case n > 1:
		return "", fmt.Errorf("before occurs %d times: Goose refuses a match that is not unique", n)
	}
	return strings.Replace(text, e.Old, e.New, 1), nil
}
