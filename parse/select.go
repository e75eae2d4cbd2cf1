package parse

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// Filter selects sessions.
type Filter struct {
	Window discover.Window
	// Prefixes match session ids (and harness session names).
	Prefixes []string
	// Cwd keeps sessions whose working directory is Cwd or below.
	Cwd   string
	Agent manifest.Agent
	// Probe reads every candidate's head even when nothing above needs it,
	// so that only transcripts are selected and each has its cwd.
	Probe bool
}

// Selected is a candidate that passed the filter, with what its probe found.
type Selected struct {
	discover.Candidate
	Info Info
}

// AmbiguousError is a session prefix that matches several sessions.
type AmbiguousError struct {
	Prefix  string
	Matches []Selected
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %q is ambiguous: it matches %d sessions:", e.Prefix, len(e.Matches))
	for _, m := range e.Matches {
		fmt.Fprintf(&b, "\n  %s  %-6s  %s  %s", m.Info.ID, m.Info.Agent, m.Info.First.Local().Format("2006-01-02 15:04"), m.Info.Cwd)
	}
	return b.String()
}

// SkipError is a candidate that could not be read as a transcript.
type SkipError struct {
	Name string
	Err  error
}

func (e *SkipError) Error() string { return e.Err.Error() }
func (e *SkipError) Unwrap() error { return e.Err }

// NotFoundError is a session prefix that matches nothing.
type NotFoundError struct {
	Prefix string
	Looked []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no session matches %q (looked in %s)", e.Prefix, strings.Join(e.Looked, ", "))
}

// Select probes the candidates that the cheap hints cannot rule out, and
// returns those that match the filter, oldest first. Candidates that are
// not transcripts are skipped and reported.
func Select(cands []discover.Candidate, f Filter, looked []string) ([]Selected, []error, error) {
	var out []Selected
	var skipped []error
	var cwd string
	if f.Cwd != "" {
		cwd = filepath.Clean(f.Cwd)
	}
	// The cheap hints first: nothing is opened for a candidate they rule out.
	var todo []*discover.Candidate
	for i := range cands {
		c := &cands[i]
		if f.Agent != "" && c.Agent != "" && c.Agent != f.Agent {
			continue
		}
		// A session whose file was last written before the window holds no
		// activity in it; the homes walk already pruned these, --from did not.
		if !f.Window.Since.IsZero() && !c.ModTime.IsZero() && c.ModTime.Before(f.Window.Since) {
			continue
		}
		if len(f.Prefixes) > 0 && c.ID != "" && !matchAny(f.Prefixes, c.ID, c.Harness) {
			continue
		}
		todo = append(todo, c)
	}
	if f.empty() {
		// Nothing to test against the content: whoever reads the sessions
		// tells transcripts from other files.
		for _, c := range todo {
			out = append(out, Selected{Candidate: *c, Info: Info{Agent: c.Agent, ID: c.ID, Last: c.ModTime}})
		}
		return out, nil, nil
	}
	infos, errs := probeAll(todo)
	for i, c := range todo {
		info, err := infos[i], errs[i]
		if err != nil {
			skipped = append(skipped, &SkipError{Name: c.Name, Err: err})
			continue
		}
		if f.Agent != "" && info.Agent != f.Agent {
			continue
		}
		if len(f.Prefixes) > 0 && !matchAny(f.Prefixes, info.ID, c.Harness) {
			continue
		}
		if cwd != "" && !under(info.Cwd, cwd) {
			continue
		}
		if !overlaps(info, f.Window) {
			continue
		}
		out = append(out, Selected{Candidate: *c, Info: info})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Info.First.Before(out[b].Info.First) })
	for _, p := range f.Prefixes {
		ids := map[string]bool{}
		var matches []Selected
		for _, s := range out {
			if matchAny([]string{p}, s.Info.ID, s.Harness) && !ids[s.Info.ID] {
				ids[s.Info.ID] = true
				matches = append(matches, s)
			}
		}
		switch {
		case len(matches) == 0:
			return nil, skipped, &NotFoundError{Prefix: p, Looked: looked}
		case len(matches) > 1:
			return nil, skipped, &AmbiguousError{Prefix: p, Matches: matches}
		}
	}
	return out, skipped, nil
}

