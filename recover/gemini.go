package recover

import (
	"fmt"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

func init() { editRules[manifest.RuleGemini] = (*Reconstructor).geminiEdit }

// geminiEdit replays a Gemini CLI replace. The content Gemini recorded
// after the call (resultDisplay.newContent) wins over replaying the inputs:
// when the exact replacement cannot reproduce it, Gemini matched with one of
// its looser strategies (whitespace-insensitive lines, a token regex, an
// LLM-corrected old_string), which are not replayed here. Without that
// record, the inputs are replayed with Gemini's exact rule only.
func (r *Reconstructor) geminiEdit(op *manifest.Op) {
	if len(op.Paths) == 0 || len(op.Edits) == 0 {
		return
	}
	var post *string
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidencePost && e.Path == op.Paths[0] {
			c := e.Content
			post = &c
		}
	}
	e := op.Edits[0]
	f := r.file(op.Paths[0], op, e.Old != "" || post == nil)
	if e.Old == "" && !f.cur.Known {
		r.created(f) // created by the call: absent before, as far as anyone knows
	}
	f.res.Ops++
	f.remember()
	var out string
	var err error
	switch {
	case e.Old == "" && (!f.cur.Known || !f.cur.Exists):
		out = lf(e.New) // Gemini creates a missing file from new_string
	case !f.cur.Known:
		err = fmt.Errorf("its content before the edit is unknown (no evidence in the transcript, no host copy)")
	case !f.cur.Exists:
		err = fmt.Errorf("the host has no copy to start from (--base DIR can point at the files as they were when the session started)")
	default:
		var flexible bool
		out, flexible, err = applyGeminiEdit(f.cur.Text, e)
		if err == nil && flexible && post == nil && !f.pinned {
			f.res.Fuzz = append(f.res.Fuzz, where(op)+": matched by Gemini's flexible strategy (whole lines, indentation ignored) on the host's copy")
		}
		if err != nil && post == nil && !f.pinned && reversible(f.cur.Text, op.Edits, func(text string, e []manifest.Edit) bool { _, _, err := applyGeminiEdit(text, e[0]); return err == nil }) {
			out, err = f.cur.Text, nil
			f.res.Notes = append(f.res.Notes, where(op)+": the host copy already has this change")
		}
	}
	if post != nil {
		// The recorded content settles it; say when the inputs alone would not.
		if err != nil || out != lf(*post) {
			f.res.Notes = append(f.res.Notes, where(op)+": Gemini CLI matched old_string with a looser strategy than an exact replacement; the content it recorded (resultDisplay.newContent) is kept")
		}
		f.cur = Content{Known: true, Exists: true, Text: lf(*post)}
		f.pinned, f.guess = true, false // recorded by the agent: exact
		f.remember()
		return
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
	unproven(f, op)
}

// unproven grades a file stale after a Gemini call whose written content
// the transcript does not hold: the user modified the proposal before
// accepting it, and no resultDisplay.newContent records the result (the
// parser marks such a call low-confidence). The proposal is kept as the
// best content known, never graded exact.
func unproven(f *fstate, op *manifest.Op) {
	if op.Provenance.Rule() == manifest.RuleGemini && op.LowConfidence {
		f.stale = where(op) + ": " + op.Note
	}
}

// applyGeminiEdit applies one Gemini CLI replace to LF text with Gemini's
// first two strategies (docs/formats/gemini.md): old_string and new_string
// have CRLF turned into LF; the exact strategy replaces every literal
// occurrence, and when there is none the flexible one matches whole lines
// ignoring their surrounding whitespace and re-indents new_string like the
// match. The number of occurrences must be expected_replacements (one by
// default, any with allow_multiple, and more than one exact occurrence never
// falls through); the text keeps whether it ended in a newline. Gemini's
// later strategies (a token regex, Levenshtein recovery, an LLM rewriting
// old_string) are not replayed: a call only they could match is an error
// here. flexible says the flexible strategy matched.
func applyGeminiEdit(orig string, e manifest.Edit) (out string, flexible bool, err error) {
	old, repl := lf(e.Old), lf(e.New)
	if old == "" {
		return "", false, fmt.Errorf("an empty old_string on an existing file: Gemini CLI refuses to create a file that exists")
	}
	check := func(n int) error {
		switch {
		case e.Expected > 0 && n != e.Expected:
			return fmt.Errorf("old_string occurs %d times, expected_replacements is %d", n, e.Expected)
		case e.Expected == 0 && !e.ReplaceAll && n != 1:
			return fmt.Errorf("old_string occurs %d times and allow_multiple is false: refusing to pick one", n)
		}
		return nil
	}
	if n := strings.Count(orig, old); n > 0 {
		if err := check(n); err != nil {
			return "", false, err
		}
		return keepFinalNewline(orig, strings.ReplaceAll(orig, old, repl)), false, nil
	}
	text, n := geminiFlexible(orig, old, repl)
	if n == 0 {
		return "", false, fmt.Errorf("old_string not found, exactly or line by line ignoring indentation (Gemini's regex, fuzzy and LLM-corrected matching are not replayed): %q", firstLine(e.Old))
	}
	if err := check(n); err != nil {
		return "", true, err
	}
	return keepFinalNewline(orig, text), true, nil
}

// geminiFlexible is Gemini's flexible strategy: every run of whole lines
// whose trimmed text is old_string's trimmed lines is replaced by
// new_string's lines, re-indented from the run's first line.
func geminiFlexible(orig, old, repl string) (string, int) {
	src := strings.SplitAfter(orig, "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	search := strings.Split(old, "\n")
	for i := range search {
		search[i] = strings.TrimSpace(search[i])
	}
	replLines := strings.Split(repl, "\n")
	n := 0
	for i := 0; i+len(search) <= len(src); i++ {
		match := true
		for j := range search {
			if strings.TrimSpace(src[i+j]) != search[j] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		n++
		first := src[i]
		indent := first[:len(first)-len(strings.TrimLeft(first, " \t"))]
		text := strings.Join(reindent(replLines, indent), "\n")
		if repl != "" && strings.HasSuffix(src[i+len(search)-1], "\n") && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		src = append(src[:i], append([]string{text}, src[i+len(search):]...)...)
	}
	return strings.Join(src, ""), n
}

// reindent gives lines the indentation of a match: the first line's own
// indentation is replaced by it on every line that has it, other lines are
// put at it, blank lines are emptied.
func reindent(lines []string, indent string) []string {
	if len(lines) == 0 {
		return nil
	}
	ref := lines[0][:len(lines[0])-len(strings.TrimLeft(lines[0], " \t"))]
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			out[i] = ""
		case strings.HasPrefix(l, ref):
			out[i] = indent + l[len(ref):]
		default:
			out[i] = indent + strings.TrimLeft(l, " \t\n\v\f\r")
		}
	}
	return out
}

// keepFinalNewline makes out end in a newline exactly when orig does.
func keepFinalNewline(orig, out string) string {
	switch {
	case strings.HasSuffix(orig, "\n") && !strings.HasSuffix(out, "\n"):
		return out + "\n"
	case !strings.HasSuffix(orig, "\n") && strings.HasSuffix(out, "\n"):
		return strings.TrimSuffix(out, "\n")
	}
	return out
}
