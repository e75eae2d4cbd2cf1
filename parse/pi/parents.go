package pi

// parents maps every entry of a session's tree to its parent, both by the
// hashes of their ids (maphash: uniformly spread). It is a map[uint64]uint64
// — set overwrites, get of an absent key is 0, size counts distinct keys —
// kept as one open-addressed table: an entry a line made the Go map's
// inserts, its growth and the walk at the end a tenth of a pi parse.
type parents struct {
	slots []slot // a power of two long, or nil; key 0 marks a free slot
	n     int    // keys in slots
	zero  *uint64
}

type slot struct{ key, val uint64 }

// set makes v the parent of k.
func (t *parents) set(k, v uint64) {
	if k == 0 {
		t.zero = &v
		return
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == k {
			s.val = v
			return
		}
		if s.key == 0 {
			s.key, s.val = k, v
			t.n++
			return
		}
	}
}

// get returns the parent of k, or 0 when k has none.
func (t *parents) get(k uint64) uint64 {
	if k == 0 {
		if t.zero != nil {
			return *t.zero
		}
		return 0
	}
	if len(t.slots) == 0 {
		return 0
	}
	mask := uint64(len(t.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.key == k {
			return s.val
		}
		if s.key == 0 {
			return 0
		}
	}
}

// size is the number of entries.
func (t *parents) size() int {
	if t.zero != nil {
		return t.n + 1
	}
	return t.n
}

func (t *parents) grow() {
	old := t.slots
	size := 1024
	if len(old) > 0 {
		size = 2 * len(old)
	}
	t.slots, t.n = make([]slot, size), 0
	for _, s := range old {
		if s.key != 0 {
			t.set(s.key, s.val)
		}
	}
}
