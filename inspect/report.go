package inspect

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
)

// report is an inspection as the HTML and Markdown reports show it: the
// same facts, arranged for a reader (what needs checking first, files by
// anchor, times in one zone, the chart drawn).
type Report struct {
	In *Inspection
	// Title names the main session.
	Title string
	// Zone is the time zone every time of the report is in.
	Zone       string
	Start, End string
	Duration   string
	Model      string
	Tokens     string
	Flags      []checkItem
	Files      []fileRep
	// FailedWrites are the files only failed calls wrote.
	FailedWrites []checkItem
	Rows         []row
	Lanes        []string
	Subagents    int
	Chart        template.HTML
	Strip        template.HTML
	// Died is the anchor of the call the session died in, if it did.
	Died     string
	DiedText string
	Redact   bool
	Footer   Footer
}

type Footer struct{ Host, User, Version, Generated string }

// checkItem is a file that needs checking, with why.
type checkItem struct{ Anchor, Path, Grade, Reason, Check string }

type fileRep struct {
	FileView
	Anchor string
	// Flag says why the file is below exact; empty when it is exact.
	Flag string
	// Change says what the session did to it overall.
	Change string
	// MovedFromAnchor and MovedToAnchor link the two ends of a move.
	MovedFromAnchor, MovedToAnchor string
	Failed                         bool
	OpSteps                        []stepRep
}

type stepRep struct {
	StepView
	// Same says the step's diff is the file's net diff (its only change).
	Same bool
}

// diffBody is a unified diff without its two header lines.
func diffBody(d string) string {
	for k := 0; k < 2; k++ {
		i := strings.IndexByte(d, '\n')
		if i < 0 {
			return d
		}
		d = d[i+1:]
	}
	return d
}

type row struct {
	Anchor  string
	Kind    string
	Class   string
	Time    string
	Gap     string
	BigGap  bool
	Dur     string
	Lane    string
	Side    bool
	Tool    string
	Target  string
	Outcome string
	Detail  string
	// Output is the call's output (or the agent's text): its first lines
	// in Head, the rest in More.
	Head, More string
	Cut        bool
	// Tail says Head is the end of the output and More what comes before.
	Tail  bool
	Todos []manifest.Todo
	Ops   []opRef
	Died  bool
	// Bad marks a failure: a failed or rejected call, an aborted turn,
	// the call the session died in.
	Bad      bool
	Subagent string
	Line     int
}

type opRef struct{ Kind, Path, Anchor, Outcome string }

const bigGap = time.Minute

