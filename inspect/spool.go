package inspect

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"sort"
	"time"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse"
)

// spoolAbove is the size of transcripts from which inspect keeps its
// timeline in a spool file instead of memory. A session of a gigabyte has
// 200,000 events, and held as Go values they were most of a heap of 400 MB,
// which the collector let grow to a gigabyte.
var SpoolAbove int64 = 32 << 20

// Spooled says whether an inspection of the selected transcripts keeps its
// timeline in a spool: when they are at least SpoolAbove bytes as found
// (compressed, for a compressed one). Tests set SpoolAbove to 0 to spool
// every timeline.
func Spooled(sel []parse.Selected) bool {
	var n int64
	for _, s := range sel {
		n += s.Size
	}
	return n >= SpoolAbove
}

// Spool is inspect's timeline kept out of memory: each event encoded into
// an unlinked temporary file (nothing is left behind, even after kill -9),
// and in memory only what orders, counts and finds it.
type Spool struct {
	f     *os.File
	w     *bufio.Writer
	off   int64
	buf   []byte
	items []spooled
	err   error
	// sessions, byCall and starts give each event its session's id, its
	// call's operations and, when it has no time, its session's start:
	// all known only once the session is read.
	sessions []string
	byCall   []map[string][]OpView
	starts   []time.Time
}

// spooled is one event of the spool: where it is in the file, and what
// sorts and counts it.
type spooled struct {
	sec  int64
	nsec int32
	// zero says the event has no time of its own; open that it is a call
	// that never got its result.
	zero, open bool
	sess       int32
	line       int
	off        int64
	n          int
	kind       manifest.EventKind
	outcome    manifest.Outcome
}

