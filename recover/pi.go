package recover

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
	"golang.org/x/text/unicode/norm"
)

// carrierPi marks the operations of pi sessions, whose edit follows pi's
// rules.
const carrierPi = "pi_tool_call"

// piEdit replays a pi edit with pi's own matching (ApplyPiEdit). pi records
// no content after the call (its details.diff is for display), so the
// replay is all there is; a fuzzy match pi would have made is reported.
func (r *Reconstructor) piEdit(op *manifest.Op) {
	f := r.file(op.Paths[0], op, true)
	f.res.Ops++
	f.remember()
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
	out, fuzzy, err := ApplyPiEdit(f.cur.Text, op.Edits)
	if err != nil && !f.pinned && reversible(f.cur.Text, op.Edits, func(text string, e []manifest.Edit) bool { _, _, err := ApplyPiEdit(text, e); return err == nil }) {
		// The host copy already holds the change (recovered before, or made
		// by hand): it is the result, as patch(1) would say.
		out, fuzzy, err = f.cur.Text, false, nil
		f.res.Notes = append(f.res.Notes, where(op)+": the host copy already has this change")
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
		f.res.Fuzz = append(f.res.Fuzz, where(op)+": matched by pi's fuzzy pass (trailing whitespace, quotes, dashes, spaces normalised), as pi itself does; the whole file takes that normalisation")
	}
	f.cur = Content{Known: true, Exists: true, Text: out}
	f.remember()
}

// ApplyPiEdit applies pi's edit to text (docs/formats/pi.md): a BOM is
// kept aside, CRLF (and lone CR) become LF, each oldText must occur once,
// found exactly or else in pi's fuzzy normalisation (NFKC, trailing
// whitespace stripped, typographic quotes, dashes and spaces made ASCII) —
// and then the whole file is taken in that normalisation, as pi does. All
// edits are located in the content before the call and must not overlap;
// the line endings and BOM are put back. fuzzy says the fuzzy pass was used.
func ApplyPiEdit(text string, edits []manifest.Edit) (string, bool, error) {
	bom := ""
	if strings.HasPrefix(text, "\uFEFF") {
		bom, text = "\uFEFF", text[len("\uFEFF"):]
	}
	ending := "\n"
	if i, j := strings.Index(text, "\r\n"), strings.Index(text, "\n"); i >= 0 && j >= 0 && i < j {
		ending = "\r\n"
	}
	content := piLF(text)
	if len(edits) == 0 {
		return "", false, fmt.Errorf("no edits")
	}
	base, fuzzy := content, false
	for _, e := range edits {
		if !strings.Contains(content, piLF(e.Old)) {
			fuzzy = true
		}
	}
	if fuzzy {
		base = piFuzzy(content)
	}
	type span struct {
		at, end int
		repl    string
	}
	var spans []span
	fc := piFuzzy(content)
	for i, e := range edits {
		old := piLF(e.Old)
		if old == "" {
			return "", false, fmt.Errorf("edit %d: empty oldText", i+1)
		}
		if fuzzy {
			old = piFuzzy(old)
		}
		if n := strings.Count(fc, piFuzzy(piLF(e.Old))); n > 1 {
			return "", false, fmt.Errorf("edit %d: oldText occurs %d times: pi refuses a match that is not unique", i+1, n)
		}
		at := strings.Index(base, old)
		if at < 0 {
			return "", false, fmt.Errorf("edit %d: oldText not found, even by pi's fuzzy pass: %q", i+1, firstLine(e.Old))
		}
		spans = append(spans, span{at, at + len(old), piLF(e.New)})
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].at < spans[b].at })
	for i := 1; i < len(spans); i++ {
		if spans[i].at < spans[i-1].end {
			return "", false, fmt.Errorf("edits overlap")
		}
	}
	out := base
	for i := len(spans) - 1; i >= 0; i-- {
		out = out[:spans[i].at] + spans[i].repl + out[spans[i].end:]
	}
	if out == base {
		return "", false, fmt.Errorf("the replacement changes nothing: pi reports that as an error")
	}
	if ending == "\r\n" {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return bom + out, fuzzy, nil
}

func piLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

var piPunct = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ",
	"\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// piFuzzy is pi's normalizeForFuzzyMatch.
func piFuzzy(s string) string {
	s = norm.NFKC.String(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
	}
	return piPunct.Replace(strings.Join(lines, "\n"))
}

// reversible reports whether edits are already in text: their reverse
// applies, and the forward edits do not (the caller knows).
func reversible(text string, edits []manifest.Edit, apply func(string, []manifest.Edit) bool) bool {
	rev := make([]manifest.Edit, len(edits))
	for i, e := range edits {
		if e.New == "" {
			return false // a pure deletion leaves nothing to find
		}
		rev[i] = manifest.Edit{Old: e.New, New: e.Old, ReplaceAll: e.ReplaceAll, Expected: e.Expected}
	}
	return apply(text, rev)
}