// NewReport arranges an inspection for reading.
func NewReport(in *Inspection, redacted bool, meta Footer) *Report {
	r := &Report{In: in, Redact: redacted, Footer: meta}
	var main manifest.Session
	if len(in.Sessions) > 0 {
		main = in.Sessions[0]
		r.Title = fmt.Sprintf("%s session %s", main.Agent, main.ID)
	}
	name, off := main.Start.In(time.Local).Zone()
	r.Zone = fmt.Sprintf("%s (UTC%s)", name, zoneOffset(off))
	r.Start, r.End = stamp(main.Start), stamp(main.End)
	r.Duration = dur(main.End.Sub(main.Start))
	var models []string
	var tok manifest.Tokens
	haveTok := false
	for _, s := range in.Sessions {
		for _, m := range strings.Split(s.Model, ", ") {
			if m != "" && !contains(models, m) {
				models = append(models, m)
			}
		}
		if s.Tokens != nil {
			haveTok = true
			tok.Input += s.Tokens.Input
			tok.CacheRead += s.Tokens.CacheRead
			tok.CacheWrite += s.Tokens.CacheWrite
			tok.Output += s.Tokens.Output
			tok.Reasoning += s.Tokens.Reasoning
		}
	}
	r.Model = strings.Join(models, ", ")
	if haveTok {
		r.Tokens = tokenWords(tok)
	}

	// Files: anchors first, so that the timeline and chart can link them.
	anchors := map[string]string{}
	for i, f := range in.Files {
		anchors[f.Path] = fmt.Sprintf("f-%d", i+1)
	}
	for i, w := range in.FailedWrites {
		anchors[w.Path] = fmt.Sprintf("w-%d", i+1)
	}
	for _, f := range in.Files {
		fr := fileRep{FileView: f, Anchor: anchors[f.Path], Change: changeWords(f),
			MovedFromAnchor: anchors[f.MovedFrom], MovedToAnchor: anchors[f.MovedTo]}
		for _, st := range f.Steps {
			fr.OpSteps = append(fr.OpSteps, stepRep{StepView: st, Same: st.Diff != "" && f.NetDiff != "" && diffBody(st.Diff) == diffBody(f.NetDiff)})
		}
		if f.Confidence != "exact" {
			fr.Flag = flagReason(f)
			r.Flags = append(r.Flags, checkItem{Anchor: fr.Anchor, Path: f.Path, Grade: f.Confidence, Reason: fr.Flag, Check: checkOf(in, f.Path)})
		} else if len(f.Drift) > 0 {
			fr.Flag = fmt.Sprintf("drift: %s", f.Drift[0])
			r.Flags = append(r.Flags, checkItem{Anchor: fr.Anchor, Path: f.Path, Grade: "exact, with drift", Reason: fr.Flag,
				Check: "something outside the agent's tools changed the file during the session: the recovered content follows the transcript's evidence"})
		}
		r.Files = append(r.Files, fr)
	}
	for _, w := range in.FailedWrites {
		fl := checkItem{Anchor: anchors[w.Path], Path: w.Path, Grade: "failed", Reason: w.Why, Check: w.Check}
		r.Flags = append(r.Flags, fl)
		r.FailedWrites = append(r.FailedWrites, fl)
	}
	for _, u := range in.Unrecoverable {
		if anchors[u.Path] == "" { // an unrecorded delete that is not a file of its own
			r.Flags = append(r.Flags, checkItem{Path: u.Path, Grade: "unrecoverable", Reason: u.Why, Check: u.Check})
		}
	}

	// Lanes: the main agent, then each subagent in the order it first acts.
	laneOf := func(e Entry) string {
		switch {
		case e.Agent != "":
			return e.Agent
		case e.Session != main.ID:
			return e.Session
		}
		return ""
	}
	lanes := []string{""}
	seenLane := map[string]bool{"": true}
	labels := map[string]string{"": "main agent"}
	for _, e := range in.Timeline {
		if e.Subagent != "" {
			labels[e.Subagent] = "subagent: " + e.Target
		}
	}
	for _, e := range in.Timeline {
		l := laneOf(e)
		if !seenLane[l] {
			seenLane[l] = true
			lanes = append(lanes, l)
			if labels[l] == "" {
				labels[l] = "subagent " + l
			}
		}
	}
	for _, l := range lanes {
		r.Lanes = append(r.Lanes, labels[l])
	}
	r.Subagents = len(lanes) - 1

	// The call the session died in.
	var died *Entry
	if in.Verdict.State == "died-in-tool" {
		for i := len(in.Timeline) - 1; i >= 0; i-- {
			e := &in.Timeline[i]
			if e.Kind == manifest.EventCall && e.Ended.IsZero() && e.Outcome == manifest.OutcomeUnknown && e.Session == main.ID {
				died = e
				break
			}
		}
	}

	var prev time.Time
	for i, e := range in.Timeline {
		rw := row{Anchor: fmt.Sprintf("c-%d", i+1), Kind: string(e.Kind), Time: clock(e.Time), Lane: labels[laneOf(e)],
			Side: laneOf(e) != "", Tool: e.Tool, Target: e.Target, Outcome: string(e.Outcome), Detail: e.Detail,
			Todos: e.Todos, Subagent: e.Subagent, Line: e.Line}
		if !prev.IsZero() && e.Time.Sub(prev) >= time.Second {
			rw.Gap = "+" + dur(e.Time.Sub(prev))
			rw.BigGap = e.Time.Sub(prev) >= bigGap
		}
		if !e.Time.IsZero() {
			prev = e.Time
		}
		classes := []string{"k-" + string(e.Kind)}
		text := e.Text
		switch e.Kind {
		case manifest.EventCall:
			text = e.Output
			classes = append(classes, "o-"+string(e.Outcome))
			if e.Outcome == manifest.OutcomeFailed || e.Outcome == manifest.OutcomeRejected {
				classes = append(classes, "bad")
			}
			if !e.Ended.IsZero() {
				rw.Dur = dur(e.Ended.Sub(e.Time))
			}
			for _, o := range e.Ops {
				if len(o.Paths) == 0 {
					rw.Ops = append(rw.Ops, opRef{Kind: o.Kind, Outcome: o.Outcome})
				}
				for _, p := range o.Paths {
					rw.Ops = append(rw.Ops, opRef{Kind: o.Kind, Path: p, Anchor: anchors[p], Outcome: o.Outcome})
				}
			}
			if len(e.Ops) > 0 {
				classes = append(classes, "fileop")
			}
			if died != nil && e.Line == died.Line && e.CallID == died.CallID && e.Session == died.Session {
				rw.Died = true
				r.Died = rw.Anchor
				r.DiedText = fmt.Sprintf("%s %s, started %s, running for %s when the transcript ends", e.Tool, e.Target, clock(e.Time),
					dur(main.End.Sub(e.Time)))
				rw.Dur = "running for " + dur(main.End.Sub(e.Time)) + " at the end"
				classes = append(classes, "bad", "died")
			}
		case manifest.EventAborted:
			classes = append(classes, "bad")
		}
		if rw.Side {
			classes = append(classes, "side")
		}
		rw.Class = strings.Join(classes, " ")
		rw.Bad = contains(classes, "bad")
		if contains(classes, "bad") && e.Kind == manifest.EventCall {
			// A failure says why at the end of its output.
			rw.More, rw.Head = splitTail(text, 8)
			rw.Tail = true
		} else {
			rw.Head, rw.More = splitHead(text, 4)
		}
		rw.Cut = e.OutputCut
		r.Rows = append(r.Rows, rw)
	}
	r.Flags = sortedFlags(r.Flags)
	r.Chart = template.HTML(chartSVG(in, main, lanes, laneOf, labels, anchors, died))
	r.Strip = template.HTML(stripSVG(in, main, anchors))
	return r
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func zoneOffset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d:%02d", sign, sec/3600, sec%3600/60)
}

