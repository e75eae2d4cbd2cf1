package recover

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
	sgdiff "github.com/sourcegraph/go-diff/diff"
)

// splitLinesKeep splits text into lines that keep their "\n", so that a
// missing final newline survives a merge.
func splitLinesKeep(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// edit replaces base lines [from, to) with lines.
type edit struct {
	from, to int
	lines    []string
}

// lineEdits returns the edits that turn a into b, computed by
// diffmatchpatch on the lines, each distinct line written as one rune.
//
// The lines are numbered here, not by diffmatchpatch's DiffLinesToRunes,
// which numbers them into the UTF-16 surrogates past 55,295 distinct lines
// and then panics (index out of range): a file of 60,000 lines crashed the
// dry run's diff and a three-way merge. Runes here skip the surrogates, and
// are otherwise those diffmatchpatch gives (so are the diffs); past the last
// rune (over a million distinct lines) what lies between the common first
// and last lines is one edit, which is right if not minimal.
func lineEdits(a, b string) []edit {
	la, lb := splitLinesKeep(a), splitLinesKeep(b)
	ra, rb, table, ok := linesToRunes(la, lb)
	if !ok {
		return coarseEdit(la, lb)
	}
	diffs := runeDiff(ra, rb)
	var out []edit
	pos := 0
	var cur *edit
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			pos += n
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &edit{from: pos, to: pos}
			}
			cur.to += n
			pos += n
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &edit{from: pos, to: pos}
			}
			for _, r := range d.Text {
				cur.lines = append(cur.lines, table[runeIndex(r)])
			}
		}
	}
	flush()
	return out
}

// commonEnds returns how many first and last elements a and b share, the
// last ones counted only past the first.
func commonEnds[T comparable](a, b []T) (head, tail int) {
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	return head, tail
}

// coarseEdit is the one edit that replaces what lies between a's and b's
// common first and last lines.
func coarseEdit(la, lb []string) []edit {
	head, tail := commonEnds(la, lb)
	if head+tail == len(la) && head+tail == len(lb) {
		return nil
	}
	return []edit{{from: head, to: len(la) - tail, lines: lb[head : len(lb)-tail]}}
}

// linesToRunes writes each distinct line of a and b as one rune, from 1
// up, skipping the surrogates (which a string cannot hold); table[i] is the
// line of the rune whose runeIndex is i. ok is false when there are more
// distinct lines than runes.
func linesToRunes(a, b []string) (ra, rb []rune, table []string, ok bool) {
	ids := make(map[string]rune, len(a))
	table = []string{""}
	next := rune(1)
	conv := func(lines []string) ([]rune, bool) {
		out := make([]rune, len(lines))
		for i, l := range lines {
			r, seen := ids[l]
			if !seen {
				if next > utf8.MaxRune {
					return nil, false
				}
				r = next
				ids[l] = r
				table = append(table, l)
				if next++; next == surrogateMin {
					next = surrogateMax + 1
				}
			}
			out[i] = r
		}
		return out, true
	}
	if ra, ok = conv(a); !ok {
		return nil, nil, nil, false
	}
	if rb, ok = conv(b); !ok {
		return nil, nil, nil, false
	}
	return ra, rb, table, true
}

const surrogateMin, surrogateMax = 0xD800, 0xDFFF

// runeIndex is the index in linesToRunes's table of the line of r.
func runeIndex(r rune) int {
	if r > surrogateMax {
		return int(r) - (surrogateMax - surrogateMin + 1)
	}
	return int(r)
}

// diffName quotes a file name as git does when it holds a control byte, a
// quote or a backslash, so a name can never break a diff's header into
// lines of its own.
func diffName(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f || c == '"' || c == '\\' {
			return strconv.Quote(name)
		}
	}
	return name
}

