package jsonl

// HashSet is a set of 64-bit hashes of ids (maphash: spread evenly), such as
// the calls already settled: one open-addressed table of linear probing,
// 8 bytes a slot. A Go map[uint64]bool took two to four times the bytes
// and, with an insert or a look-up a line of a large session, a tenth of
// a parse.
type HashSet struct {
	slots []uint64 // a power of two long, or nil; 0 marks a free slot
	n     int      // keys in slots
	zero  bool     // whether 0 is in the set
}

// Add puts k in the set.
func (s *HashSet) Add(k uint64) {
	if k == 0 {
		s.zero = true
		return
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return
		case 0:
			s.slots[i] = k
			s.n++
			return
		}
	}
}

// Has reports whether k is in the set.
func (s *HashSet) Has(k uint64) bool {
	if k == 0 {
		return s.zero
	}
	if len(s.slots) == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

// Del takes k out of the set. The keys after it in its run move back into
// the hole when their home slot allows, so no look-up ever stops short.
func (s *HashSet) Del(k uint64) {
	if k == 0 {
		s.zero = false
		return
	}
	if len(s.slots) == 0 {
		return
	}
	mask := uint64(len(s.slots) - 1)
	i := k & mask
	for ; s.slots[i] != k; i = (i + 1) & mask {
		if s.slots[i] == 0 {
			return
		}
	}
	for j := (i + 1) & mask; s.slots[j] != 0; j = (j + 1) & mask {
		// The key at j may fill the hole at i unless its home slot h is
		// cyclically in (i, j]: it would then no longer be found.
		h := s.slots[j] & mask
		if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = 0
	s.n--
}

// Size is the number of keys.
func (s *HashSet) Size() int {
	if s.zero {
		return s.n + 1
	}
	return s.n
}

func (s *HashSet) grow() {
	old := s.slots
	size := 1024
	if len(old) > 0 {
		size = 2 * len(old)
	}
	s.slots, s.n = make([]uint64, size), 0
	for _, k := range old {
		if k != 0 {
			s.Add(k)
		}
	}
}
