package recover

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/manifest"
)

func init() { editRules[manifest.RuleOpencode] = (*Reconstructor).opencodeEdit }

// opencodeEdit replays an opencode edit (docs/formats/opencode.md §4): the
// content it recorded when there is any (metadata.filediff after, taken
// after the formatter ran), else its oldString/newString replayed with
// opencode's chain of replacers. A match found past the exact replacer is
// what opencode did only when the content it ran on is known exactly; on a
// host copy it is reported as fuzz.
func (r *Reconstructor) opencodeEdit(op *manifest.Op) {
	if len(op.Paths) == 0 || len(op.Edits) == 0 {
		return
	}
	e := op.Edits[0]
	creates := e.Old == ""
	f := r.file(op.Paths[0], op, !creates)
	var post *manifest.Evidence
	var diff string
	for i := range op.Evidence {
		switch op.Evidence[i].Kind {
		case manifest.EvidencePost:
			post = &op.Evidence[i]
		case manifest.EvidenceDiff:
			diff = op.Evidence[i].Content
		}
	}
	if creates && f.res.Ops == 0 && !f.res.Start.Known && !f.cur.Known {
		f.res.Start = Content{Known: true}
	}
	f.res.Ops++
	f.remember()
	var text string
	var how string
	var err error
	switch {
	case creates:
		// An empty oldString writes newString whole, as the file's content.
		text, f.crlf = e.New, false
	case !f.cur.Known:
		err = errors.New("its content before the edit is unknown (no evidence in the transcript, no host copy)")
	case !f.cur.Exists:
		err = errors.New("the host has no copy to start from (--base DIR can point at the files as they were when the session started)")
	default:
		text, how, err = opencodeReplace(f.cur.Text, lf(e.Old), lf(e.New), e.ReplaceAll)
	}
	pre := f.cur.Text
	switch {
	case err != nil && post != nil:
		// The recorded content settles it; the replay could not say more.
		f.res.Notes = append(f.res.Notes, fmt.Sprintf("%s: the edit does not replay here (%v); the content opencode recorded is used", where(op), err))
		f.cur, f.pinned = Content{}, false
		return // postEvidence adopts it
	case err != nil:
		f.res.Reason = fmt.Sprintf("%s: edited by the agent, but %v", where(op), err)
		if f.pinned && f.cur.Known {
			f.res.Drift = append(f.res.Drift, f.res.Reason)
		}
		f.cur, f.pinned = Content{}, false
		return
	}
	if how != "" && how != "simple" {
		if f.pinned {
			f.res.Notes = append(f.res.Notes, fmt.Sprintf("%s: oldString matched by opencode's %s replacer", where(op), how))
		} else {
			f.res.Fuzz = append(f.res.Fuzz, fmt.Sprintf("%s: oldString matched only by opencode's %s replacer on the host copy", where(op), how))
		}
	}
	replayed := Content{Known: true, Exists: true, Text: text}
	if creates {
		f.pinned = true
	}
	if post != nil {
		if lf(post.Content) != text {
			f.res.Notes = append(f.res.Notes, where(op)+": the file opencode recorded after the edit differs from the replayed replacement (its formatter ran): the recorded content is kept")
		}
		// postEvidence adopts the recorded content; matching it here keeps
		// a formatter's work from being reported as drift.
		f.cur = Content{Known: true, Exists: true, Text: lf(post.Content)}
		return
	}
	f.cur = replayed
	if diff != "" && !creates {
		if out, indent, ok := applyOpencodeDiff(pre, diff); ok && out != text {
			// The diff was taken after the formatter ran: it is the better
			// account of what the file became.
			f.cur.Text = out
			f.res.Notes = append(f.res.Notes, where(op)+": the recorded diff differs from the replayed replacement (opencode's formatter ran): the diff is followed")
			if indent != "" {
				// trimDiff took the lines' common indentation off: put back
				// on the added lines, it is the context's, which is likely
				// but not proven.
				f.pinned = false
				f.res.Notes = append(f.res.Notes, where(op)+": the diff's indentation was trimmed by opencode and is restored from the surrounding lines: not exact")
			}
		}
	}
	f.remember()
}

