package manifest

import "strings"

// Placeholder is a redaction placeholder found in a text: where a redactor
// put a marker in place of what it removed.
type Placeholder struct {
	// Line is the 1-based line that holds it.
	Line int
	// Text is the placeholder as written ("[REDACTED:github-token]").
	Text string
}

// The spellings a placeholder is found by: upper case (REDACTED, the
// form Entire's and gitleaks' redactors write and the one inside this
// tool's [REDACTED:kind]) and lower or title case (<redacted>, [redacted]).
// Mixed spellings such as ReDaCtEd are nobody's placeholder.
const (
	upperWord = "REDACTED"
	lowerWord = "redacted"
)

// mayHoldPlaceholder is the prefilter of FindPlaceholders: false means s
// holds no placeholder. It costs two substring searches, and most texts
// stop here. They look for the word's tail from its d: a search runs from
// its first byte, and d is several times rarer in text and code than e
// (docs/recover.md has the figures).
func mayHoldPlaceholder(s string) bool {
	return strings.Contains(s, "DACTED") || strings.Contains(s, "dacted")
}

// findPlaceholders calls yield with every redaction placeholder in s, in
// order, until yield returns false. The forms it knows:
//
//   - a bracketed word, upper or lower case, with anything a redactor adds
//     before the closing bracket on the same line: [REDACTED],
//     [REDACTED:kind] (this tool's --redact), [REDACTED_TEXT len=12],
//     <redacted>, <REDACTED>, {{REDACTED}};
//   - the bare upper-case word REDACTED standing as a token of its own, as
//     Entire's and gitleaks' redactors write it in place of a secret
//     (key=REDACTED, ?REDACTED.REDACTED, ***REDACTED***, a path's
//     .REDACTED. component);
//   - a REDACTED_NAME token (REDACTED_API_KEY).
//
// The word inside an identifier or prose (isRedacted, IS_REDACTED,
// unredacted, "the redacted file", Redacted as a type name) is not a
// placeholder.
func findPlaceholders(s string, yield func(Placeholder) bool) {
	find(s, func(start, end, line int) bool {
		return yield(Placeholder{Line: line, Text: s[start:end]})
	})
}

// find calls yield with the extent and line of every placeholder in s.
func find(s string, yield func(start, end, line int) bool) {
	if !mayHoldPlaceholder(s) {
		return
	}
	line, lineAt := 1, 0 // lines counted up to lineAt
	w := words{s: s, upper: -2, lower: -2}
	for i := 0; i < len(s); {
		j := w.next(i)
		if j < 0 {
			return
		}
		start, end, ok := placeholderAt(s, j)
		if !ok {
			i = j + len(upperWord)
			continue
		}
		line += strings.Count(s[lineAt:start], "\n")
		lineAt = start
		if !yield(start, end, line) {
			return
		}
		i = end
	}
}

// FirstPlaceholder returns the first placeholder in s.
func FirstPlaceholder(s string) (Placeholder, bool) {
	var p Placeholder
	found := false
	findPlaceholders(s, func(q Placeholder) bool {
		p, found = q, true
		return false
	})
	return p, found
}

// IntroducedPlaceholder returns the first placeholder of final that the
// change from start to final brought in: one on a line that is not a line
// of start. A placeholder the file already held before the session wrote
// it (code that names one, a config kept redacted) is the file's own text.
func IntroducedPlaceholder(start, final string) (Placeholder, bool) {
	var before map[string]bool // start's lines that may hold one, made when needed
	var p Placeholder
	found := false
	find(final, func(from, to, line int) bool {
		if before == nil {
			before = map[string]bool{}
			if mayHoldPlaceholder(start) {
				for _, l := range strings.Split(start, "\n") {
					if mayHoldPlaceholder(l) {
						before[strings.TrimSuffix(l, "\r")] = true
					}
				}
			}
		}
		l := final[strings.LastIndexByte(final[:from], '\n')+1:]
		if k := strings.IndexByte(l, '\n'); k >= 0 {
			l = l[:k]
		}
		if before[strings.TrimSuffix(l, "\r")] {
			return true
		}
		p, found = Placeholder{Line: line, Text: final[from:to]}, true
		return false
	})
	return p, found
}

