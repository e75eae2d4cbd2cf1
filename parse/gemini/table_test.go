package gemini

import (
	"math/rand"
	"testing"
)

// TestTable checks the table against the map it stands for: overwrites,
// deletes, absent keys, the key 0, keys that share their low bits, growth.
func TestTable(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var got table
	want := map[uint64]uint64{}
	key := func() uint64 { return uint64(r.Intn(3000)) << (r.Intn(2) * 40) }
	for i := 0; i < 30000; i++ {
		k := key()
		if r.Intn(3) == 0 {
			got.del(k)
			delete(want, k)
			continue
		}
		v := r.Uint64()
		got.set(k, v)
		want[k] = v
	}
	for k := uint64(0); k < 3500; k++ {
		for _, key := range []uint64{k, k << 40} {
			v, ok := got.get(key)
			w, wok := want[key]
			if v != w || ok != wok || got.has(key) != wok {
				t.Fatalf("get(%d) = %d, %v; want %d, %v", key, v, ok, w, wok)
			}
		}
	}
	if got.size() != len(want) {
		t.Errorf("size %d, want %d", got.size(), len(want))
	}
}
