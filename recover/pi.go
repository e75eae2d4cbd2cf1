package recover

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
	"golang.org/x/text/unicode/norm"
)

func init() { editRules[manifest.RulePi] = (*Reconstructor).piEdit }

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
	// pi's edits[] (and its details.patch) came with the version that keeps
	// the lines an edit does not touch as they were after a fuzzy match.
	preserve := len(op.Edits) > 1
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidenceDiff && e.Source == "details.patch" {
			preserve = true
			r.checkDiff(e, op)
		}
	}
	before := f.cur.Text
	out, fuzzy, err := applyPiEdit(f.cur.Text, op.Edits, preserve)
	if err != nil && !f.pinned && reversible(f.cur.Text, op.Edits, func(text string, e []manifest.Edit) bool {
		_, _, err := applyPiEdit(text, e, preserve)
		return err == nil
	}) {
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
		what := "the whole file takes that normalisation"
		if preserve {
			what = "the lines it changed take that normalisation"
		}
		f.res.Fuzz = append(f.res.Fuzz, where(op)+": matched by pi's fuzzy pass (trailing whitespace, quotes, dashes, spaces normalised), as pi itself does; "+what)
	}
	f.cur = Content{Known: true, Exists: true, Text: out}
	f.remember()
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidenceDiff && e.Source == "details.diff" {
			if msg := checkPiDiff(e.Content, before, out); msg != "" {
				// The file was changed outside the tools (a formatter, a
				// shell command): the replay is not what pi wrote.
				d := where(op) + ": pi's recorded diff (details.diff) " + msg
				f.res.Drift = append(f.res.Drift, d)
				f.stale = d + "; the file was changed outside the tools, so the replayed content is not proven"
			}
		}
	}
}

// checkPiDiff checks pi's numbered diff of an edit against the replay:
// its removed lines carry their line number in the file before the edit,
// its added lines their number after it. pi computes the
// diff on the text it edited (BOM removed, LF, and after a fuzzy match the
// normalised text), so a line may match in either spelling. It returns
// what disagrees, or "".
func checkPiDiff(diff, before, after string) string {
	text := func(s string) (plain []string, fuzzy func() []string) {
		s = strings.TrimPrefix(piLF(s), "\uFEFF")
		var f []string
		return strings.Split(s, "\n"), func() []string {
			if f == nil {
				f = strings.Split(piFuzzy(s), "\n") // only when a line differs
			}
			return f
		}
	}
	b, bf := text(before)
	a, af := text(after)
	for _, l := range strings.Split(diff, "\n") {
		if l == "" || (l[0] != '-' && l[0] != '+') {
			// Context lines are not checked: after a leading "..." some
			// versions number them from 1 (seen in the real session of
			// fixtures/corpus/pi), while changed lines are always right.
			continue
		}
		rest := strings.TrimLeft(l[1:], " ")
		k := 0
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k == 0 || k > 9 || k >= len(rest) || rest[k] != ' ' {
			continue // an ellipsis, or not a numbered line
		}
		n := 0
		for _, c := range rest[:k] {
			n = n*10 + int(c-'0')
		}
		want := rest[k+1:]
		lines, norm, which := b, bf, "before"
		if l[0] == '+' {
			lines, norm, which = a, af, "after"
		}
		if n < 1 || n > len(lines) || (lines[n-1] != want && !fuzzyLineIs(norm(), n-1, want)) {
			got := "<end of file>"
			if n >= 1 && n <= len(lines) {
				got = lines[n-1]
			}
			return fmt.Sprintf("has line %d %s the edit as %q, the replay has %q", n, which, want, got)
		}
	}
	return ""
}

