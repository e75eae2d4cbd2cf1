package review

import (
	"fmt"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/charmbracelet/lipgloss"

	"github.com/agentsandbox/sandbox/internal/termsafe"
)

// dline is a line of the diff pane: a hunk's header (kind '@'), a line of
// it (' ', '-', '+'), or a line of a diff shown as it is (kind 0).
type dline struct {
	kind byte
	text string
	hunk int
}

// build computes a file's hunks and the diff pane's lines, once.
func (m *model) build(f *file) {
	if f.built {
		return
	}
	f.built = true
	f.styled = map[int]string{}
	p := f.plan
	if p.Hunkable() {
		f.hunkList = p.Hunks()
		for i, h := range f.hunkList {
			f.starts = append(f.starts, len(f.lines))
			f.lines = append(f.lines, dline{kind: '@', hunk: i,
				text: fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)})
			for _, l := range h.Lines {
				f.lines = append(f.lines, dline{kind: l.Kind, text: l.Text, hunk: i})
			}
		}
		return
	}
	for _, l := range strings.Split(strings.TrimSuffix(p.Diff(), "\n"), "\n") {
		if l != "" {
			f.lines = append(f.lines, dline{text: l, hunk: -1})
		}
	}
}

// diffLine renders line i of a file's diff: the current hunk marked in the
// gutter, the taken state on each hunk's header, the code coloured.
func (m *model) diffLine(f *file, i int) string {
	l := f.lines[i]
	gutter := "  "
	if l.hunk >= 0 && l.hunk == f.cur && len(f.hunkList) > 1 {
		gutter = m.st.render(m.st.cursor, "▌ ")
		if !m.st.color {
			gutter = "> "
		}
	}
	if l.kind == '@' {
		state := "left"
		st := m.st.left
		if f.hunkTaken(l.hunk) && f.writable() {
			state, st = "taken", m.st.taken
		}
		return gutter + m.st.render(m.st.hunk, l.text) + fmt.Sprintf("  hunk %d/%d ", l.hunk+1, len(f.hunkList)) + m.st.render(st, "["+state+"]")
	}
	s, ok := f.styled[i]
	if !ok {
		s = m.styleLine(f, l)
		f.styled[i] = s
	}
	return gutter + s
}

// styleLine colours one line of code: its diff mark, its syntax (by the
// file's name), on a green or red ground for an added or removed line.
// The content is made inert first: it never drives the terminal.
func (m *model) styleLine(f *file, l dline) string {
	text := strings.ReplaceAll(termsafe.Inert(strings.TrimRight(l.text, "\r\n")), "\t", "    ")
	if l.kind == 0 {
		switch {
		case strings.HasPrefix(text, "+++"), strings.HasPrefix(text, "---"):
			return m.st.render(m.st.bold, text)
		case strings.HasPrefix(text, "+"):
			return m.st.render(m.st.add, text)
		case strings.HasPrefix(text, "-"):
			return m.st.render(m.st.del, text)
		case strings.HasPrefix(text, "@@"):
			return m.st.render(m.st.hunk, text)
		}
		return text
	}
	if !m.st.color {
		return string(l.kind) + text
	}
	var bg lipgloss.Style
	mark := " "
	switch l.kind {
	case '+':
		bg, mark = m.st.addBg, m.st.add.Bold(true).Render("+")
	case '-':
		bg, mark = m.st.delBg, m.st.del.Bold(true).Render("-")
	default:
		bg = m.st.r.NewStyle()
	}
	var b strings.Builder
	b.WriteString(mark)
	for _, t := range m.tokens(f, text) {
		b.WriteString(bg.Inherit(m.tokenStyle(t.Type)).Render(t.Value))
	}
	return b.String()
}

// tokens splits a line into the syntax tokens of the file's language
// (one token when it has none that chroma knows).
func (m *model) tokens(f *file, text string) []chroma.Token {
	if !f.lexed {
		f.lexed = true
		if lx := lexers.Match(f.plan.Path()); lx != nil {
			f.lexer = chroma.Coalesce(lx)
		}
	}
	if f.lexer == nil {
		return []chroma.Token{{Type: chroma.Text, Value: text}}
	}
	it, err := f.lexer.Tokenise(nil, text)
	if err != nil {
		return []chroma.Token{{Type: chroma.Text, Value: text}}
	}
	var out []chroma.Token
	for t := it(); t != chroma.EOF; t = it() {
		t.Value = strings.TrimRight(t.Value, "\n")
		if t.Value != "" {
			out = append(out, t)
		}
	}
	return out
}

// tokenStyle is the colour of a kind of token.
func (m *model) tokenStyle(t chroma.TokenType) lipgloss.Style {
	r := m.st.r
	switch {
	case t.InCategory(chroma.Keyword):
		return r.NewStyle().Foreground(lipgloss.Color("170"))
	case t.InSubCategory(chroma.String):
		return r.NewStyle().Foreground(lipgloss.Color("114"))
	case t.InCategory(chroma.Comment):
		return r.NewStyle().Foreground(lipgloss.Color("245"))
	case t.InSubCategory(chroma.Number):
		return r.NewStyle().Foreground(lipgloss.Color("209"))
	case t == chroma.NameFunction || t == chroma.NameClass || t == chroma.NameBuiltin:
		return r.NewStyle().Foreground(lipgloss.Color("75"))
	}
	return r.NewStyle()
}