// ErrOpencodeNotFound and ErrOpencodeAmbiguous are OpencodeReplace's errors,
// opencode's own two.
var (
	ErrOpencodeNotFound  = errors.New("oldString not found (no opencode replacer matches it)")
	ErrOpencodeAmbiguous = errors.New("oldString matches several places and replaceAll is false: opencode refuses it")
)

// opencodeReplace applies one opencode edit to LF text with opencode's
// rules: a chain of replacers, each proposing strings of content to
// replace; the first proposal found exactly once (or at all, with
// replaceAll) wins. how names the replacer that matched.
func opencodeReplace(content, oldS, newS string, replaceAll bool) (out, how string, err error) {
	if oldS == newS {
		return "", "", errors.New("oldString and newString are identical: opencode refuses the edit")
	}
	notFound := true
	for _, rp := range opencodeReplacers {
		for _, search := range rp.fn(content, oldS) {
			idx := strings.Index(content, search)
			if idx < 0 {
				continue
			}
			notFound = false
			if replaceAll {
				return jsReplaceAll(content, search, newS), rp.name, nil
			}
			if strings.LastIndex(content, search) != idx {
				continue
			}
			return content[:idx] + newS + content[idx+len(search):], rp.name, nil
		}
	}
	if notFound {
		return "", "", ErrOpencodeNotFound
	}
	return "", "", ErrOpencodeAmbiguous
}

type replacer struct {
	name string
	fn   func(content, find string) []string
}

var opencodeReplacers = []replacer{
	{"simple", func(_, find string) []string { return []string{find} }},
	{"line-trimmed", lineTrimmed},
	{"block-anchor", blockAnchor},
	{"whitespace-normalized", whitespaceNormalized},
	{"indentation-flexible", indentationFlexible},
	{"escape-normalized", escapeNormalized},
	{"trimmed-boundary", trimmedBoundary},
	{"context-aware", contextAware},
	{"multi-occurrence", multiOccurrence},
}

// isJSSpace is JavaScript's \s (and what String.prototype.trim removes).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// block returns lines[i:j] joined, as content held them.
func block(lines []string, i, j int) string { return strings.Join(lines[i:j], "\n") }

// lineTrimmed proposes every run of content lines equal to find's lines
// once each side is trimmed (a final empty line of find is dropped).
func lineTrimmed(content, find string) []string {
	lines := strings.Split(content, "\n")
	search := strings.Split(find, "\n")
	if search[len(search)-1] == "" {
		search = search[:len(search)-1]
	}
	var out []string
	for i := 0; i+len(search) <= len(lines); i++ {
		ok := true
		for j := range search {
			if jsTrim(lines[i+j]) != jsTrim(search[j]) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, block(lines, i, i+len(search)))
		}
	}
	return out
}

const (
	singleCandidateThreshold   = 0.0
	multipleCandidateThreshold = 0.3
)

