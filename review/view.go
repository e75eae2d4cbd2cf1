package review

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/internal/termsafe"
	recov "github.com/agentsandbox/sandbox/recover"
)

type styles struct {
	r                              *lipgloss.Renderer
	color                          bool
	border, focused                lipgloss.Style
	title, dim, bold, sel, cursor  lipgloss.Style
	add, del, hunk, addBg, delBg   lipgloss.Style
	grades                         map[recov.Confidence]lipgloss.Style
	taken, left, partial, question lipgloss.Style
}

func newStyles(color bool) styles {
	r := lipgloss.NewRenderer(nil)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	s := styles{r: r, color: color}
	box := r.NewStyle().Border(lipgloss.RoundedBorder())
	s.border = box.BorderForeground(lipgloss.Color("240"))
	s.focused = box.BorderForeground(lipgloss.Color("69"))
	s.title = r.NewStyle().Bold(true)
	s.dim = r.NewStyle().Foreground(lipgloss.Color("244"))
	s.bold = r.NewStyle().Bold(true)
	s.sel = r.NewStyle().Reverse(true)
	s.cursor = r.NewStyle().Foreground(lipgloss.Color("69")).Bold(true)
	s.add = r.NewStyle().Foreground(lipgloss.Color("40"))
	s.del = r.NewStyle().Foreground(lipgloss.Color("160"))
	s.hunk = r.NewStyle().Foreground(lipgloss.Color("38"))
	s.addBg = r.NewStyle().Background(lipgloss.Color("22"))
	s.delBg = r.NewStyle().Background(lipgloss.Color("52"))
	s.taken = r.NewStyle().Foreground(lipgloss.Color("40")).Bold(true)
	s.partial = r.NewStyle().Foreground(lipgloss.Color("178")).Bold(true)
	s.left = r.NewStyle().Foreground(lipgloss.Color("244"))
	s.question = r.NewStyle().Foreground(lipgloss.Color("178")).Bold(true)
	s.grades = map[recov.Confidence]lipgloss.Style{
		recov.Exact:          r.NewStyle().Foreground(lipgloss.Color("40")),
		recov.Git:            r.NewStyle().Foreground(lipgloss.Color("76")),
		recov.HostBased:      r.NewStyle().Foreground(lipgloss.Color("178")),
		recov.Merged:         r.NewStyle().Foreground(lipgloss.Color("178")),
		recov.Stale:          r.NewStyle().Foreground(lipgloss.Color("208")),
		recov.UnknownOutcome: r.NewStyle().Foreground(lipgloss.Color("208")),
		recov.Redacted:       r.NewStyle().Foreground(lipgloss.Color("160")),
	}
	return s
}

// render applies a style only when colouring (attributes too: under
// NO_COLOR the screen is plain text, the cursor shown by its mark).
func (s styles) render(st lipgloss.Style, text string) string {
	if !s.color {
		return text
	}
	return st.Render(text)
}

// layout is where the panes are: the left column's width, the sessions
// pane's height, the body's height.
func (m *model) layout() (left, sessions, body int) {
	body = max(m.h-2, 6)
	left = clampInt(m.w*2/5, 24, 72)
	if m.w-left < 20 {
		left = max(m.w/2, 10)
	}
	sessions = clampInt(len(m.counts)+3, 4, body/3)
	return left, sessions, body
}

// pageSize is how many rows the focused pane shows.
func (m *model) pageSize() int {
	_, sh, body := m.layout()
	switch m.focus {
	case paneSessions:
		return sh - 3
	case paneFiles:
		return body - sh - 3
	}
	return m.diffHeight()
}

// diffHeight is how many lines of the diff the right pane shows.
func (m *model) diffHeight() int {
	_, _, body := m.layout()
	return max(body-2-m.headerLines(), 1)
}

// clamp keeps cursors and scrolls inside what there is.
func (m *model) clamp() {
	_, sh, body := m.layout()
	rows := sh - 3
	m.scur = clampInt(m.scur, 0, max(len(m.counts)-1, 0))
	m.stop = clampInt(m.stop, m.scur-rows+1, m.scur)
	m.stop = max(m.stop, 0)
	rows = body - sh - 3
	m.fcur = clampInt(m.fcur, 0, max(len(m.view)-1, 0))
	m.ftop = clampInt(m.ftop, m.fcur-rows+1, m.fcur)
	m.ftop = max(m.ftop, 0)
	n := m.rightLines()
	m.dtop = clampInt(m.dtop, 0, max(n-m.diffHeight(), 0))
}