// stamp is a date and time in the report's zone; clock the time alone.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.In(time.Local).Format("2006-01-02 15:04:05")
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(time.Local).Format("15:04:05")
}

// dur words a duration briefly: 0.4s, 12s, 3m12s, 2h05m.
func dur(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func tokenWords(t manifest.Tokens) string {
	s := fmt.Sprintf("%s input, %s output", thousands(t.Input), thousands(t.Output))
	if t.CacheRead > 0 {
		s += fmt.Sprintf(", %s read from cache", thousands(t.CacheRead))
	}
	if t.CacheWrite > 0 {
		s += fmt.Sprintf(", %s written to cache", thousands(t.CacheWrite))
	}
	if t.Reasoning > 0 {
		s += fmt.Sprintf(" (%s of it reasoning)", thousands(t.Reasoning))
	}
	return s
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// changeWords says what the session did to a file overall.
func changeWords(f FileView) string {
	switch {
	case f.MovedTo != "":
		return "moved to " + f.MovedTo
	case f.MovedFrom != "":
		return "moved from " + f.MovedFrom
	case f.Final == "deleted":
		return "deleted"
	case f.Final == "unknown":
		return "content unknown"
	case !f.StartKnown:
		return "changed (start unknown)"
	}
	for _, s := range f.Steps {
		if s.Replayed {
			if strings.HasPrefix(f.NetDiff, "--- /dev/null") {
				return "created"
			}
			break
		}
	}
	if f.NetDiff == "" {
		return "unchanged at the end"
	}
	return "updated"
}

// flagReason says why a file is below exact.
func flagReason(f FileView) string {
	why := f.Reason
	if len(f.Notes) > 0 && !strings.Contains(why, f.Notes[len(f.Notes)-1]) {
		// The note names the command and its line: the reason alone
		// ("written only by calls that cannot be replayed") may not say which.
		if why != "" {
			why += " — "
		}
		why += f.Notes[len(f.Notes)-1]
		if len(f.Notes) > 1 {
			why += fmt.Sprintf(" (and %d more notes)", len(f.Notes)-1)
		}
	}
	for _, s := range f.Steps {
		if s.Failed != "" {
			why += "; " + s.Failed
			break
		}
	}
	if f.Confidence == "host-based" && why == "" {
		return "started from the copy on this machine, which may not be what the session began from"
	}
	return why
}

func checkOf(in *Inspection, p string) string {
	for _, u := range in.Unrecoverable {
		if u.Path == p {
			return u.Check
		}
	}
	return ""
}

// splitHead cuts text into its first n lines and the rest.
func splitHead(s string, n int) (string, string) {
	i := 0
	for k := 0; k < n; k++ {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s, ""
		}
		i += j + 1
	}
	if i > 600 {
		i = 600
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
	}
	return strings.TrimRight(s[:i], "\n"), s[i:]
}

// splitTail cuts text into its start and its last n lines.
func splitTail(s string, n int) (string, string) {
	s = strings.TrimRight(s, "\n")
	i := len(s)
	for k := 0; k < n; k++ {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return "", s
		}
		i = j
	}
	return s[:i], s[i+1:]
}