// blockAnchor matches a block of three lines or more by its first and last
// lines (trimmed): one candidate is taken whatever its middle; among
// several, the one whose middle lines are the most alike (by edit
// distance), if at least 30% alike.
func blockAnchor(content, find string) []string {
	lines := strings.Split(content, "\n")
	search := strings.Split(find, "\n")
	if len(search) < 3 {
		return nil
	}
	if search[len(search)-1] == "" {
		search = search[:len(search)-1]
	}
	first, last := jsTrim(search[0]), jsTrim(search[len(search)-1])
	type cand struct{ start, end int }
	var cands []cand
	for i := range lines {
		if jsTrim(lines[i]) != first {
			continue
		}
		for j := i + 2; j < len(lines); j++ {
			if jsTrim(lines[j]) == last {
				cands = append(cands, cand{i, j})
				break
			}
		}
	}
	similarity := func(c cand, average bool) float64 {
		size := c.end - c.start + 1
		check := min(len(search)-2, size-2)
		if check <= 0 {
			return 1
		}
		sim := 0.0
		for j := 1; j < len(search)-1 && j < size-1; j++ {
			a, b := jsTrim(lines[c.start+j]), jsTrim(search[j])
			maxLen := max(utf8.RuneCountInString(a), utf8.RuneCountInString(b))
			if maxLen == 0 {
				continue
			}
			d := 1 - float64(levenshtein(a, b))/float64(maxLen)
			if average {
				sim += d
			} else {
				sim += d / float64(check)
				if sim >= singleCandidateThreshold {
					break
				}
			}
		}
		if average {
			sim /= float64(check)
		}
		return sim
	}
	switch len(cands) {
	case 0:
		return nil
	case 1:
		if similarity(cands[0], false) >= singleCandidateThreshold {
			return []string{block(lines, cands[0].start, cands[0].end+1)}
		}
		return nil
	}
	best, bestSim := -1, -1.0
	for i, c := range cands {
		if s := similarity(c, true); s > bestSim {
			best, bestSim = i, s
		}
	}
	if bestSim >= multipleCandidateThreshold && best >= 0 {
		return []string{block(lines, cands[best].start, cands[best].end+1)}
	}
	return nil
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 || len(rb) == 0 {
		return max(len(ra), len(rb))
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// normalizeWS collapses every run of whitespace into one space and trims.
func normalizeWS(s string) string {
	return strings.Join(strings.FieldsFunc(s, isJSSpace), " ")
}

const jsSpaceClass = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]+`

// whitespaceNormalized proposes lines (or the part of a line) and blocks
// of lines equal to find once whitespace runs are collapsed.
func whitespaceNormalized(content, find string) []string {
	norm := normalizeWS(find)
	lines := strings.Split(content, "\n")
	var out []string
	var re *regexp.Regexp
	for _, line := range lines {
		nl := normalizeWS(line)
		if nl == norm {
			out = append(out, line)
			continue
		}
		if !strings.Contains(nl, norm) {
			continue
		}
		if re == nil {
			words := strings.FieldsFunc(jsTrim(find), isJSSpace)
			if len(words) == 0 {
				continue
			}
			for i, w := range words {
				words[i] = regexp.QuoteMeta(w)
			}
			var err error
			if re, err = regexp.Compile(strings.Join(words, jsSpaceClass)); err != nil {
				continue
			}
		}
		if m := re.FindString(line); m != "" {
			out = append(out, m)
		}
	}
	findLines := strings.Split(find, "\n")
	if len(findLines) > 1 {
		for i := 0; i+len(findLines) <= len(lines); i++ {
			b := block(lines, i, i+len(findLines))
			if normalizeWS(b) == norm {
				out = append(out, b)
			}
		}
	}
	return out
}

// removeIndentation takes the smallest indentation of the non-blank lines
// off every non-blank line.
func removeIndentation(text string) string {
	lines := strings.Split(text, "\n")
	minIndent := -1
	for _, l := range lines {
		if jsTrim(l) == "" {
			continue
		}
		n := 0
		for _, r := range l {
			if !isJSSpace(r) {
				break
			}
			n++
		}
		if minIndent < 0 || n < minIndent {
			minIndent = n
		}
	}
	if minIndent < 0 {
		return text
	}
	for i, l := range lines {
		if jsTrim(l) == "" {
			continue
		}
		lines[i] = string([]rune(l)[minIndent:])
	}
	return strings.Join(lines, "\n")
}

// indentationFlexible proposes blocks of lines equal to find once both are
// taken out of their common indentation.
func indentationFlexible(content, find string) []string {
	want := removeIndentation(find)
	lines := strings.Split(content, "\n")
	n := len(strings.Split(find, "\n"))
	var out []string
	for i := 0; i+n <= len(lines); i++ {
		b := block(lines, i, i+n)
		if removeIndentation(b) == want {
			out = append(out, b)
		}
	}
	return out
}

var escapeRe = regexp.MustCompile(`\\(n|t|r|'|"|` + "`" + `|\\|\n|\$)`)

// unescape undoes the escapes a model writes into a string by mistake.
func unescape(s string) string {
	return escapeRe.ReplaceAllStringFunc(s, func(m string) string {
		switch m[1:] {
		case "n", "\n":
			return "\n"
		case "t":
			return "\t"
		case "r":
			return "\r"
		}
		return m[1:]
	})
}

// escapeNormalized proposes find with its escapes undone, and blocks of
// content that read the same once unescaped.
func escapeNormalized(content, find string) []string {
	u := unescape(find)
	var out []string
	if strings.Contains(content, u) {
		out = append(out, u)
	}
	lines := strings.Split(content, "\n")
	n := len(strings.Split(u, "\n"))
	for i := 0; i+n <= len(lines); i++ {
		b := block(lines, i, i+n)
		if unescape(b) == u {
			out = append(out, b)
		}
	}
	return out
}

// trimmedBoundary proposes find without its surrounding whitespace, and
// blocks that trim to the same.
func trimmedBoundary(content, find string) []string {
	t := jsTrim(find)
	if t == find {
		return nil
	}
	var out []string
	if strings.Contains(content, t) {
		out = append(out, t)
	}
	lines := strings.Split(content, "\n")
	n := len(strings.Split(find, "\n"))
	for i := 0; i+n <= len(lines); i++ {
		b := block(lines, i, i+n)
		if jsTrim(b) == t {
			out = append(out, b)
		}
	}
	return out
}

// contextAware proposes blocks of find's length whose first and last lines
// match find's (trimmed) and at least half of whose middle lines do.
func contextAware(content, find string) []string {
	fl := strings.Split(find, "\n")
	if len(fl) < 3 {
		return nil
	}
	if fl[len(fl)-1] == "" {
		fl = fl[:len(fl)-1]
	}
	lines := strings.Split(content, "\n")
	first, last := jsTrim(fl[0]), jsTrim(fl[len(fl)-1])
	var out []string
	for i := range lines {
		if jsTrim(lines[i]) != first {
			continue
		}
		for j := i + 2; j < len(lines); j++ {
			if jsTrim(lines[j]) != last {
				continue
			}
			bl := lines[i : j+1]
			if len(bl) == len(fl) {
				matching, total := 0, 0
				for k := 1; k < len(bl)-1; k++ {
					a, b := jsTrim(bl[k]), jsTrim(fl[k])
					if a != "" || b != "" {
						total++
						if a == b {
							matching++
						}
					}
				}
				if total == 0 || float64(matching)/float64(total) >= 0.5 {
					out = append(out, strings.Join(bl, "\n"))
				}
			}
			break // only the first closing anchor after each opening one
		}
	}
	return out
}

// multiOccurrence proposes find once per exact occurrence (for replaceAll).
func multiOccurrence(content, find string) []string {
	var out []string
	if find == "" {
		return nil
	}
	for start := 0; ; {
		i := strings.Index(content[start:], find)
		if i < 0 {
			return out
		}
		out = append(out, find)
		start += i + len(find)
	}
}

// jsReplaceAll is String.prototype.replaceAll with a string pattern: the
// replacement's $$, $&, $` and $' patterns are expanded, as opencode's
// replaceAll expands them.
func jsReplaceAll(s, search, repl string) string {
	if !strings.Contains(repl, "$") {
		return strings.ReplaceAll(s, search, repl)
	}
	var b strings.Builder
	pos := 0
	for {
		var i int
		if search == "" {
			if pos > len(s) {
				break
			}
			i = pos
		} else {
			k := strings.Index(s[pos:], search)
			if k < 0 {
				break
			}
			i = pos + k
		}
		b.WriteString(s[pos:i])
		b.WriteString(expandJS(repl, s, i, search))
		pos = i + len(search)
		if search == "" {
			if pos < len(s) {
				_, sz := utf8.DecodeRuneInString(s[pos:])
				b.WriteString(s[pos : pos+sz])
				pos += sz
			} else {
				pos++
			}
		}
	}
	if pos <= len(s) {
		b.WriteString(s[pos:])
	}
	return b.String()
}

func expandJS(repl, s string, at int, match string) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		if repl[i] != '$' || i+1 >= len(repl) {
			b.WriteByte(repl[i])
			continue
		}
		switch repl[i+1] {
		case '$':
			b.WriteByte('$')
		case '&':
			b.WriteString(match)
		case '`':
			b.WriteString(s[:at])
		case '\'':
			b.WriteString(s[at+len(match):])
		default:
			b.WriteByte('$')
			continue
		}
		i++
	}
	return b.String()
}

