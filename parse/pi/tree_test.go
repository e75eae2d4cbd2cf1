package pi

import (
	"math/rand"
	"reflect"
	"testing"
)

// TestTreeWalk compares walk with the walk through a map[uint64]uint64 it
// stands for, on trees with branches, ids written twice, parents never
// written, cycles and the key 0.
func TestTreeWalk(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	const root = 12345
	for round := 0; round < 3000; round++ {
		var tr tree
		m := map[uint64]uint64{}
		n := 1 + r.Intn(40)
		ids := []uint64{root}
		for i := 0; i < n; i++ {
			id := uint64(1 + r.Intn(3*n))
			if r.Intn(20) == 0 {
				id = 0
			}
			var par uint64
			switch r.Intn(6) {
			case 0: // a branch back to any entry, or the root
				par = ids[r.Intn(len(ids))]
			case 1: // a parent never written, maybe 0
				par = uint64(r.Intn(3)) * 99991
			case 2: // anything, cycles included
				par = uint64(1 + r.Intn(3*n))
			default: // the entry before
				par = ids[len(ids)-1]
			}
			tr.add(id, par)
			m[id] = par
			ids = append(ids, id)
		}
		var want, got []uint64
		for e, k := ids[len(ids)-1], 0; e != root && k <= len(m); e, k = m[e], k+1 {
			want = append(want, e)
		}
		tr.walk(root, func(e uint64) { got = append(got, e) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: ids %v parents %v: walk %v, want %v", round, tr.id, tr.parent, got, want)
		}
	}
}
