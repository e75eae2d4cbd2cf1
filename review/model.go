package review

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	recov "github.com/agentsandbox/sandbox/recover"

	"github.com/agentsandbox/sandbox/internal/plural"
)

type pane int

const (
	paneSessions pane = iota
	paneFiles
	paneDiff
	panes
)

// file is one plan and what the user took of it.
type file struct {
	plan *recov.FilePlan
	// take and hunks are the choice: hunks nil follows take for every
	// hunk; otherwise hunks says which are taken (some, never all or none:
	// set normalises that back to take).
	take  bool
	hunks []bool
	// cur is the current hunk; lines the diff as shown, built on first view.
	cur      int
	built    bool
	hunkList []recov.Hunk
	lines    []dline
	starts   []int // the line of each hunk's header
	styled   map[int]string
	// lexer colours the code (nil: no language chroma knows).
	lexer chroma.Lexer
	lexed bool
}

// writable says whether the plan writes anything a review can take.
func (f *file) writable() bool { return f.plan.Written() && f.plan.Mapped }

// state is the file's mark: taken whole, in part, left, or nothing to take.
func (f *file) state() string {
	switch {
	case !f.writable():
		return " - "
	case f.hunks != nil:
		return "[~]"
	case f.take:
		return "[x]"
	}
	return "[ ]"
}

// set takes or leaves hunk i (every hunk for i < 0) and normalises.
func (f *file) set(i int, take bool) {
	if i < 0 || len(f.hunkList) < 2 {
		f.take, f.hunks = take, nil
		return
	}
	if f.hunks == nil {
		f.hunks = make([]bool, len(f.hunkList))
		for k := range f.hunks {
			f.hunks[k] = f.take
		}
	}
	f.hunks[i] = take
	n := 0
	for _, t := range f.hunks {
		if t {
			n++
		}
	}
	switch n {
	case 0:
		f.take, f.hunks = false, nil
	case len(f.hunks):
		f.take, f.hunks = true, nil
	default:
		f.take = true
	}
}

// hunkTaken says whether hunk i is taken.
func (f *file) hunkTaken(i int) bool {
	if f.hunks != nil {
		return i < len(f.hunks) && f.hunks[i]
	}
	return f.take
}

type rightMode int

const (
	showDiff rightMode = iota
	showTimeline
	showHelp
)

type model struct {
	ctx context.Context
	d   Data
	st  styles
	w   int
	h   int

	focus pane
	// sessions pane: row 0 is every session when there are several.
	scur, stop int
	all        bool
	counts     []int // files per session row

	files      []*file
	view       []int // the files shown: the session's, matching the search
	fcur, ftop int

	dtop  int // the diff pane's first line shown
	right rightMode

	searching bool
	search    textinput.Model
	query     string

	confirm bool
	apply   bool
	status  string

	timelines map[string]timeline
}

type timeline struct {
	text    string
	err     error
	loading bool
}

func newModel(ctx context.Context, d Data) *model {
	m := &model{ctx: ctx, d: d, st: newStyles(d.Color), w: 100, h: 30, focus: paneFiles, timelines: map[string]timeline{}}
	m.all = len(d.Sessions) != 1
	for _, p := range d.Plans {
		m.files = append(m.files, &file{plan: p})
	}
	rows := len(d.Sessions)
	if m.all {
		rows++
	}
	m.counts = make([]int, rows)
	for _, f := range m.files {
		for i, s := range d.Sessions {
			if slices.Contains(f.plan.File.Sessions, s.ID) {
				m.counts[m.sessionRow(i)]++
			}
		}
	}
	if m.all {
		m.counts[0] = len(m.files)
	}
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "path"
	m.search = ti
	m.refilter()
	return m
}

func (m *model) sessionRow(i int) int {
	if m.all {
		return i + 1
	}
	return i
}

// session is the selected session, nil for every session.
func (m *model) session() *Session {
	i := m.scur
	if m.all {
		i--
	}
	if i < 0 || i >= len(m.d.Sessions) {
		return nil
	}
	return &m.d.Sessions[i]
}

// refilter recomputes the files shown, keeping the selected one if it
// still is.
func (m *model) refilter() {
	var keep *file
	if m.fcur < len(m.view) {
		keep = m.files[m.view[m.fcur]]
	}
	s := m.session()
	q := strings.ToLower(m.query)
	m.view = m.view[:0]
	for i, f := range m.files {
		if s != nil && !slices.Contains(f.plan.File.Sessions, s.ID) {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(f.plan.Path()), q) {
			continue
		}
		m.view = append(m.view, i)
	}
	m.fcur = 0
	for i, k := range m.view {
		if m.files[k] == keep {
			m.fcur = i
		}
	}
	m.dtop = 0
	m.clamp()
}

// current is the selected file, nil when none is shown.
func (m *model) current() *file {
	if m.fcur < 0 || m.fcur >= len(m.view) {
		return nil
	}
	f := m.files[m.view[m.fcur]]
	m.build(f)
	return f
}

