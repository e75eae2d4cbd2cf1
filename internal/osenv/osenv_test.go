package osenv

import "testing"

func TestLookup(t *testing.T) {
	e := Env{"A=1", "B=", "A=2", "C"}
	if v, ok := e.Lookup("A"); !ok || v != "2" {
		t.Errorf("A: %q %v (the later entry wins)", v, ok)
	}
	if v, ok := e.Lookup("B"); !ok || v != "" {
		t.Errorf("B: %q %v (set, empty)", v, ok)
	}
	if _, ok := e.Lookup("C"); ok {
		t.Error("an entry without = sets nothing")
	}
	if _, ok := e.Lookup("D"); ok {
		t.Error("D is not set")
	}
	w := e.With("D", "x")
	if w.Get("D") != "x" || e.Get("D") != "" || len(e) != 4 {
		t.Errorf("With changed its receiver or did not set: %v %v", w, e)
	}
	if h, err := (Env{"HOME=/h"}).Home(); err != nil || h != "/h" {
		t.Errorf("Home: %q %v", h, err)
	}
	if _, err := (Env{}).Home(); err == nil {
		t.Error("an empty environment has no home")
	}
}

func TestNilIsTheProcess(t *testing.T) {
	t.Setenv("OSENV_PROBE", "yes")
	var e Env
	if e.Get("OSENV_PROBE") != "yes" || Process().Get("OSENV_PROBE") != "yes" {
		t.Error("the nil Env is not the process's")
	}
}
