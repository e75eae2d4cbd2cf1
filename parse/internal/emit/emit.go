// Package emit is how the agent parsers hand on what they find: a session
// header once, then operations in replay order as soon as each is settled.
package emit

import (
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/manifest"
)

// Handler receives a transcript's session and operations.
type Handler struct {
	// Header is called once, before the first operation (or at the end when
	// there is none), with the session's identity and working directory.
	Header func(manifest.Session)
	// Op is called for each operation, in replay order.
	Op func(manifest.Op)
	// Event, when set, is called for every turn and tool call (file-changing
	// or not), for the timeline of sandbox inspect. Parsers do this extra
	// work only when it is set.
	Event func(manifest.Event)
}

// FirstLine is how a tool's output is quoted as an operation's outcome
// evidence: its first line, cut at 120 bytes.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// Excerpt is text quoted in a report: its runs of white space made one
// space, cut to n bytes (at a rune's start) with "…", in a string of its
// own (never a view of a record).
func Excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.Clone(s)
}

// Span is the first and last times a transcript's records carry, as
// written (RFC 3339; others are not times and are left out).
type Span struct{ first, last string }

// Add counts a record's time.
func (s *Span) Add(ts string) {
	if ts == "" || s.first != "" && s.first <= ts && ts <= s.last {
		return // changes neither bound, whether it is a time or not
	}
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		return
	}
	if s.first == "" || ts < s.first {
		s.first = strings.Clone(ts)
	}
	if ts > s.last {
		s.last = strings.Clone(ts)
	}
}

// Start is the first time, or the zero time.
func (s *Span) Start() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s.first)
	return t
}

// End is the last time, or the zero time.
func (s *Span) End() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s.last)
	return t
}

// Unsettled returns the ids of the calls in maps (those still running,
// those the session went on without), each once, in the order they were
// made (seq): the calls a parser reports, at the end, as never settled.
func Unsettled[C any](seq func(C) int, maps ...map[string]C) []string {
	seen := map[string]C{}
	for _, m := range maps {
		for id, c := range m {
			seen[id] = c
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	// Several calls of one message share a line, and a map gives its ids in
	// any order: the order they were made keeps the operations' order.
	sort.Slice(ids, func(a, b int) bool { return seq(seen[ids[a]]) < seq(seen[ids[b]]) })
	return ids
}

// EndOf is how a session ended, from what its parser saw: a cut last line
// (among ws), a call still running, its last turn aborted.
func EndOf(ws []manifest.Warning, inTool, aborted bool) manifest.EndState {
	for _, w := range ws {
		if w.Truncated() {
			return manifest.EndTruncated
		}
	}
	switch {
	case inTool:
		return manifest.EndInTool
	case aborted:
		return manifest.EndAborted
	}
	return manifest.EndClean
}

// lastMilli is the last millisecond of the year 9999: a later time cannot
// be written in RFC 3339, so no JSON manifest or report could hold it.
const lastMilli = 253402300799999

// UnixTime reads a time an agent stores as a number: Unix seconds, or
// milliseconds when too large for seconds (after the year 5138); none (the
// zero time) for one not after the epoch or past the year 9999.
func UnixTime(v int64) time.Time {
	switch {
	case v <= 0 || v > lastMilli:
		return time.Time{}
	case v > 1e11:
		return time.UnixMilli(v).UTC()
	}
	return time.Unix(v, 0).UTC()
}

// UnixMilli reads a time stored in Unix milliseconds; none (the zero time)
// for one not after the epoch or past the year 9999.
func UnixMilli(v int64) time.Time {
	if v <= 0 || v > lastMilli {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