func (m *model) Init() tea.Cmd { return nil }

type timelineMsg struct {
	id   string
	text string
	err  error
}

type reportMsg struct {
	file, opener string
	err          error
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.clamp()
		return m, nil
	case timelineMsg:
		m.timelines[msg.id] = timeline{text: msg.text, err: msg.err}
		return m, nil
	case reportMsg:
		switch {
		case msg.err != nil:
			m.status = "report: " + msg.err.Error()
		case msg.opener != "":
			m.status = fmt.Sprintf("report %s opened with %s", msg.file, msg.opener)
		default:
			m.status = fmt.Sprintf("report written to %s (no browser here: open it yourself)", msg.file)
		}
		return m, nil
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !m.searching && !k.Paste {
		// Keys typed faster than they are read (over SSH, from tmux)
		// arrive as one message: each is a key of its own.
		var cmds []tea.Cmd
		for i, r := range k.Runes {
			if m.searching {
				// what follows a / is the search's
				_, cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: k.Runes[i:]})
				cmds = append(cmds, cmd)
				break
			}
			_, cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			cmds = append(cmds, cmd)
			if m.apply {
				break
			}
		}
		return m, tea.Batch(cmds...)
	}
	key := k.String()
	if key == "ctrl+c" {
		return m, tea.Quit
	}
	if m.searching {
		switch key {
		case "enter":
			m.searching = false
			m.search.Blur()
			return m, nil
		case "esc":
			m.searching = false
			m.search.Blur()
			m.search.SetValue("")
			m.query = ""
			m.refilter()
			return m, nil
		}
		var cmd tea.Cmd
		m.search, cmd = m.search.Update(k)
		if v := m.search.Value(); v != m.query {
			m.query = v
			m.refilter()
		}
		return m, cmd
	}
	if m.confirm {
		switch key {
		case "y", "Y", "enter":
			m.apply = true
			return m, tea.Quit
		case "n", "N", "esc", "q":
			m.confirm = false
			m.status = "nothing written"
		}
		return m, nil
	}
	m.status = ""
	switch key {
	case "q":
		return m, tea.Quit
	case "esc":
		if m.right != showDiff {
			m.right = showDiff
			return m, nil
		}
		if m.query != "" {
			m.query = ""
			m.search.SetValue("")
			m.refilter()
			return m, nil
		}
		return m, tea.Quit
	case "?":
		m.toggle(showHelp)
	case "tab":
		m.focus = (m.focus + 1) % panes
	case "shift+tab":
		m.focus = (m.focus + panes - 1) % panes
	case "h", "left":
		if m.focus > paneSessions {
			m.focus--
		}
	case "l", "right":
		if m.focus < paneDiff {
			m.focus++
		}
	case "j", "down":
		m.move(1)
	case "k", "up":
		m.move(-1)
	case "pgdown", "ctrl+f", "ctrl+d":
		m.move(max(1, m.pageSize()))
	case "pgup", "ctrl+b", "ctrl+u":
		m.move(-max(1, m.pageSize()))
	case "g", "home":
		m.move(-1 << 30)
	case "G", "end":
		m.move(1 << 30)
	case " ":
		m.toggleFile()
	case "y":
		m.takeHunk(true)
	case "n":
		m.takeHunk(false)
	case "]":
		m.jumpHunk(1)
	case "[":
		m.jumpHunk(-1)
	case "a":
		m.takeAll(func(f *file) bool { return f.plan.Grade() == recov.Exact }, "graded exact")
	case "A":
		m.takeAll(func(*file) bool { return true }, "")
	case "u":
		for _, f := range m.files {
			f.take, f.hunks = false, nil
		}
		m.status = "every file left"
	case "/":
		m.searching = true
		m.search.SetValue(m.query)
		m.search.CursorEnd()
		return m, m.search.Focus()
	case "t":
		return m, m.showTimeline()
	case "o":
		return m, m.openReport()
	case "enter":
		if n, _, _ := m.tally(); n == 0 {
			m.status = "nothing taken: space takes a file, y a hunk, a every exact file"
			return m, nil
		}
		m.confirm = true
	}
	return m, nil
}

func (m *model) toggle(r rightMode) {
	if m.right == r {
		m.right = showDiff
	} else {
		m.right = r
	}
	m.dtop = 0
}

// move moves the focused pane's cursor (or the diff's scroll) by n.
func (m *model) move(n int) {
	switch m.focus {
	case paneSessions:
		before := m.scur
		m.scur = clampInt(m.scur+n, 0, len(m.counts)-1)
		if m.scur != before {
			m.refilter()
		}
	case paneFiles:
		before := m.fcur
		m.fcur = clampInt(m.fcur+n, 0, len(m.view)-1)
		if m.fcur != before {
			m.dtop = 0
		}
	case paneDiff:
		m.dtop += n
		if f := m.current(); f != nil && m.right == showDiff {
			// the current hunk follows the scroll: the last one begun by
			// the first line shown
			for i, s := range f.starts {
				if s <= max(0, m.dtop)+1 {
					f.cur = i
				}
			}
		}
	}
	m.clamp()
}

