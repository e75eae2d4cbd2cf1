package jsonl

import (
	"bytes"
	"testing"
)

// TestBigBufGrows adds pieces to a mapping past its first size, several
// times over: what it holds is what was added, in order, through each
// move of the mapping.
func TestBigBufGrows(t *testing.T) {
	g := newBigBuf(100 << 10)
	if g == nil {
		t.Skip("no anonymous mapping here")
	}
	defer g.free()
	first := len(g.m)
	var want bytes.Buffer
	piece := make([]byte, 37<<10+3)
	for i := 0; want.Len() < 20*first; i++ {
		for k := range piece {
			piece[k] = byte(i + k)
		}
		if !g.add(piece) {
			t.Fatalf("add %d failed", i)
		}
		want.Write(piece)
	}
	if len(g.m) <= first {
		t.Fatalf("the mapping did not grow: %d bytes", len(g.m))
	}
	if !bytes.Equal(g.bytes(), want.Bytes()) {
		t.Fatalf("held %d bytes, not the %d added", len(g.bytes()), want.Len())
	}
}