func NewSpool() (*Spool, error) {
	f, err := os.CreateTemp("", "sandbox-inspect-*.spool")
	if err != nil {
		return nil, fmt.Errorf("a spool file for the timeline: %w", err)
	}
	// Unlinked at once: the file lives while it is open, and no longer.
	// (Where a file open cannot be removed, Close removes it.)
	os.Remove(f.Name())
	return &Spool{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Close lets the spool file go.
func (s *Spool) Close() {
	if s == nil || s.f == nil {
		return
	}
	name := s.f.Name()
	s.f.Close()
	os.Remove(name)
	s.f = nil
}

// session starts the events of a new session; done gives them its id, its
// calls' operations, and the time of those that have none.
func (s *Spool) session() (done func(id string, byCall map[string][]OpView, start time.Time)) {
	s.sessions = append(s.sessions, "")
	s.byCall = append(s.byCall, nil)
	s.starts = append(s.starts, time.Time{})
	k := len(s.sessions) - 1
	from := len(s.items)
	return func(id string, byCall map[string][]OpView, start time.Time) {
		s.sessions[k], s.byCall[k], s.starts[k] = id, byCall, start
		for i := from; i < len(s.items); i++ {
			if it := &s.items[i]; it.zero {
				it.sec, it.nsec = start.Unix(), int32(start.Nanosecond())
			}
		}
	}
}

// add writes e to the spool, as an event of the current session.
func (s *Spool) add(e *manifest.Event) {
	if s.err != nil {
		return
	}
	s.buf = appendEvent(s.buf[:0], e)
	if _, err := s.w.Write(s.buf); err != nil {
		s.err = fmt.Errorf("writing the timeline's spool file (TMPDIR sets where it goes): %w", err)
		return
	}
	sec, nsec := e.Time.Unix(), int32(e.Time.Nanosecond())
	s.items = append(s.items, spooled{sec: sec, nsec: nsec, zero: e.Time.IsZero(), open: isOpen(e), sess: int32(len(s.sessions) - 1), line: e.Line,
		off: s.off, n: len(s.buf), kind: e.Kind, outcome: e.Outcome})
	s.off += int64(len(s.buf))
}

// finish sorts the events as the in-memory timeline is sorted: by time,
// then line, in the order read where both tie.
func (s *Spool) finish() error {
	if s.err == nil {
		if err := s.w.Flush(); err != nil {
			s.err = fmt.Errorf("writing the timeline's spool file (TMPDIR sets where it goes): %w", err)
		}
	}
	sort.SliceStable(s.items, func(a, b int) bool {
		x, y := &s.items[a], &s.items[b]
		if x.sec != y.sec || x.nsec != y.nsec {
			return x.sec < y.sec || x.sec == y.sec && x.nsec < y.nsec
		}
		return x.line < y.line
	})
	return s.err
}

// lastOpenAndAborted is inspection.lastOpenAndAborted, read from the
// index: only the two events it returns are read back.
func (s *Spool) lastOpenAndAborted(id string) (open, aborted *Entry) {
	for i := len(s.items) - 1; i >= 0 && (open == nil || aborted == nil) && s.err == nil; i-- {
		it := &s.items[i]
		if s.sessions[it.sess] != id {
			continue
		}
		if it.open && open == nil {
			open = s.read(i, false)
		}
		if it.kind == manifest.EventAborted && aborted == nil {
			aborted = s.read(i, false)
		}
	}
	return open, aborted
}

// read reads the i'th event back into a new entry (nil if it cannot, with
// s.err set). With alias, its strings are the spool's read buffer, which
// the next read overwrites: for a reader done with the entry by then.
func (s *Spool) read(i int, alias bool) *Entry {
	it := &s.items[i]
	if cap(s.buf) < it.n {
		s.buf = make([]byte, it.n)
	}
	b := s.buf[:it.n]
	if _, err := s.f.ReadAt(b, it.off); err != nil {
		s.err = fmt.Errorf("reading the timeline's spool file: %w", err)
		return nil
	}
	e := &Entry{}
	if err := readEventAlias(b, &e.Event, alias); err != nil {
		s.err = fmt.Errorf("reading the timeline's spool file at byte %d: %w", it.off, err)
		return nil
	}
	if e.Time.IsZero() {
		e.Time = s.starts[it.sess]
	}
	e.Session, e.Ops = s.sessions[it.sess], s.byCall[it.sess][e.CallID]
	return e
}

// all yields every event in order, each valid until the next: its strings
// are the read buffer's (a gigabyte's timeline decoded into fresh strings
// kept the collector and the scavenger busy for a second), and are
// overwritten once yield returns. A read error ends it and is left in
// s.err.
func (s *Spool) all() iter.Seq[*Entry] {
	return func(yield func(*Entry) bool) {
		for i := range s.items {
			e := s.read(i, true)
			if e == nil || !yield(e) {
				return
			}
			if PoisonSpool {
				clear(s.buf[:s.items[i].n]) // what kept a string of it now reads NULs
			}
		}
	}
}

// PoisonSpool makes all overwrite each event once its reader is done with
// it (tests: a reader that keeps a string of it then reports NULs).
var PoisonSpool = false

// An event is spooled as its fields in order: strings and times as a
// uvarint length and their bytes (a time in its binary form, which keeps
// its offset), integers as varints, booleans as a byte.

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	m, err := t.MarshalBinary()
	if err != nil {
		// A zone offset that is not whole minutes: keep the instant.
		m, _ = t.UTC().MarshalBinary()
	}
	b = append(b, byte(len(m)))
	return append(b, m...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendEvent(b []byte, e *manifest.Event) []byte {
	b = appendString(b, string(e.Kind))
	b = appendTime(b, e.Time)
	b = binary.AppendVarint(b, int64(e.Line))
	for _, s := range []string{e.Tool, e.Target, e.CallID, string(e.Outcome), e.Detail, e.Text} {
		b = appendString(b, s)
	}
	b = appendTime(b, e.Ended)
	b = appendBool(b, e.Sidechain)
	b = appendString(b, e.Agent)
	b = appendString(b, e.Subagent)
	b = appendString(b, e.Output)
	b = appendBool(b, e.OutputCut)
	b = appendBool(b, e.Todos != nil)
	b = binary.AppendUvarint(b, uint64(len(e.Todos)))
	for _, t := range e.Todos {
		b = appendString(b, t.Text)
		b = appendString(b, t.Status)
	}
	return b
}

var errSpool = errors.New("damaged record")

// eventReader reads what appendEvent wrote; the first fault sticks.
// With alias, its strings are b's bytes, not copies.
type eventReader struct {
	b     []byte
	err   error
	alias bool
}

func (r *eventReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errSpool, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *eventReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = errSpool, nil
		return ""
	}
	var s string
	switch {
	case n == 0:
	case r.alias:
		s = zerocopy.String(r.b[:n])
	default:
		s = string(r.b[:n])
	}
	r.b = r.b[n:]
	return s
}

func (r *eventReader) byte() byte {
	if len(r.b) == 0 {
		r.err = errSpool
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *eventReader) time() time.Time {
	n := int(r.byte())
	if n == 0 {
		return time.Time{}
	}
	if n > len(r.b) {
		r.err, r.b = errSpool, nil
		return time.Time{}
	}
	var t time.Time
	if err := t.UnmarshalBinary(r.b[:n]); err != nil {
		r.err = err
	}
	r.b = r.b[n:]
	return t
}

func readEvent(b []byte, e *manifest.Event) error { return readEventAlias(b, e, false) }

func readEventAlias(b []byte, e *manifest.Event, alias bool) error {
	r := &eventReader{b: b, alias: alias}
	e.Kind = manifest.EventKind(r.string())
	e.Time = r.time()
	line, n := binary.Varint(r.b)
	if n <= 0 {
		return errSpool
	}
	r.b = r.b[n:]
	e.Line = int(line)
	e.Tool, e.Target, e.CallID = r.string(), r.string(), r.string()
	e.Outcome = manifest.Outcome(r.string())
	e.Detail, e.Text = r.string(), r.string()
	e.Ended = r.time()
	e.Sidechain = r.byte() == 1
	e.Agent, e.Subagent, e.Output = r.string(), r.string(), r.string()
	e.OutputCut = r.byte() == 1
	hasTodos := r.byte() == 1
	k := r.uvarint()
	if k > uint64(len(r.b)) {
		return errSpool
	}
	if hasTodos {
		e.Todos = make([]manifest.Todo, k)
		for i := range e.Todos {
			e.Todos[i] = manifest.Todo{Text: r.string(), Status: r.string()}
		}
	}
	if r.err == nil && len(r.b) != 0 {
		return errSpool
	}
	return r.err
}