// words finds the word "redacted" in a text, in upper, lower or title
// case, one occurrence after another.
type words struct {
	s string
	// upper and lower are the next "DACTED" and "dacted" at or after the
	// last search, -1 when there is none, -2 before the first search: each
	// is searched for again only once passed, so a text full of one spelling
	// is read once for the other.
	upper, lower int
}

// next returns the index of the next word in s at or after i, or -1.
func (w *words) next(i int) int {
	s := w.s
	for i < len(s) {
		w.upper = search(s, "DACTED", i, w.upper)
		w.lower = search(s, "dacted", i, w.lower)
		k := w.upper
		if k < 0 || (w.lower >= 0 && w.lower < k) {
			k = w.lower
		}
		if k < 0 {
			return -1
		}
		if k >= 2 {
			switch s[k-2 : k] {
			case "RE":
				if s[k] == 'D' {
					return k - 2
				}
			case "re", "Re":
				if s[k] == 'd' {
					return k - 2
				}
			}
		}
		i = k + 1
	}
	return -1
}

// search returns the next index of sub in s at or after i, given the last
// one found (at), searching again only when at is before i.
func search(s, sub string, i, at int) int {
	if at == -1 || at >= i {
		return at
	}
	if k := strings.Index(s[i:], sub); k >= 0 {
		return i + k
	}
	return -1
}

// placeholderAt reports whether the word at j (see words) is a
// placeholder, and its extent.
func placeholderAt(s string, j int) (start, end int, ok bool) {
	w := s[j : j+len(upperWord)]
	upper := w == upperWord
	after := j + len(w)
	if !upper && w != lowerWord {
		return 0, 0, false // Redacted: a name, never a redactor's marker
	}
	// Bracketed: an opening bracket right before, its closer after the word
	// and whatever a redactor adds (":kind", "_TEXT len=12") on the line.
	if j > 0 {
		if closer := closerOf(s[j-1]); closer != 0 && (after == len(s) || !isAlnum(s[after])) {
			open := j - 1
			for open > 0 && s[open-1] == s[j-1] && j-1-open < 3 {
				open-- // {{REDACTED}}
			}
			if k := closing(s[after:], closer); k >= 0 {
				end = after + k + 1
				for end < len(s) && s[end] == closer && end-(after+k) < 3 {
					end++
				}
				return open, end, true
			}
		}
	}
	if !upper {
		return 0, 0, false // bare lower case: a word of prose
	}
	// Bare upper case: a token of its own, not part of an identifier.
	if j > 0 && (isAlnum(s[j-1]) || s[j-1] == '_') {
		return 0, 0, false
	}
	end = after
	if end < len(s) && s[end] == '_' {
		// REDACTED_API_KEY: an upper-case name after the underscore.
		k := end + 1
		for k < len(s) && (s[k] >= 'A' && s[k] <= 'Z' || s[k] >= '0' && s[k] <= '9' || s[k] == '_') {
			k++
		}
		if k == end+1 || k < len(s) && isAlnum(s[k]) {
			return 0, 0, false
		}
		end = k
	} else if end < len(s) && isAlnum(s[end]) {
		return 0, 0, false
	}
	return j, end, true
}

// closerOf returns the bracket that closes open, or 0 when open opens no
// placeholder. A parenthesis or an asterisk does not: "(redacted)" and
// "*redacted*" are prose (***REDACTED*** is found as the bare word).
func closerOf(open byte) byte {
	switch open {
	case '[':
		return ']'
	case '<':
		return '>'
	case '{':
		return '}'
	}
	return 0
}

// closing returns the index of closer in s, on the first line and within
// what a redactor adds after the word, or -1.
func closing(s string, closer byte) int {
	const most = 80
	for k := 0; k < len(s) && k < most; k++ {
		switch s[k] {
		case closer:
			return k
		case '\n', '[', '<', '{':
			return -1
		}
	}
	return -1
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