// The chart: time across, a lane per agent; drawn here as SVG so that the
// page needs nothing else to show it, and printed as it is.
const (
	chartW     = 1000
	chartLeft  = 170
	chartRight = 990
	laneH      = 24
	axisH      = 22
)

type timeScale struct {
	t0   time.Time
	span time.Duration
}

func (s timeScale) x(t time.Time) float64 {
	if t.IsZero() || s.span <= 0 {
		return chartLeft
	}
	f := float64(t.Sub(s.t0)) / float64(s.span)
	if f < 0 {
		f = 0
	}
	if f > 1 {
		f = 1
	}
	return chartLeft + f*(chartRight-chartLeft)
}

func scaleOf(in *Inspection, main manifest.Session) timeScale {
	t0, t1 := main.Start, main.End
	for _, s := range in.Sessions {
		if !s.Start.IsZero() && (t0.IsZero() || s.Start.Before(t0)) {
			t0 = s.Start
		}
		if s.End.After(t1) {
			t1 = s.End
		}
	}
	for _, e := range in.Timeline {
		if !e.Time.IsZero() && (t0.IsZero() || e.Time.Before(t0)) {
			t0 = e.Time
		}
		if e.Time.After(t1) {
			t1 = e.Time
		}
		if e.Ended.After(t1) {
			t1 = e.Ended
		}
	}
	span := t1.Sub(t0)
	if span <= 0 {
		span = time.Second
	}
	return timeScale{t0, span}
}

func esc(s string) string { return html.EscapeString(s) }

// axis draws the time axis and its ticks.
func axis(b *strings.Builder, sc timeScale, height int) {
	steps := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
		6 * time.Hour, 12 * time.Hour, 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if sc.span/s <= 8 {
			step = s
			break
		}
	}
	first := sc.t0.Truncate(step)
	if first.Before(sc.t0) {
		first = first.Add(step)
	}
	for t := first; !t.After(sc.t0.Add(sc.span)); t = t.Add(step) {
		x := sc.x(t)
		anchor := "middle"
		if x > chartRight-25 {
			anchor = "end"
		}
		fmt.Fprintf(b, `<line class="tick" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text class="tl" x="%.1f" y="12" text-anchor="%s">%s</text>`,
			x, axisH-6, x, height, x, anchor, clock(t))
	}
}

