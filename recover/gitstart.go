package recover

import (
	"path"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// Starts are the start commits of one recovery's sessions: for each
// destination root, the commit its files began from.
type Starts struct {
	// byRoot is the start commit the transcripts name (or their branch's
	// tip at their start), rev the --base git:REV; per destination root.
	byRoot, rev map[string]*GitBase
	// sessions says, per session (in the order of the sources), which
	// commit it started from, or why none was found.
	sessions []sessionStart
}

type sessionStart struct {
	base *GitBase
	note string
}

// ForRoot returns the start commit of a destination root: the one the
// transcripts name or imply, else the --base git:REV; nil when none.
func (s *Starts) ForRoot(root string) *GitBase {
	if s == nil {
		return nil
	}
	if g := s.byRoot[root]; g != nil {
		return g
	}
	return s.rev[root]
}

// Session returns the start commit found for the i-th session and what
// was said about it.
func (s *Starts) Session(i int) (*GitBase, string) {
	if s == nil || i >= len(s.sessions) {
		return nil, ""
	}
	return s.sessions[i].base, s.sessions[i].note
}

// rootOf returns the destination root of a working directory: the To of
// the longest rule that covers it.
func rootOf(rules []Rule, cwd string) (string, bool) {
	best := -1
	cwd = path.Clean(strings.ReplaceAll(cwd, `\`, "/"))
	for i, r := range rules {
		from := path.Clean(strings.ReplaceAll(r.From, `\`, "/"))
		if cwd == from || strings.HasPrefix(cwd, strings.TrimSuffix(from, "/")+"/") {
			if best < 0 || len(from) > len(rules[best].From) {
				best = i
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return rules[best].To, true
}

// findStarts looks for every session's start commit in the repository of
// its destination (or opts.Repo). A session of the same destination that
// started earlier wins. Only an explicit --base git:REV that cannot be
// resolved is an error.
func findStarts(headers []manifest.Session, rules []Rule, opts Options) (*Starts, error) {
	m, err := NewMapper(dedupRules(rules))
	if err != nil {
		return nil, err
	}
	s := &Starts{byRoot: map[string]*GitBase{}, rev: map[string]*GitBase{}, sessions: make([]sessionStart, len(headers))}
	repos := map[string]*Repo{}
	openErr := map[string]string{}
	open := func(dir string) *Repo {
		if r, ok := repos[dir]; ok {
			return r
		}
		r, err := openRepo(dir)
		if err != nil {
			openErr[dir] = err.Error()
		}
		repos[dir] = r
		return r
	}
	order := make([]int, len(headers))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return headers[order[a]].Start.Before(headers[order[b]].Start) })
	for _, i := range order {
		h := headers[i]
		if h.Cwd == "" {
			continue
		}
		root, ok := rootOf(m.Rules(), h.Cwd)
		if !ok {
			continue
		}
		dir := root
		if opts.Repo != "" {
			dir = opts.Repo
		}
		repo := open(dir)
		if repo == nil {
			if h.GitCommit != "" || h.GitBranch != "" {
				s.sessions[i].note = "no git repository at " + dir
				if e := openErr[dir]; e != "" {
					s.sessions[i].note = e
				}
			}
			if opts.BaseRev != "" {
				return nil, &RevError{Rev: opts.BaseRev, Msg: "no git repository at " + dir + " (--repo DIR names one)"}
			}
			continue
		}
		if opts.BaseRev != "" && s.rev[root] == nil {
			g, err := repo.Resolve(opts.BaseRev)
			if err != nil {
				return nil, &RevError{Rev: opts.BaseRev, Msg: err.Error()}
			}
			s.rev[root] = g
		}
		g, note := repo.StartBase(h)
		s.sessions[i] = sessionStart{base: g, note: note}
		if g != nil && s.byRoot[root] == nil {
			s.byRoot[root] = g
		}
	}
	return s, nil
}

// RevError is a --base git:REV that names nothing.
type RevError struct{ Rev, Msg string }

func (e *RevError) Error() string { return e.Msg }

// install makes rc read files' starting content from the start commits,
// mapping agent paths through m.
func (s *Starts) install(rc *Reconstructor, m *Mapper) {
	if s == nil || (len(s.byRoot) == 0 && len(s.rev) == 0) {
		return
	}
	rc.opts.Start = func(agent string) ([]byte, bool, Origin) {
		t, ok := m.Map(agent)
		if !ok {
			return nil, false, Origin{}
		}
		for _, g := range []*GitBase{s.byRoot[t.Root], s.rev[t.Root]} {
			if g == nil {
				continue
			}
			if data, ok := g.Read(t.Rel); ok {
				return data, true, Origin{Name: g.Name(), Grade: g.Grade}
			}
		}
		return nil, false, Origin{}
	}
}

// report adds each session's start commit to the report.
func (s *Starts) report(r *Report) {
	for i := range r.Sessions {
		g, note := s.Session(i)
		if g != nil {
			r.Sessions[i].Base = g.Name()
		}
		r.Sessions[i].BaseNote = note
	}
}
