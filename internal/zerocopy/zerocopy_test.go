package zerocopy

import "testing"

func TestViews(t *testing.T) {
	b := []byte("hello, world")
	s := String(b)
	if s != "hello, world" || String(nil) != "" || Bytes("") != nil || string(Bytes(s)) != s {
		t.Fatal("views differ from their memory")
	}
	in := Within(b)
	if !in(s[7:]) || in("world") || in("") || Within(nil) != nil {
		t.Fatal("Within: wrong answer")
	}
	if sub, ok := Inside(s, b[7:12]); !ok || sub != "world" {
		t.Fatalf("Inside: %q %v", sub, ok)
	}
	if _, ok := Inside(s, []byte("world")); ok {
		t.Fatal("Inside: a copy lies within s")
	}
	b[0] = 'j' // a view sees its memory change: the reason to copy what is kept
	if s[0] != 'j' {
		t.Fatal("String copied")
	}
}