func chartSVG(in *Inspection, main manifest.Session, lanes []string, laneOf func(Entry) string, labels, anchors map[string]string, died *Entry) string {
	sc := scaleOf(in, main)
	idx := map[string]int{}
	for i, l := range lanes {
		idx[l] = i
	}
	h := axisH + len(lanes)*laneH + 6
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="chart" role="img" viewBox="0 0 %d %d" width="100%%" xmlns="http://www.w3.org/2000/svg">`, chartW, h)
	fmt.Fprintf(&b, `<title>The session at a glance: %d lanes, time across, from %s to %s</title>`, len(lanes), esc(stamp(sc.t0)), esc(stamp(sc.t0.Add(sc.span))))
	for i, l := range lanes {
		y := axisH + i*laneH
		fmt.Fprintf(&b, `<rect class="lane%d" x="0" y="%d" width="%d" height="%d"/>`, i%2, y, chartW, laneH)
		fmt.Fprintf(&b, `<text class="ll" x="4" y="%d"><title>%s</title>%s</text>`, y+laneH/2+4, esc(labels[l]), esc(ellipsis(labels[l], 26)))
	}
	axis(&b, sc, h)
	top, bottom := axisH, axisH+len(lanes)*laneH
	for i, e := range in.Timeline {
		x := sc.x(e.Time)
		switch e.Kind {
		case manifest.EventTurn:
			y := axisH + idx[laneOf(e)]*laneH
			fmt.Fprintf(&b, `<a href="#c-%d"><g class="turn"><line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><path d="M%.1f %d l5 0 l-5 8 z"/><title>%s turn: %s</title></g></a>`,
				i+1, x, y, x, y+laneH, x, y, esc(clock(e.Time)), esc(e.Text))
		case manifest.EventCompact:
			fmt.Fprintf(&b, `<g class="compact"><line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><title>%s %s</title></g>`, x, top, x, bottom, esc(clock(e.Time)), esc(e.Text))
		case manifest.EventAborted:
			y := axisH + idx[laneOf(e)]*laneH
			fmt.Fprintf(&b, `<g class="abort"><path d="M%.1f %d l5 8 l-10 0 z"/><title>%s %s</title></g>`, x, y+laneH-10, esc(clock(e.Time)), esc(e.Text))
		case manifest.EventCall:
			y := axisH + idx[laneOf(e)]*laneH
			end := e.Ended
			isDied := died != nil && e.Line == died.Line && e.CallID == died.CallID && e.Session == died.Session
			if isDied {
				// The call ran on to the end: a thin band under the lane's
				// other marks, so the calls made meanwhile stay visible.
				xe := sc.x(sc.t0.Add(sc.span))
				fmt.Fprintf(&b, `<rect class="diedbar" x="%.1f" y="%d" width="%.1f" height="5"><title>%s %s %s: running for %s when the transcript ends; the session died while it ran</title></rect>`,
					x, y+laneH-6, math.Max(xe-x, 2.5), esc(clock(e.Time)), esc(e.Tool), esc(e.Target), esc(dur(sc.t0.Add(sc.span).Sub(e.Time))))
				anchor := "start"
				if x > chartRight-60 {
					anchor = "end"
				}
				fmt.Fprintf(&b, `<text class="diedl" x="%.1f" y="%d" text-anchor="%s">✖ died in this call</text>`, x, y+6, anchor)
			}
			w := sc.x(end) - x
			if end.IsZero() || w < 2.5 {
				w = 2.5
			}
			href := fmt.Sprintf("#c-%d", i+1)
		ops:
			for _, o := range e.Ops {
				for _, p := range o.Paths {
					if anchors[p] != "" {
						href = "#" + anchors[p]
						break ops
					}
				}
			}
			cls := "m " + string(e.Outcome)
			if isDied {
				cls += " died"
			}
			took := ""
			if !e.Ended.IsZero() {
				took = ", took " + dur(e.Ended.Sub(e.Time))
			}
			title := fmt.Sprintf("%s %s %s — %s%s", clock(e.Time), e.Tool, e.Target, e.Outcome, took)
			if len(e.Ops) > 0 {
				var ps []string
				for _, o := range e.Ops {
					ps = append(ps, o.Kind+" "+strings.Join(o.Paths, " "))
				}
				title += "; changes " + strings.Join(ps, ", ")
			}
			if isDied {
				title += "; the session died while it ran"
			}
			fmt.Fprintf(&b, `<a href="%s"><rect class="%s" x="%.1f" y="%d" width="%.1f" height="%d"><title>%s</title></rect>`, href, cls, x, y+7, w, laneH-14, esc(title))
			if len(e.Ops) > 0 {
				fmt.Fprintf(&b, `<path class="fc" d="M%.1f %d l3.5 -5 l3.5 5 z"><title>%s</title></path>`, x-2.3, y+7, esc(title))
			}
			b.WriteString(`</a>`)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// stripSVG draws which file changed when: a row per file, a mark per
// operation on it.
func stripSVG(in *Inspection, main manifest.Session, anchors map[string]string) string {
	const maxFiles = 80
	files := in.Files
	if len(files) == 0 {
		return ""
	}
	if len(files) > maxFiles {
		files = files[:maxFiles]
	}
	sc := scaleOf(in, main)
	const rowH = 16
	h := axisH + len(files)*rowH + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="strip" id="strip" role="img" viewBox="0 0 %d %d" width="100%%" xmlns="http://www.w3.org/2000/svg">`, chartW, h)
	fmt.Fprintf(&b, `<title>Which file changed when: %d files</title>`, len(files))
	axis(&b, sc, h)
	for i, f := range files {
		y := axisH + i*rowH
		fmt.Fprintf(&b, `<a href="#%s"><rect class="lane%d" x="0" y="%d" width="%d" height="%d"/><text class="ll" x="4" y="%d"><title>%s</title>%s</text></a>`,
			anchors[f.Path], i%2, y, chartW, rowH, y+rowH/2+4, esc(f.Path), esc(tailPath(f.Path, 28)))
		for _, s := range f.Steps {
			cls := "s " + s.Outcome
			if !s.Replayed {
				cls += " nr"
			}
			fmt.Fprintf(&b, `<a href="#%s"><circle class="%s" cx="%.1f" cy="%d" r="4"><title>%s %s %s (%s) — %s</title></circle></a>`,
				anchors[f.Path], cls, sc.x(s.Time), y+rowH/2, esc(clock(s.Time)), esc(s.Tool), esc(f.Path), esc(s.Kind), esc(s.Outcome))
		}
	}
	if len(in.Files) > maxFiles {
		fmt.Fprintf(&b, `<text class="tl" x="4" y="%d">… and %d more files (see the index)</text>`, h-2, len(in.Files)-maxFiles)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// tailPath is the end of a path that fits n characters, whole
// components where it can.
func tailPath(p string, n int) string {
	parts := strings.Split(p, "/")
	out := parts[len(parts)-1]
	for i := len(parts) - 2; i >= 0; i-- {
		next := parts[i] + "/" + out
		if len([]rune(next))+1 > n {
			return ellipsis("…/"+out, n)
		}
		out = next
	}
	return ellipsis(out, n)
}

func ellipsis(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// sortedFlags orders what needs checking: unrecoverable first, then the
// other grades.
func sortedFlags(f []checkItem) []checkItem {
	rank := map[string]int{"unrecoverable": 0, "failed": 1, "redacted": 2, "unknown-outcome": 3, "stale": 4, "host-based": 5}
	out := append([]checkItem(nil), f...)
	sort.SliceStable(out, func(a, b int) bool {
		ra, ok := rank[out[a].Grade]
		if !ok {
			ra = len(rank)
		}
		rb, ok := rank[out[b].Grade]
		if !ok {
			rb = len(rank)
		}
		return ra < rb
	})
	return out
}
