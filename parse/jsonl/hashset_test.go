package jsonl

import (
	"math/rand"
	"testing"
)

// TestHashSet checks the set against a map[uint64]bool: adds, deletes, absent
// keys, the key 0, keys that share their low bits, growth.
func TestHashSet(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var got HashSet
	want := map[uint64]bool{}
	key := func() uint64 { return uint64(r.Intn(3000)) << (r.Intn(2) * 40) }
	for i := 0; i < 30000; i++ {
		k := key()
		if r.Intn(3) == 0 {
			got.Del(k)
			delete(want, k)
			continue
		}
		got.Add(k)
		want[k] = true
	}
	for k := uint64(0); k < 3500; k++ {
		for _, key := range []uint64{k, k << 40} {
			if got.Has(key) != want[key] {
				t.Fatalf("has(%d) = %v, want %v", key, got.Has(key), want[key])
			}
		}
	}
	if got.Size() != len(want) {
		t.Errorf("size %d, want %d", got.Size(), len(want))
	}
}
