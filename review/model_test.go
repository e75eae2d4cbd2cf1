package review

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentsandbox/sandbox/fixtures/lines"
	recov "github.com/agentsandbox/sandbox/recover"
)

// plan makes a plan that writes after over before (before "" and exists
// false: a creation).
func plan(path string, grade recov.Confidence, before, after string, sessions ...string) *recov.FilePlan {
	p := &recov.FilePlan{
		File:   &recov.FileResult{Path: "/w/" + path, Confidence: grade, Ops: 1, Sessions: sessions, Base: "transcript"},
		Target: recov.Target{Root: "/dest", Rel: path}, Mapped: true,
		Host:  recov.Content{Known: true, Exists: before != "", Text: before},
		Write: recov.Content{Known: true, Exists: true, Text: after},
	}
	p.Action = recov.ActUpdate
	if before == "" {
		p.Action = recov.ActCreate
	}
	return p
}

func keys(m *model, ks ...string) {
	for _, k := range ks {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "space":
			msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		m.Update(msg)
	}
}

func testData() Data {
	start := time.Date(2026, 11, 20, 10, 12, 0, 0, time.UTC)
	two := plan("c.go", recov.HostBased, lines.Numbered(40, nil), lines.Numbered(40, map[int]string{2: "two\n", 35: "thirty-five\n"}), "s1")
	two.File.Base, two.File.Drift = "host", []string{"t.jsonl:9: the Read shows line 7 otherwise"}
	return Data{
		Sessions: []Session{{ID: "s1", Agent: "codex", Start: start, Project: "/w", Verdict: "clean"},
			{ID: "s2", Agent: "claude", Start: start.Add(time.Hour), Project: "/w", Verdict: "died-in-tool-call"}},
		Plans: []*recov.FilePlan{
			plan("a.txt", recov.Exact, "", "a\n", "s1"),
			plan("b.txt", recov.Exact, "", "b\n", "s2"),
			two,
			{File: &recov.FileResult{Path: "/w/d.txt", Confidence: recov.Exact, Sessions: []string{"s2"}}, Target: recov.Target{Root: "/dest", Rel: "d.txt"},
				Mapped: true, Action: recov.ActUnchanged},
		},
	}
}

// TestTakeFilesAndHunks drives the model as the keys would: take one file,
// leave another, take one hunk of a third; the outcome holds exactly that.
func TestTakeFilesAndHunks(t *testing.T) {
	d := testData()
	m := newModel(context.Background(), d)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	keys(m, "space")  // a.txt
	keys(m, "j", "j") // c.go, past b.txt
	if f := m.current(); f.plan.Path() != "c.go" || len(f.hunkList) != 2 {
		t.Fatalf("on %s with %d hunks, want c.go with 2", f.plan.Path(), len(f.hunkList))
	}
	keys(m, "y", "n")
	keys(m, "j", "space") // d.txt: nothing to write
	if !strings.Contains(m.status, "nothing to write") {
		t.Errorf("status %q: want it to say d.txt has nothing to write", m.status)
	}
	keys(m, "enter")
	if !m.confirm || !strings.Contains(m.statusLine(), "Write 2 files (1 in part) and leave 1?") {
		t.Fatalf("no confirmation: %q", m.statusLine())
	}
	keys(m, "y")
	o := m.outcome()
	if !o.Apply || len(o.Choices) != 2 {
		t.Fatalf("outcome %+v: want 2 files applied", o)
	}
	if c := o.Choices[d.Plans[0]]; !c.Take || c.Hunks != nil {
		t.Errorf("a.txt: %+v, want taken whole", c)
	}
	if _, ok := o.Choices[d.Plans[1]]; ok {
		t.Errorf("b.txt taken, want left")
	}
	if c := o.Choices[d.Plans[2]]; !c.Take || len(c.Hunks) != 2 || !c.Hunks[0] || c.Hunks[1] {
		t.Errorf("c.go: %+v, want hunk 1 of 2", c)
	}
}

// TestQuitWritesNothing: q, esc and a refused confirmation apply nothing.
func TestQuitWritesNothing(t *testing.T) {
	for _, seq := range [][]string{{"space", "q"}, {"space", "esc"}, {"space", "enter", "n", "q"}} {
		m := newModel(context.Background(), testData())
		keys(m, seq...)
		if m.outcome().Apply {
			t.Errorf("%v applied", seq)
		}
	}
}

// TestTakeExactAndSearch: a takes the exact files shown; / narrows them.
func TestTakeExactAndSearch(t *testing.T) {
	m := newModel(context.Background(), testData())
	keys(m, "/b.t", "enter") // the search takes what follows the /
	if len(m.view) != 1 || m.current().plan.Path() != "b.txt" {
		t.Fatalf("search b.t: %d files shown", len(m.view))
	}
	keys(m, "a")
	if n, _, _ := m.tally(); n != 1 {
		t.Errorf("a under a search took %d files, want 1 (b.txt)", n)
	}
	keys(m, "esc") // clears the search
	if len(m.view) != 4 {
		t.Errorf("esc left %d files shown, want 4", len(m.view))
	}
	keys(m, "a")
	if n, _, _ := m.tally(); n != 2 {
		t.Errorf("a took %d files, want the 2 exact ones that write", n)
	}
}