// applyPiEdit applies pi's edit to text (docs/formats/pi.md): a BOM is
// kept aside, CRLF (and lone CR) become LF, and every oldText is located in
// the content before the call, exactly or else in pi's fuzzy normalisation
// (NFKC, trailing whitespace stripped, typographic quotes, dashes and
// spaces made ASCII); each must occur once and none may overlap. When any
// edit needs the fuzzy pass, the replacements are made in the normalised
// text: the whole file takes the normalisation (pi before edits[]), or,
// with preserve (pi since edits[]), only the lines an edit touches, the
// others keeping their bytes. The line endings and BOM are put back. An
// edit that changes nothing is refused, as pi refuses it. fuzzy says the
// fuzzy pass was used.
func applyPiEdit(text string, edits []manifest.Edit, preserve bool) (string, bool, error) {
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
	for i, e := range edits {
		if piLF(e.Old) == "" {
			return "", false, fmt.Errorf("edit %d: empty oldText", i+1)
		}
		if !strings.Contains(content, piLF(e.Old)) {
			fuzzy = true
		}
	}
	if fuzzy {
		base = piFuzzy(content)
	}
	var spans []piSpan
	for i, e := range edits {
		old := piLF(e.Old)
		if fuzzy {
			old = piFuzzy(old)
		}
		at := strings.Index(base, old)
		if at < 0 {
			return "", false, fmt.Errorf("edit %d: oldText not found, even by pi's fuzzy pass: %q", i+1, firstLine(e.Old))
		}
		n := strings.Count(base, old)
		if !preserve {
			// pi before edits[] counted in the normalised text even for an
			// exact match.
			n = strings.Count(piFuzzy(content), piFuzzy(piLF(e.Old)))
		}
		if n > 1 {
			return "", false, fmt.Errorf("edit %d: oldText occurs %d times: pi refuses a match that is not unique", i+1, n)
		}
		spans = append(spans, piSpan{at, at + len(old), piLF(e.New)})
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].at < spans[b].at })
	for i := 1; i < len(spans); i++ {
		if spans[i].at < spans[i-1].end {
			return "", false, fmt.Errorf("edits overlap")
		}
	}
	var out string
	if fuzzy && preserve {
		var err error
		if out, err = piPreserve(content, base, spans); err != nil {
			return "", false, err
		}
	} else {
		out = piReplace(base, spans, 0)
	}
	if (preserve && out == content) || (!preserve && out == base) {
		return "", false, fmt.Errorf("the replacement changes nothing: pi reports that as an error")
	}
	if ending == "\r\n" {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return bom + out, fuzzy, nil
}

// piSpan is one located replacement: base[at:end] becomes repl.
type piSpan struct {
	at, end int
	repl    string
}

// piReplace makes sorted replacements in s, whose first byte is at offset
// off of the text the spans locate.
func piReplace(s string, spans []piSpan, off int) string {
	for i := len(spans) - 1; i >= 0; i-- {
		s = s[:spans[i].at-off] + spans[i].repl + s[spans[i].end-off:]
	}
	return s
}

// piLines splits s into lines that keep their "\n".
func piLines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// piPreserve makes replacements located in the normalised base, and keeps
// every line no replacement touches as it is in the original: lines are
// grouped by the replacements that touch them, a group is taken from the
// base with its replacements made, every other line from the original.
func piPreserve(orig, base string, spans []piSpan) (string, error) {
	ol, bl := piLines(orig), piLines(base)
	if orig == "" || base == "" || len(ol) != len(bl) {
		return "", fmt.Errorf("the normalised text has a different number of lines: pi refuses to keep the unchanged ones")
	}
	starts := make([]int, len(bl)+1)
	for i, l := range bl {
		starts[i+1] = starts[i] + len(l)
	}
	line := func(off int) int { // the line holding byte off
		return sort.Search(len(bl), func(i int) bool { return starts[i+1] > off })
	}
	var b strings.Builder
	next := 0
	for i := 0; i < len(spans); {
		first := line(spans[i].at)
		last := line(max(spans[i].end-1, spans[i].at))
		j := i + 1
		for j < len(spans) && line(spans[j].at) <= last {
			last = max(last, line(max(spans[j].end-1, spans[j].at)))
			j++
		}
		if first >= len(bl) || last >= len(bl) {
			return "", fmt.Errorf("a replacement lies outside the text")
		}
		for _, l := range ol[next:first] {
			b.WriteString(l)
		}
		b.WriteString(piReplace(base[starts[first]:starts[last+1]], spans[i:j], starts[first]))
		next, i = last+1, j
	}
	for _, l := range ol[next:] {
		b.WriteString(l)
	}
	return b.String(), nil
}

func piLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// jsSpace is the whitespace JavaScript's trimEnd drops (pi and Qwen Code
// are JavaScript).
const jsSpace = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

// unicodePunct makes typographic quotes, dashes and spaces ASCII, one
// character for one: pi's fuzzy pass and Qwen Code's character map.
var unicodePunct = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ",
	"\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// piFuzzy is pi's normalizeForFuzzyMatch. Plain ASCII text without
// trailing whitespace is its own normalisation, which is most source code:
// it is returned as it is, without the cost of NFKC.
func piFuzzy(s string) string {
	if plainASCII(s) {
		return s
	}
	s = norm.NFKC.String(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, jsSpace)
	}
	return unicodePunct.Replace(strings.Join(lines, "\n"))
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

// plainASCII reports whether s is ASCII with no whitespace at the end of a
// line (or of s): text that pi's fuzzy normalisation leaves as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return false
		}
		if (c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r') && (i+1 == len(s) || s[i+1] == '\n') {
			return false
		}
	}
	return true
}

// fuzzyLineIs reports whether line i of a normalised text is want, in
// either spelling.
func fuzzyLineIs(lines []string, i int, want string) bool {
	return i < len(lines) && (lines[i] == want || lines[i] == piFuzzy(want))
}
