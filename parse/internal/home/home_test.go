package home

import "testing"

func TestExpand(t *testing.T) {
	for _, c := range []struct{ cwd, p, want string }{
		{"/Users/badlogic/workspaces/pi-mono", "~/.pi/agent/themes/nord.json", "/Users/badlogic/.pi/agent/themes/nord.json"},
		{"/home/u", "~", "/home/u"},
		{"/root/src/x", "~/a/../b", "/root/b"},
		{"/workspace", "~/.config/x", "~/.config/x"},
		{"/Users/Shared/p", "~/x", "~/x"},
		{"/home", "~/x", "~/x"},
	} {
		got, ok := Expand(c.cwd, c.p)
		if !ok || got != c.want {
			t.Errorf("Expand(%q, %q) = %q, %v; want %q", c.cwd, c.p, got, ok, c.want)
		}
	}
	for _, p := range []string{"a/~", "~user/x", "/abs", "x"} {
		if got, ok := Expand("/home/u", p); ok {
			t.Errorf("Expand(%q) = %q, want no expansion", p, got)
		}
	}
}
