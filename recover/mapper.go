package recover

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Rule maps an agent path prefix (From, as the agent saw it) onto a host
// directory (To), which becomes a destination root.
type Rule struct {
	From string
	To   string
}

// Mapper maps agent paths onto the host. The longest matching From wins;
// a path under no rule has no place on the host (outside-root).
type Mapper struct {
	rules []Rule
}

// NewMapper returns a mapper over rules; To directories are made absolute.
func NewMapper(rules []Rule) (*Mapper, error) {
	m := &Mapper{}
	for _, r := range rules {
		if r.From == "" || r.To == "" {
			return nil, fmt.Errorf("mapping %q=%q: both sides are needed", r.From, r.To)
		}
		to, err := filepath.Abs(r.To)
		if err != nil {
			return nil, err
		}
		from := path.Clean(strings.ReplaceAll(r.From, `\`, "/"))
		m.rules = append(m.rules, Rule{From: from, To: to})
	}
	sort.SliceStable(m.rules, func(a, b int) bool { return len(m.rules[a].From) > len(m.rules[b].From) })
	return m, nil
}

// Rules returns the rules, longest prefix first.
func (m *Mapper) Rules() []Rule { return m.rules }

// Map returns the host target of an agent path.
func (m *Mapper) Map(agent string) (Target, bool) {
	p := path.Clean(strings.ReplaceAll(agent, `\`, "/"))
	for _, r := range m.rules {
		if p == r.From {
			return Target{}, false // the root itself is a directory, not a file
		}
		prefix := r.From
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if rel, ok := strings.CutPrefix(p, prefix); ok {
			// sandbox's own journals live under .sandbox: no transcript writes there.
			if !filepath.IsLocal(filepath.FromSlash(rel)) || IsJournalPath(rel) {
				return Target{}, false
			}
			return Target{Root: r.To, Rel: rel}, true
		}
	}
	return Target{}, false
}