// ApplyOpencodeDiff applies the unified diff opencode recorded for an edit
// (createTwoFilesPatch of the LF texts, then trimDiff, which may take the
// lines' common indentation off) to pre, the LF content before the edit.
// The indentation taken off is found from the first context or removed
// line, and put back on every line. ok is false when the diff does not fit
// pre, or its indentation cannot be told.
func ApplyOpencodeDiff(pre, diff string) (string, bool) {
	text, _, ok := applyOpencodeDiff(pre, diff)
	return text, ok
}

// applyOpencodeDiff is ApplyOpencodeDiff that also returns the indentation
// it put back on the diff's lines ("" when the diff was not trimmed): the
// added lines get it too, which is a guess when it is not empty.
func applyOpencodeDiff(pre, diff string) (string, string, bool) {
	lines := strings.Split(pre, "\n")
	finalNL := strings.HasSuffix(pre, "\n")
	if finalNL {
		lines = lines[:len(lines)-1]
	}
	if pre == "" {
		lines = nil
	}
	type hunk struct {
		start int // 0-based first old line
		body  []string
	}
	var hunks []hunk
	for _, l := range strings.Split(diff, "\n") {
		if m := hunkHeader.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			start := n - 1
			if m[2] == "0" {
				start = n
			}
			hunks = append(hunks, hunk{start: start})
			continue
		}
		if len(hunks) == 0 || l == "" {
			continue
		}
		switch l[0] {
		case ' ', '-', '+', '\\':
			hunks[len(hunks)-1].body = append(hunks[len(hunks)-1].body, l)
		}
	}
	if len(hunks) == 0 {
		return "", "", false
	}
	// The indentation trimDiff took off: from the first old line with text.
	prefix, found := "", false
	for _, h := range hunks {
		at := h.start
		for _, l := range h.body {
			if l[0] == '+' || l[0] == '\\' {
				continue
			}
			if at >= len(lines) {
				return "", "", false
			}
			if strings.TrimSpace(l[1:]) != "" {
				real := lines[at]
				if !strings.HasSuffix(real, l[1:]) || strings.TrimSpace(real[:len(real)-len(l)+1]) != "" {
					return "", "", false
				}
				prefix, found = real[:len(real)-len(l)+1], true
				break
			}
			at++
		}
		if found {
			break
		}
	}
	if !found {
		return "", "", false
	}
	restore := func(d string) string {
		if strings.TrimSpace(d) == "" && d == "" {
			return d
		}
		return prefix + d
	}
	fits := func(real, d string) bool {
		if real == prefix+d {
			return true
		}
		// A blank line shorter than the indentation was cut to nothing.
		return d == "" && strings.TrimSpace(real) == "" && len(real) <= len(prefix)
	}
	var out []string
	pos := 0
	newFinalNL := finalNL
	for _, h := range hunks {
		if h.start < pos || h.start > len(lines) {
			return "", "", false
		}
		out = append(out, lines[pos:h.start]...)
		at := h.start
		last := byte(0)
		for _, l := range h.body {
			switch l[0] {
			case ' ', '-':
				if at >= len(lines) || !fits(lines[at], l[1:]) {
					return "", "", false
				}
				if l[0] == ' ' {
					out = append(out, lines[at])
				}
				at++
			case '+':
				out = append(out, restore(l[1:]))
			case '\\':
				if last == '+' || last == ' ' {
					newFinalNL = false
				}
				continue
			}
			if l[0] != '\\' {
				last = l[0]
			}
		}
		if at == len(lines) && last == '+' {
			newFinalNL = true
			for _, l := range h.body[len(h.body)-1:] {
				if l[0] == '\\' {
					newFinalNL = false
				}
			}
		}
		pos = at
	}
	out = append(out, lines[pos:]...)
	text := strings.Join(out, "\n")
	if newFinalNL && len(out) > 0 {
		text += "\n"
	}
	return text, prefix, true
}