// UnifiedDiff returns a unified diff from a to b with three lines of
// context, "" when they are equal.
func UnifiedDiff(oldName, newName, a, b string) string {
	hunks := Hunks(a, b)
	if len(hunks) == 0 {
		return ""
	}
	fd := &sgdiff.FileDiff{OrigName: diffName(oldName), NewName: diffName(newName)}
	for _, h := range hunks {
		var body strings.Builder
		for _, l := range h.Lines {
			body.WriteByte(l.Kind)
			body.WriteString(l.Text)
			if !strings.HasSuffix(l.Text, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		fd.Hunks = append(fd.Hunks, &sgdiff.Hunk{OrigStartLine: int32(h.OldStart), OrigLines: int32(h.OldLines),
			NewStartLine: int32(h.NewStart), NewLines: int32(h.NewLines), Body: []byte(body.String())})
	}
	out, err := sgdiff.PrintFileDiff(fd)
	if err != nil {
		return ""
	}
	return string(out)
}

// Hunk is one hunk of a diff as UnifiedDiff prints it: the line edits
// whose three lines of context touch, with that context. A review takes or
// leaves each (ApplyHunks).
type Hunk struct {
	// OldStart and NewStart are the first lines in a and b (from 1; the
	// line before, as diff says it, when the side has no line), OldLines
	// and NewLines how many lines of each the hunk covers.
	OldStart, OldLines, NewStart, NewLines int
	Lines                                  []HunkLine
	edits                                  []edit
}

// HunkLine is a line of a hunk: Kind is ' ' (context), '-' (a's only) or
// '+' (b's only); Text keeps its line end, and has none at the end of a
// file without a final newline.
type HunkLine struct {
	Kind byte
	Text string
}

// Added and Removed count the hunk's lines of b and of a.
func (h Hunk) Added() int   { return h.NewLines - h.context() }
func (h Hunk) Removed() int { return h.OldLines - h.context() }

func (h Hunk) context() int {
	n := 0
	for _, l := range h.Lines {
		if l.Kind == ' ' {
			n++
		}
	}
	return n
}

// Hunks returns the hunks of the diff from a to b, three lines of context
// each (none when they are equal).
func Hunks(a, b string) []Hunk {
	if a == b {
		return nil
	}
	al := splitLinesKeep(a)
	edits := lineEdits(a, b)
	const ctx = 3
	var out []Hunk
	shift := 0 // the lines earlier hunks added, net
	for k := 0; k < len(edits); {
		// group edits whose context windows touch
		g := k + 1
		for g < len(edits) && edits[g].from-edits[g-1].to <= 2*ctx {
			g++
		}
		from := max(0, edits[k].from-ctx)
		to := min(len(al), edits[g-1].to+ctx)
		h := Hunk{edits: edits[k:g]}
		pos := from
		add := func(kind byte, lines []string) {
			for _, l := range lines {
				h.Lines = append(h.Lines, HunkLine{Kind: kind, Text: l})
				if kind != '+' {
					h.OldLines++
				}
				if kind != '-' {
					h.NewLines++
				}
			}
		}
		for _, e := range edits[k:g] {
			add(' ', al[pos:e.from])
			add('-', al[e.from:e.to])
			add('+', e.lines)
			pos = e.to
		}
		add(' ', al[pos:to])
		h.OldStart, h.NewStart = from+1, from+1+shift
		if h.OldLines == 0 {
			h.OldStart = from
		}
		if h.NewLines == 0 {
			h.NewStart--
		}
		for _, e := range edits[k:g] {
			shift += len(e.lines) - (e.to - e.from)
		}
		out = append(out, h)
		k = g
	}
	return out
}

// ApplyHunks returns a with the hunks take says yes to applied (hunks are
// Hunks(a, b); take[i] is hunk i): all of them give b, none give a.
func ApplyHunks(a string, hunks []Hunk, take []bool) string {
	var edits []edit
	for i, h := range hunks {
		if i < len(take) && take[i] {
			edits = append(edits, h.edits...)
		}
	}
	return applyEdits(a, edits)
}

// applyEdits replays edits of lineEdits(a, …), in order, on a.
func applyEdits(a string, edits []edit) string {
	al := splitLinesKeep(a)
	var out strings.Builder
	out.Grow(len(a))
	pos := 0
	for _, e := range edits {
		for _, l := range al[pos:e.from] {
			out.WriteString(l)
		}
		for _, l := range e.lines {
			out.WriteString(l)
		}
		pos = e.to
	}
	for _, l := range al[pos:] {
		out.WriteString(l)
	}
	return out.String()
}