// rightLines is how many lines the right pane's content has.
func (m *model) rightLines() int {
	switch m.right {
	case showTimeline:
		return len(strings.Split(m.timelineText(), "\n"))
	case showHelp:
		return len(helpLines)
	}
	if f := m.current(); f != nil {
		return len(f.lines)
	}
	return 0
}

func (m *model) View() string {
	lw, sh, body := m.layout()
	taken, partial, left := m.tally()
	title := fmt.Sprintf(" sandbox review · %d session%s · %d file%s · %d taken", len(m.d.Sessions), plural.S(len(m.d.Sessions)),
		len(m.files), plural.S(len(m.files)), taken)
	if partial > 0 {
		title += fmt.Sprintf(" (%d in part)", partial)
	}
	title += fmt.Sprintf(" · %d left", left)
	lines := []string{m.st.render(m.st.title, fit(title, m.w))}
	sess := m.box(m.sessionsLines(lw-2, sh-2), lw, sh, m.focus == paneSessions)
	files := m.box(m.filesLines(lw-2, body-sh-2), lw, body-sh, m.focus == paneFiles)
	right := m.box(m.rightPane(m.w-lw-2, body-2), m.w-lw, body, m.focus == paneDiff)
	bodyText := lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.JoinVertical(lipgloss.Left, sess, files), right)
	lines = append(lines, bodyText, m.statusLine())
	return strings.Join(lines, "\n")
}

// box draws a pane of w×h cells (border included) around lines.
func (m *model) box(lines []string, w, h int, focused bool) string {
	st := m.st.border
	if focused {
		st = m.st.focused
	}
	iw, ih := max(w-2, 1), max(h-2, 1)
	for len(lines) < ih {
		lines = append(lines, "")
	}
	lines = lines[:ih]
	for i, l := range lines {
		lines[i] = pad(l, iw)
	}
	if !m.st.color {
		st = lipgloss.NewStyle().Renderer(m.st.r).Border(lipgloss.NormalBorder())
		if focused {
			st = st.Border(lipgloss.DoubleBorder())
		}
	}
	return st.Render(strings.Join(lines, "\n"))
}

// fit truncates a line (styled or not) to w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// tail keeps the end of a path that is wider than w cells: its file name.
func tail(s string, w int) string {
	if n := ansi.StringWidth(s); n > w && w > 1 {
		return ansi.TruncateLeft(s, n-w+1, "…")
	}
	return s
}

