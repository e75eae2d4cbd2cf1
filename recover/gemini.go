package recover

import (
	"fmt"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// carrierGemini marks the operations of Gemini CLI sessions, whose replace
// follows Gemini's rules rather than Claude Code's.
const carrierGemini = "gemini_tool_call"

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
	if f.res.Ops == 0 && !f.res.Start.Known && !f.cur.Known && e.Old == "" {
		f.res.Start = Content{Known: true} // created by the call: absent before
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
		out, err = ApplyGeminiEdit(f.cur.Text, e)
		if err != nil && post == nil && !f.pinned && reversible(f.cur.Text, op.Edits, func(text string, e []manifest.Edit) bool { _, err := ApplyGeminiEdit(text, e[0]); return err == nil }) {
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
		f.pinned = true
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
		f.pinned = true
	}
	f.cur = Content{Known: true, Exists: true, Text: out}
	f.remember()
}

// ApplyGeminiEdit applies one Gemini CLI replace to LF text with Gemini's
// exact strategy: old_string and new_string have CRLF turned into LF, the
// number of occurrences must be expected_replacements (one by default, any
// with allow_multiple), every occurrence is replaced literally, and the
// text keeps whether it ended in a newline.
func ApplyGeminiEdit(orig string, e manifest.Edit) (string, error) {
	old, repl := lf(e.Old), lf(e.New)
	if old == "" {
		return "", fmt.Errorf("an empty old_string on an existing file: Gemini CLI refuses to create a file that exists")
	}
	n := strings.Count(orig, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_string not found exactly (Gemini's looser matching is not replayed): %q", firstLine(e.Old))
	case e.Expected > 0 && n != e.Expected:
		return "", fmt.Errorf("old_string occurs %d times, expected_replacements is %d", n, e.Expected)
	case e.Expected == 0 && !e.ReplaceAll && n != 1:
		return "", fmt.Errorf("old_string occurs %d times and allow_multiple is false: refusing to pick one", n)
	}
	out := strings.ReplaceAll(orig, old, repl)
	switch {
	case strings.HasSuffix(orig, "\n") && !strings.HasSuffix(out, "\n"):
		out += "\n"
	case !strings.HasSuffix(orig, "\n") && strings.HasSuffix(out, "\n"):
		out = strings.TrimSuffix(out, "\n")
	}
	return out, nil
}
