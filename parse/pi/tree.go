package pi

import (
	"cmp"
	"slices"
)

// tree is a session's entries in the order written: the hash of each id
// and of its parent's id. It stands for the map from an entry to its
// parent (the last parent written for an id; 0 for an id never written)
// that the walk from the current position back to the root follows, at
// two appends a line: an insert a line into a map of every entry was,
// in cache misses, a tenth of a pi parse.
type tree struct{ id, parent []uint64 }

// add records an entry and its parent.
func (t *tree) add(id, parent uint64) {
	t.id = append(t.id, id)
	t.parent = append(t.parent, parent)
}

// walk calls visit with each entry from the last one written back towards
// root (not visited), as the map would lead: at most one step more than
// there are distinct ids, so a cycle goes round the same entries again.
func (t *tree) walk(root uint64, visit func(uint64)) {
	n := len(t.id)
	if n == 0 {
		return
	}
	type at struct {
		id uint64
		i  int
	}
	sorted := make([]at, n)
	for i, h := range t.id {
		sorted[i] = at{h, i}
	}
	slices.SortFunc(sorted, func(a, b at) int { return cmp.Compare(a.id, b.id) })
	for k := 1; k < n; k++ {
		if sorted[k].id == sorted[k-1].id {
			t.walkTable(root, visit) // an id written twice: its last parent counts
			return
		}
	}
	// Every id is written once: an entry's parent is the one written with
	// it, found at its index, most often the index before.
	pos := func(e uint64) int {
		k, ok := slices.BinarySearchFunc(sorted, e, func(a at, e uint64) int { return cmp.Compare(a.id, e) })
		if !ok {
			return -1
		}
		return sorted[k].i
	}
	e, i := t.id[n-1], n-1
	for steps := 0; e != root && steps <= n; steps++ {
		visit(e)
		par := uint64(0)
		if i >= 0 {
			par = t.parent[i]
		}
		if i > 0 && t.id[i-1] == par {
			i--
		} else {
			i = pos(par)
		}
		e = par
	}
}

// walkTable is walk through the map itself, for a tree that writes an id
// twice.
func (t *tree) walkTable(root uint64, visit func(uint64)) {
	m := make(map[uint64]uint64, len(t.id))
	for i, h := range t.id {
		m[h] = t.parent[i]
	}
	for e, n := t.id[len(t.id)-1], 0; e != root && n <= len(m); n++ {
		visit(e)
		e = m[e]
	}
}
