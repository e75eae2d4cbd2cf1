package pi

import (
	"math/rand"
	"testing"
)

// TestParents checks the table against the map it stands for: overwrites,
// absent keys, the key 0, and growth.
func TestParents(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var got parents
	want := map[uint64]uint64{}
	for i := 0; i < 20000; i++ {
		k := uint64(r.Intn(5000)) << (r.Intn(2) * 40) // some keys share their low bits
		v := r.Uint64()
		got.set(k, v)
		want[k] = v
	}
	for k := uint64(0); k < 6000; k++ {
		for _, key := range []uint64{k, k << 40} {
			if got.get(key) != want[key] {
				t.Fatalf("get(%d) = %d, want %d", key, got.get(key), want[key])
			}
		}
	}
	if got.size() != len(want) {
		t.Errorf("size %d, want %d", got.size(), len(want))
	}
}
