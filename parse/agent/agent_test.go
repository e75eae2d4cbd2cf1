package agent

import (
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

func TestEnvHome(t *testing.T) {
	env := map[string]string{"SET": "/from/env/"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		env, under, home string
		def              []string
		want             string
	}{
		{"SET", "", "/h", []string{".x"}, "/from/env/"}, // as the variable says it
		{"SET", ".sub", "/h", []string{".x"}, "/from/env/.sub"},
		{"UNSET", ".sub", "/h", []string{".local", "share", "x"}, filepath.Join("/h", ".local", "share", "x")},
		{"UNSET", "", "", []string{".x"}, ""}, // no home: no folder
	} {
		if got := EnvHome(getenv, c.home, c.env, c.under, c.def...); got != c.want {
			t.Errorf("EnvHome(%s, %q, %q, %v) = %q, want %q", c.env, c.home, c.under, c.def, got, c.want)
		}
	}
}

func TestRecordKeys(t *testing.T) {
	a, b := NewKey("agent_test_a"), NewKey("agent_test_b")
	if NewKey("agent_test_a") != a || a == b {
		t.Fatal("a key declared twice must be the same key, and two keys differ")
	}
	if k, ok := KeyOf([]byte("agent_test_b")); !ok || k != b {
		t.Fatal("KeyOf does not find a declared key")
	}
	if _, ok := KeyOf([]byte("agent_test_undeclared")); ok {
		t.Fatal("KeyOf finds an undeclared key")
	}
	r := NewRecord()
	r.Set(a, gjson.Parse(`"x"`))
	if r.Get(a).Str != "x" || r.Get(b).Exists() || r.Get(Key(1<<20)).Exists() {
		t.Fatal("Record keeps the wrong fields")
	}
	r.Reset()
	if r.Get(a).Exists() {
		t.Fatal("Reset kept a field")
	}
}

func TestHeadSpan(t *testing.T) {
	var h Head
	h.Add("2026-11-20T10:00:00Z")
	h.Add("2026-11-20T09:00:00Z")
	h.Add("2026-11-20T09:00:00Z") // the same field of several agents' Note
	h.Add("not a time")
	h.AddMillis(0)
	if h.First.Format("15") != "09" || h.Last.Format("15") != "10" {
		t.Fatalf("span %v–%v", h.First, h.Last)
	}
	h.SetCwd("/a")
	h.SetCwd("/b")
	if h.Cwd != "/a" {
		t.Fatalf("cwd %q: the first record that gives one wins", h.Cwd)
	}
}

func TestOrList(t *testing.T) {
	if OrList([]string{"a"}) != "a" || OrList([]string{"a", "b", "c"}) != "a, b or c" || OrList(nil) != "" {
		t.Fatal(OrList([]string{"a", "b", "c"}))
	}
}
