package jsonl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// keepPerKind is how many warnings of one kind are kept with their line;
// the rest are counted, so a transcript of millions of bad lines costs a
// constant, not a warning per line.
const keepPerKind = 20

// Limiter keeps the first KeepPerKind warnings of each kind and counts the
// others. The zero value is ready to use.
type Limiter struct {
	more map[string]*more
}

type more struct {
	n    int
	last manifest.Warning
}

// Keep reports whether a warning of kind (its message's format) is one of
// the first of its kind; a later one is counted instead.
func (l *Limiter) Keep(kind string, w manifest.Warning, kept int) bool {
	if kept < keepPerKind {
		return true
	}
	if l.more == nil {
		l.more = map[string]*more{}
	}
	m := l.more[kind]
	if m == nil {
		m = &more{}
		l.more[kind] = m
	}
	m.n++
	m.last = w
	return false
}

// Summary returns one warning per kind that had more than KeepPerKind: how
// many more, up to which line.
func (l *Limiter) Summary() []manifest.Warning {
	var out []manifest.Warning
	for _, m := range l.more {
		w := m.last
		w.Message = fmt.Sprintf("%d more warnings like the one before (last here: %s); --json lists the first %d of each kind", m.n, w.Message, keepPerKind)
		out = append(out, w)
	}
	// Kinds whose last warning is on one line are put in the order of
	// their text, which the map would give differently from run to run.
	sort.Slice(out, func(a, b int) bool {
		return out[a].Line < out[b].Line || out[a].Line == out[b].Line && out[a].Message < out[b].Message
	})
	return out
}

// counter counts the warnings kept per kind.
type counter map[string]int

// add appends w to list unless l says it is one too many of its kind.
func (c counter) add(l *Limiter, list *[]manifest.Warning, kind string, w manifest.Warning) {
	if l.Keep(kind, w, c[kind]) {
		c[kind]++
		*list = append(*list, w)
	}
}

// Warner collects warnings with a Limiter: parsers and the reader use one
// each.
type Warner struct {
	lim  Limiter
	kept counter
	list []manifest.Warning
}

// Add records a warning of kind: the format of its message, or, for a
// format that is only a placeholder, the message's words up to its first
// colon.
func (w *Warner) Add(kind string, wr manifest.Warning) {
	if w.kept == nil {
		w.kept = counter{}
	}
	if strings.Trim(kind, "%sv ") == "" {
		kind, _, _ = strings.Cut(wr.Message, ":")
		kind = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return -1
			}
			return r
		}, kind)
	}
	w.kept.add(&w.lim, &w.list, kind, wr)
}

// List returns the warnings kept, with a summary line for each kind that
// had more, in line order.
func (w *Warner) List() []manifest.Warning {
	out := append(append([]manifest.Warning(nil), w.list...), w.lim.Summary()...)
	sort.SliceStable(out, func(a, b int) bool { return out[a].Line < out[b].Line })
	return out
}
