package hostpath

import "testing"

func TestJoin(t *testing.T) {
	for _, c := range []struct{ cwd, p, want string }{
		{"/w", "a/../b.txt", "/w/b.txt"},
		{"/w", "/x/./y", "/x/y"},
		{"", "rel/x", "rel/x"},
		{"/w", "", ""},
		{`C:\Users\me\p`, `src\a.py`, "C:/Users/me/p/src/a.py"},
		{"/w", `c:\x\..\y.txt`, "C:/y.txt"},
		{`c:/p`, "b.txt", "C:/p/b.txt"},
	} {
		if got := Join(c.cwd, c.p); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.cwd, c.p, got, c.want)
		}
	}
}