// pad truncates or pads a line to exactly w cells.
func pad(s string, w int) string {
	s = fit(s, w)
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

func (m *model) heading(text string, w int) string {
	return m.st.render(m.st.title, fit(text, w))
}

func (m *model) sessionsLines(w, h int) []string {
	out := []string{m.heading("Sessions", w)}
	rows := h - 1
	for r := m.stop; r < len(m.counts) && r < m.stop+rows; r++ {
		var text string
		if m.all && r == 0 {
			text = fmt.Sprintf("all %d sessions", len(m.d.Sessions))
			if len(m.d.Sessions) == 0 {
				text = "no session"
			}
		} else {
			i := r
			if m.all {
				i--
			}
			s := m.d.Sessions[i]
			start := "?"
			if !s.Start.IsZero() {
				start = s.Start.Local().Format("01-02 15:04")
			}
			text = fmt.Sprintf("%-7s %s  %-6s %s  %s", termsafe.Printable(s.Agent), start, fmt.Sprintf("%d file%s", m.counts[r], plural.S(m.counts[r])),
				termsafe.Printable(s.Verdict), termsafe.Printable(project(s.Project)))
		}
		if m.all && r == 0 {
			text += fmt.Sprintf("  %d file%s", m.counts[r], plural.S(m.counts[r]))
		}
		out = append(out, m.row(text, r == m.scur, m.focus == paneSessions, w))
	}
	return out
}

// row draws a list row: the cursor's mark, and reversed when its pane has
// the focus.
func (m *model) row(text string, cur, focused bool, w int) string {
	mark := "  "
	if cur {
		mark = "› "
	}
	line := fit(mark+text, w)
	if cur && focused {
		return m.st.render(m.st.sel, pad(line, w))
	}
	if cur {
		return m.st.render(m.st.cursor, line)
	}
	return line
}

func (m *model) filesLines(w, h int) []string {
	head := fmt.Sprintf("Files (%d)", len(m.view))
	if m.query != "" || m.searching {
		head += "  " + m.search.View()
		if !m.searching {
			head = fmt.Sprintf("Files (%d matching /%s)", len(m.view), m.query)
		}
	}
	out := []string{m.heading(head, w)}
	rows := h - 1
	// The path comes first, so that a narrow pane still shows it; the
	// paths shown set its column's width.
	pathW, actW, gradeW, baseW, driftW := 0, 0, 0, 0, 0
	for r := m.ftop; r < len(m.view) && r < m.ftop+rows; r++ {
		p := m.files[m.view[r]].plan
		pathW = max(pathW, ansi.StringWidth(termsafe.Printable(p.Path())))
		actW, gradeW = max(actW, len(p.Action)), max(gradeW, len(p.Grade()))
		baseW = max(baseW, len(baseOr(p.File.Base)))
		if n := len(p.File.Drift); n > 0 {
			driftW = max(driftW, len(drift(n)))
		}
	}
	// The base and the drift have a column when the path keeps 24 cells.
	rest := w - 2 - 4 - actW - 1 - gradeW - 1
	if rest-baseW-1 < 24 {
		baseW = 0
	}
	if rest-baseW-1-driftW-1 < 24 {
		driftW = 0
	}
	if baseW > 0 {
		rest -= baseW + 1
	}
	if driftW > 0 {
		rest -= driftW + 1
	}
	pathW = min(pathW, max(rest, 12))
	for r := m.ftop; r < len(m.view) && r < m.ftop+rows; r++ {
		f := m.files[m.view[r]]
		g := f.plan.Grade()
		grade := fmt.Sprintf("%-*s", gradeW, g)
		plain := r == m.fcur && m.focus == paneFiles // the reversed row
		if st, ok := m.st.grades[g]; ok && !plain {
			grade = m.st.render(st, grade)
		}
		mark := f.state()
		if !plain {
			switch mark {
			case "[x]":
				mark = m.st.render(m.st.taken, mark)
			case "[~]":
				mark = m.st.render(m.st.partial, mark)
			}
		}
		text := fmt.Sprintf("%s %s %-*s %s", mark, pad(tail(termsafe.Printable(f.plan.Path()), pathW), pathW), actW, f.plan.Action, grade)
		if baseW > 0 {
			base := fmt.Sprintf("%-*s", baseW, baseOr(f.plan.File.Base))
			if !plain {
				base = m.st.render(m.st.dim, base)
			}
			text += " " + base
		}
		if n := len(f.plan.File.Drift); driftW > 0 && n > 0 {
			d := drift(n)
			if !plain {
				d = m.st.render(m.st.question, d)
			}
			text += " " + d
		}
		out = append(out, m.row(text, r == m.fcur, m.focus == paneFiles, w))
	}
	if len(m.view) == 0 {
		out = append(out, m.st.render(m.st.dim, "  (no file)"))
	}
	return out
}

// headerLines is how many lines the right pane's header takes.
func (m *model) headerLines() int {
	return len(m.rightHeader(1 << 10))
}

func (m *model) rightHeader(w int) []string {
	switch m.right {
	case showTimeline:
		return []string{m.heading("Timeline of "+m.timelineSession()+"  (t: back to the diff)", w)}
	case showHelp:
		return []string{m.heading("Keys  (? or esc: back)", w)}
	}
	f := m.current()
	if f == nil {
		return []string{m.heading("Diff", w)}
	}
	p := f.plan
	g := string(p.Grade())
	if st, ok := m.st.grades[p.Grade()]; ok {
		g = m.st.render(st, g)
	}
	out := []string{m.heading(termsafe.Printable(p.Path()), w)}
	info := fmt.Sprintf("%s · %s · %d op%s · base %s", p.Action, g, p.File.Ops, plural.S(p.File.Ops), baseOr(p.File.Base))
	if n := len(f.hunkList); n > 0 {
		info += fmt.Sprintf(" · hunk %d/%d", f.cur+1, n)
	}
	out = append(out, fit(info, w))
	if p.Reason != "" {
		out = append(out, fit(m.st.render(m.st.dim, termsafe.Printable(p.Reason)), w))
	}
	if p.File.Reason != "" && p.File.Reason != p.Reason {
		out = append(out, fit(m.st.render(m.st.dim, termsafe.Printable(p.File.Reason)), w))
	}
	for i, d := range p.File.Drift {
		if i == 2 {
			out = append(out, fit(fmt.Sprintf("… %d more drift", len(p.File.Drift)-2), w))
			break
		}
		out = append(out, fit(m.st.render(m.st.question, "drift: ")+termsafe.Printable(d), w))
	}
	if f.writable() && !p.Hunkable() {
		out = append(out, fit(m.st.render(m.st.dim, "taken or left whole (space)"), w))
	}
	return append(out, "")
}

// drift is the files pane's mark of a file whose evidence disagreed with
// the replay n times.
func drift(n int) string { return fmt.Sprintf("drift %d", n) }

func baseOr(b string) string {
	if b == "" {
		return "unknown"
	}
	return b
}

func (m *model) timelineText() string {
	t, ok := m.timelines[m.timelineSession()]
	switch {
	case !ok || t.loading:
		return "reading the session…"
	case t.err != nil:
		return "could not read the timeline: " + t.err.Error()
	}
	return t.text
}

func (m *model) rightPane(w, h int) []string {
	out := m.rightHeader(w)
	rows := max(h-len(out), 1)
	var body []string
	switch m.right {
	case showTimeline:
		body = strings.Split(m.timelineText(), "\n")
		for i := range body {
			body[i] = termsafe.Inert(strings.ReplaceAll(body[i], "\t", "  "))
		}
	case showHelp:
		body = helpLines
	default:
		f := m.current()
		if f == nil {
			return append(out, m.st.render(m.st.dim, "no file selected"))
		}
		for i := m.dtop; i < len(f.lines) && i < m.dtop+rows; i++ {
			out = append(out, fit(m.diffLine(f, i), w))
		}
		if len(f.lines) == 0 {
			out = append(out, m.st.render(m.st.dim, "nothing to show: "+string(f.plan.Action)))
		}
		return out
	}
	for i := m.dtop; i < len(body) && i < m.dtop+rows; i++ {
		out = append(out, fit(body[i], w))
	}
	return out
}

func (m *model) statusLine() string {
	var s string
	switch {
	case m.confirm:
		taken, partial, left := m.tally()
		q := fmt.Sprintf("Write %d file%s", taken, plural.S(taken))
		if partial > 0 {
			q += fmt.Sprintf(" (%d in part)", partial)
		}
		q += fmt.Sprintf(" and leave %d? [y/N]", left)
		return m.st.render(m.st.question, fit(q, m.w))
	case m.searching:
		s = "type to filter the paths · enter keeps the filter · esc clears it"
	case m.status != "":
		s = m.status
	default:
		s = "space take file · y/n hunk · a exact · / search · t timeline · o report · enter write · q quit · ? keys"
	}
	return fit(s, m.w)
}

var helpLines = []string{
	"j k ↓ ↑     move in the pane (in the diff: scroll)",
	"tab h l     next pane, pane to the left or right",
	"g G         first, last; pgup pgdown a page",
	"space       take or leave the selected file, all of it",
	"y n         take or leave the current hunk, then the next",
	"[ ]         previous, next hunk",
	"a           take every file graded exact",
	"A           take every file that would be written",
	"u           leave every file",
	"/           search the paths (enter keeps, esc clears)",
	"t           the session's timeline (turns, calls, outcomes)",
	"o           the session's HTML report, opened in a browser",
	"enter       write what is taken (asks first)",
	"q esc ^C    quit, writing nothing",
	"",
	"Files: [x] taken  [~] some hunks taken  [ ] left  - nothing to write.",
	"A file taken in part is written as the host's copy with the hunks taken.",
	"What is written goes through the journal: sandbox undo reverses it.",
}