// TestSessionFilters: the sessions pane narrows the files to a session's.
func TestSessionFilters(t *testing.T) {
	m := newModel(context.Background(), testData())
	keys(m, "tab", "tab") // sessions pane
	if m.focus != paneSessions {
		t.Fatalf("focus %d", m.focus)
	}
	keys(m, "j", "j") // s2
	var got []string
	for _, i := range m.view {
		got = append(got, m.files[i].plan.Path())
	}
	if strings.Join(got, " ") != "b.txt d.txt" {
		t.Errorf("s2's files: %v", got)
	}
}

// TestLayoutFits: every line of the screen fits its width, at many sizes,
// and the three panes are there.
func TestLayoutFits(t *testing.T) {
	for _, color := range []bool{false, true} {
		d := testData()
		d.Color = color
		m := newModel(context.Background(), d)
		keys(m, "j", "j")
		for _, size := range [][2]int{{200, 50}, {120, 30}, {80, 24}, {60, 15}, {40, 10}} {
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			screen := m.View()
			rows := strings.Split(screen, "\n")
			if len(rows) != size[1] {
				t.Errorf("%dx%d color=%v: %d rows", size[0], size[1], color, len(rows))
			}
			for i, r := range rows {
				if w := ansi.StringWidth(r); w > size[0] {
					t.Errorf("%dx%d color=%v: row %d is %d wide: %q", size[0], size[1], color, i, w, ansi.Strip(r))
				}
			}
			plain := ansi.Strip(screen)
			wants := []string{"Sessions", "Files", "c.go"}
			if size[0] >= 200 {
				wants = append(wants, "transcript", "drift 1") // the base and drift columns
			}
			for _, want := range wants {
				if !strings.Contains(plain, want) {
					t.Errorf("%dx%d: %q missing:\n%s", size[0], size[1], want, plain)
				}
			}
		}
	}
}

// TestNoColor: without colour the screen has no escape sequence at all.
func TestNoColor(t *testing.T) {
	m := newModel(context.Background(), testData())
	keys(m, "j", "j", "space")
	if s := m.View(); strings.Contains(s, "\x1b") {
		t.Errorf("an escape sequence under NO_COLOR:\n%q", s)
	}
}

// TestHostileContent: a file's content never drives the terminal.
func TestHostileContent(t *testing.T) {
	d := testData()
	d.Color = true
	d.Plans = []*recov.FilePlan{plan("evil.go", recov.Exact, "", "x := \"\x1b]52;c;aGk=\x07\x1b[2J\"\n\tindented\n", "s1")}
	m := newModel(context.Background(), d)
	s := m.View()
	if strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07") {
		t.Errorf("content reached the terminal: %q", s)
	}
	if !strings.Contains(ansi.Strip(s), `\x1b]52`) || strings.Contains(s, "\t") {
		t.Errorf("the escape is not shown inert, or a tab is left: %q", ansi.Strip(s))
	}
}

// TestManyFiles: a session of 5,000 files renders only what is visible.
func TestManyFiles(t *testing.T) {
	d := testData()
	d.Plans = nil
	for i := range 5000 {
		d.Plans = append(d.Plans, plan(fmt.Sprintf("dir/file%05d.go", i), recov.Exact, "", "package x\n", "s1"))
	}
	m := newModel(context.Background(), d)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	keys(m, "G")
	if !strings.Contains(m.View(), "file04999.go") {
		t.Errorf("G does not show the last file")
	}
	built := 0
	for _, f := range m.files {
		if f.built {
			built++
		}
	}
	if built > 3 {
		t.Errorf("%d files' diffs built, want only those looked at", built)
	}
}

// BenchmarkView moves down onto a file not shown yet and draws the
// screen, in a review of 500 files and of 5,000: drawing only what is
// visible, and computing a file's diff when it is first shown, both cost
// the same.
func BenchmarkView(b *testing.B) {
	for _, n := range []int{500, 5000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			d := testData()
			d.Plans = nil
			for i := range n {
				d.Plans = append(d.Plans, plan(fmt.Sprintf("dir/file%05d.go", i), recov.Exact, lines.Numbered(200, nil), lines.Numbered(200, map[int]string{100: "x := 1\n"}), "s1"))
			}
			d.Color = true
			m := newModel(context.Background(), d)
			m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%n == n-1 {
					keys(m, "g")
				} else {
					keys(m, "j")
				}
				_ = m.View()
			}
		})
	}
}

// TestTimelineAndReport: t shows the selected session's timeline (read
// once, then kept), o says where the report is and what opened it.
func TestTimelineAndReport(t *testing.T) {
	d := testData()
	reads := 0
	d.Timeline = func(_ context.Context, id string) (string, error) {
		reads++
		return "timeline of " + id + "\n09:12:05\tapply_patch\tapplied", nil
	}
	d.Report = func(_ context.Context, id string) (string, string, error) {
		return "/state/reports/" + id + ".html", "", nil
	}
	m := newModel(context.Background(), d)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	run := func(k string) {
		t.Helper()
		_, cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		if cmd != nil {
			m.Update(cmd())
		}
	}
	run("j") // b.txt: session s2's
	run("t")
	if s := ansi.Strip(m.View()); !strings.Contains(s, "timeline of s2") || !strings.Contains(s, "apply_patch  applied") {
		t.Errorf("t does not show s2's timeline:\n%s", s)
	}
	run("t")
	run("t")
	if reads != 1 {
		t.Errorf("the timeline was read %d times", reads)
	}
	run("o")
	if !strings.Contains(m.status, "/state/reports/s2.html") || !strings.Contains(m.status, "open it yourself") {
		t.Errorf("o says %q", m.status)
	}
}
