package emit

import (
	"hash/maphash"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Calls keeps a session's tool calls from the record that makes one to the
// record that settles it, for the parsers whose calls and results are
// records of their own, paired by the call's id: the calls still running,
// those the session went on without (a new prompt, an abort: a result that
// comes later still settles them), and the ids of the calls settled, so
// that a call written again after its result (a copied history, a
// streamed message written twice) is not a new one. The zero value is
// ready.
type Calls[C any] struct {
	pending, interrupted map[string]open[C]
	settled              jsonl.HashSet // by the hash of the id
	seed                 maphash.Seed
	n                    int
}

// open is a call without its result: seq is its place among the
// session's calls, stopped when (or why) the session went on without it.
type open[C any] struct {
	c       C
	seq     int
	stopped string
}

// Open is a call that never got its result.
type Open[C any] struct {
	ID   string
	Call C
	// Interrupted says the session went on without it, Stopped says when
	// or why (what Interrupt was given); otherwise it was still running
	// when the session ends.
	Interrupted bool
	Stopped     string
}

func (cs *Calls[C]) hash(id string) uint64 {
	if cs.pending == nil {
		cs.pending, cs.interrupted, cs.seed = map[string]open[C]{}, map[string]open[C]{}, maphash.MakeSeed()
	}
	return maphash.String(cs.seed, id)
}

// Start records call c of id as running, and reports true; a call whose id
// is running, interrupted or settled already is not new, and false is
// reported. The id is copied.
func (cs *Calls[C]) Start(id string, c C) bool {
	h := cs.hash(id)
	if _, ok := cs.pending[id]; ok || cs.settled.Has(h) {
		return false
	}
	if _, ok := cs.interrupted[id]; ok {
		return false
	}
	cs.pending[strings.Clone(id)] = open[C]{c: c, seq: cs.n}
	cs.n++
	return true
}

// Settle takes the call of id, running or interrupted, as settled by its
// result; ok is false when no such call is open.
func (cs *Calls[C]) Settle(id string) (c C, ok bool) {
	h := cs.hash(id)
	o, ok := cs.pending[id]
	if ok {
		delete(cs.pending, id)
	} else if o, ok = cs.interrupted[id]; ok {
		delete(cs.interrupted, id)
	}
	if !ok {
		return c, false
	}
	cs.settled.Add(h)
	return o.c, true
}

// Lost reports whether id names no call, running, interrupted or settled
// (the result of a call whose line is lost), and takes it as settled: such
// a result is told once.
func (cs *Calls[C]) Lost(id string) bool {
	h := cs.hash(id)
	if _, ok := cs.pending[id]; ok || cs.settled.Has(h) {
		return false
	}
	if _, ok := cs.interrupted[id]; ok {
		return false
	}
	cs.settled.Add(h)
	return true
}

// Interrupt moves the running calls that keep says so of (every one, when
// keep is nil) to interrupted: the session went on without them, at ts (a
// time, or why).
func (cs *Calls[C]) Interrupt(ts string, keep func(C) bool) {
	for id, o := range cs.pending {
		if keep != nil && !keep(o.c) {
			continue
		}
		o.stopped = strings.Clone(ts)
		cs.interrupted[id] = o
		delete(cs.pending, id)
	}
}

// Running reports whether a call is still running.
func (cs *Calls[C]) Running() bool { return len(cs.pending) > 0 }

// Unsettled lists the calls that never got their result, in the order
// they were made (several calls of one message share a line, and a map
// gives its ids in any order).
func (cs *Calls[C]) Unsettled() []Open[C] {
	type item struct {
		open Open[C]
		seq  int
	}
	items := make([]item, 0, len(cs.pending)+len(cs.interrupted))
	for id, o := range cs.pending {
		items = append(items, item{Open[C]{ID: id, Call: o.c}, o.seq})
	}
	for id, o := range cs.interrupted {
		items = append(items, item{Open[C]{ID: id, Call: o.c, Interrupted: true, Stopped: o.stopped}, o.seq})
	}
	sort.Slice(items, func(a, b int) bool { return items[a].seq < items[b].seq })
	out := make([]Open[C], len(items))
	for i, it := range items {
		out[i] = it.open
	}
	return out
}