func (f Filter) empty() bool {
	return f.Window == (discover.Window{}) && len(f.Prefixes) == 0 && f.Cwd == "" && f.Agent == "" && !f.Probe
}

// probeAll probes candidates, one worker per core.
func probeAll(cands []*discover.Candidate) ([]Info, []error) {
	infos := make([]Info, len(cands))
	errs := make([]error, len(cands))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				infos[i], errs[i] = Probe(cands[i])
			}
		}()
	}
	for i := range cands {
		next <- i
	}
	close(next)
	wg.Wait()
	return infos, errs
}

func matchAny(prefixes []string, id, harness string) bool {
	for _, p := range prefixes {
		p = strings.ToLower(p)
		if strings.HasPrefix(strings.ToLower(id), p) || (harness != "" && strings.HasPrefix(harness, p)) {
			return true
		}
	}
	return false
}

// under tells whether dir is root or below it.
func under(dir, root string) bool {
	dir = filepath.Clean(dir)
	return dir == root || strings.HasPrefix(dir, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

func overlaps(i Info, w discover.Window) bool {
	if !w.Since.IsZero() && !i.Last.IsZero() && i.Last.Before(w.Since) {
		return false
	}
	if !w.Until.IsZero() && !i.First.IsZero() && i.First.After(w.Until) {
		return false
	}
	return true
}

// ParseTime reads a --since/--until value: a duration back from now (24h,
// "24h ago", 90m, 3d, 1w), a date (local midnight) or RFC 3339.
func ParseTime(s string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "ago"))
	if v == "" {
		return time.Time{}, fmt.Errorf("empty time")
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04", v, time.Local); err == nil {
		return t, nil
	}
	if t, ok := wordTime(v, now); ok {
		return t, nil
	}
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if d, ok := unit[v[len(v)-1]]; ok {
		var n float64
		if _, err := fmt.Sscanf(v[:len(v)-1], "%g", &n); err == nil && n >= 0 && !strings.ContainsAny(v[:len(v)-1], " \t") {
			return now.Add(-time.Duration(n * float64(d))), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use 24h, \"24h ago\", \"3 days ago\", yesterday, today, 90m, 3d, 1w, 2026-11-20 or RFC 3339", s)
}

// wordTime reads the times people say: now, today and yesterday (their
// local midnight), and "N units" (ago already trimmed) in seconds,
// minutes, hours, days, weeks, months or years.
func wordTime(v string, now time.Time) (time.Time, bool) {
	v = strings.ToLower(v)
	midnight := func(t time.Time) time.Time {
		t = t.In(time.Local)
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
	}
	switch v {
	case "now":
		return now, true
	case "today":
		return midnight(now), true
	case "yesterday":
		return midnight(now).AddDate(0, 0, -1), true
	}
	f := strings.Fields(v)
	if len(f) != 2 {
		return time.Time{}, false
	}
	n, err := strconv.Atoi(f[0])
	if f[0] == "a" || f[0] == "an" {
		n, err = 1, nil
	}
	if err != nil || n < 0 || n > 100000 {
		return time.Time{}, false
	}
	switch strings.TrimSuffix(f[1], "s") {
	case "second", "sec":
		return now.Add(-time.Duration(n) * time.Second), true
	case "minute", "min":
		return now.Add(-time.Duration(n) * time.Minute), true
	case "hour", "hr":
		return now.Add(-time.Duration(n) * time.Hour), true
	case "day":
		return now.AddDate(0, 0, -n), true
	case "week":
		return now.AddDate(0, 0, -7*n), true
	case "month":
		return now.AddDate(0, -n, 0), true
	case "year":
		return now.AddDate(-n, 0, 0), true
	}
	return time.Time{}, false
}
