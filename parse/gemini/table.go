package gemini

// table is a map[uint64]uint64 for keys that are hashes (maphash: spread
// evenly), used for sets of ids and for the tree's parents: set
// overwrites, get of an absent key finds nothing, del removes, size counts
// keys. It is one open-addressed table of linear probing, half the bytes
// of the Go map's and a third of its time: with an insert or a look-up a
// line of a large session, the map was a tenth of a parse.
//
// parse/gemini and parse/pi each hold this file, the same but for the
// package name.
type table struct {
	slots []slot // a power of two long, or nil; key 0 marks a free slot
	n     int    // keys in slots
	zero  *uint64
}

type slot struct{ key, val uint64 }

// set makes v the value of k.
func (t *table) set(k, v uint64) {
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

// get returns the value of k, and whether k is there.
func (t *table) get(k uint64) (uint64, bool) {
	if k == 0 {
		if t.zero != nil {
			return *t.zero, true
		}
		return 0, false
	}
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.key == k {
			return s.val, true
		}
		if s.key == 0 {
			return 0, false
		}
	}
}

// has reports whether k is there.
func (t *table) has(k uint64) bool {
	_, ok := t.get(k)
	return ok
}

// del removes k. The keys after it in its run move back into the hole
// when their home slot allows, so no look-up ever stops short.
func (t *table) del(k uint64) {
	if k == 0 {
		t.zero = nil
		return
	}
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := k & mask
	for ; t.slots[i].key != k; i = (i + 1) & mask {
		if t.slots[i].key == 0 {
			return
		}
	}
	for j := (i + 1) & mask; t.slots[j].key != 0; j = (j + 1) & mask {
		// The key at j may fill the hole at i unless its home slot h is
		// cyclically in (i, j]: it would then no longer be found.
		h := t.slots[j].key & mask
		if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot{}
	t.n--
}

// size is the number of keys.
func (t *table) size() int {
	if t.zero != nil {
		return t.n + 1
	}
	return t.n
}

func (t *table) grow() {
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