// takeable is the selected file when it has something to take; otherwise
// nil, and the status says why.
func (m *model) takeable() *file {
	f := m.current()
	if f != nil && !f.writable() {
		m.status = fmt.Sprintf("%s: nothing to write (%s)", f.plan.Path(), f.plan.Action)
		return nil
	}
	return f
}

func (m *model) toggleFile() {
	if f := m.takeable(); f != nil {
		f.set(-1, !(f.take && f.hunks == nil))
	}
}

// takeHunk takes or leaves the current hunk of the selected file and goes
// on to its next hunk, as git add -p does; a file that cannot be split is
// taken or left whole.
func (m *model) takeHunk(take bool) {
	f := m.takeable()
	if f == nil {
		return
	}
	if len(f.hunkList) < 2 {
		f.set(-1, take)
		return
	}
	f.set(f.cur, take)
	if f.cur+1 < len(f.hunkList) {
		f.cur++
		m.showHunk(f)
	}
}

func (m *model) jumpHunk(d int) {
	f := m.current()
	if f == nil || len(f.hunkList) == 0 {
		return
	}
	f.cur = clampInt(f.cur+d, 0, len(f.hunkList)-1)
	m.showHunk(f)
}

// showHunk scrolls the diff pane so the current hunk's header is shown.
func (m *model) showHunk(f *file) {
	if m.right != showDiff || f.cur >= len(f.starts) {
		return
	}
	s := f.starts[f.cur]
	if h := m.diffHeight(); s < m.dtop || s >= m.dtop+h-1 {
		m.dtop = max(0, s-1)
	}
	m.clamp()
}

func (m *model) takeAll(ok func(*file) bool, what string) {
	n := 0
	for _, i := range m.view {
		f := m.files[i]
		if f.writable() && ok(f) {
			f.take, f.hunks = true, nil
			n++
		}
	}
	if what != "" {
		what = " " + what
	}
	m.status = fmt.Sprintf("took %d file%s%s", n, plural.S(n), what)
}

// tally counts the files taken, those taken in part, and those left.
func (m *model) tally() (taken, partial, left int) {
	for _, f := range m.files {
		switch {
		case !f.writable():
		case f.hunks != nil:
			taken++
			partial++
		case f.take:
			taken++
		default:
			left++
		}
	}
	return taken, partial, left
}

func (m *model) showTimeline() tea.Cmd {
	id := m.timelineSession()
	if id == "" || m.d.Timeline == nil {
		m.status = "no timeline here"
		return nil
	}
	m.toggle(showTimeline)
	if m.right != showTimeline {
		return nil
	}
	if _, ok := m.timelines[id]; ok {
		return nil
	}
	m.timelines[id] = timeline{loading: true}
	get, ctx := m.d.Timeline, m.ctx
	return func() tea.Msg {
		text, err := get(ctx, id)
		return timelineMsg{id: id, text: text, err: err}
	}
}

// timelineSession is the session whose timeline the right pane shows.
func (m *model) timelineSession() string {
	if s := m.session(); s != nil {
		return s.ID
	}
	if f := m.current(); f != nil {
		for _, s := range m.d.Sessions {
			if slices.Contains(f.plan.File.Sessions, s.ID) {
				return s.ID
			}
		}
	}
	if len(m.d.Sessions) > 0 {
		return m.d.Sessions[0].ID
	}
	return ""
}

func (m *model) openReport() tea.Cmd {
	id := m.timelineSession()
	if id == "" || m.d.Report == nil {
		m.status = "no report here"
		return nil
	}
	m.status = "writing the report of " + id + "…"
	get, ctx := m.d.Report, m.ctx
	return func() tea.Msg {
		file, opener, err := get(ctx, id)
		return reportMsg{file: file, opener: opener, err: err}
	}
}

// outcome is the review's result: the choices, applied only on Apply.
func (m *model) outcome() Outcome {
	o := Outcome{Apply: m.apply, Choices: map[*recov.FilePlan]recov.Choice{}}
	for _, f := range m.files {
		if !f.writable() || !f.take {
			continue
		}
		c := recov.Choice{Take: true}
		if f.hunks != nil {
			c.Hunks = slices.Clone(f.hunks)
		}
		o.Choices[f.plan] = c
	}
	return o
}

func clampInt(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// project is how a session's working directory is shown: its last two
// elements.
func project(dir string) string {
	if dir == "" {
		return "?"
	}
	parent := filepath.Base(filepath.Dir(dir))
	if parent == "/" || parent == "." {
		return filepath.Base(dir)
	}
	return parent + "/" + filepath.Base(dir)
}
