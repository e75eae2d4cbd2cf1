package emit

import (
	"reflect"
	"testing"
	"time"
)

// TestCalls follows calls from their start to their result: a call settles
// once, from running or interrupted; one written again after it is not
// new; the unsettled are listed in the order they were made.
func TestCalls(t *testing.T) {
	var cs Calls[string]
	for _, id := range []string{"c1", "c2", "c3"} {
		if !cs.Start(id, "call "+id) {
			t.Fatalf("%s not new", id)
		}
	}
	if cs.Start("c2", "again") {
		t.Error("a running call started again")
	}
	if c, ok := cs.Settle("c1"); !ok || c != "call c1" {
		t.Errorf("settle c1: %q %v", c, ok)
	}
	if _, ok := cs.Settle("c1"); ok || cs.Start("c1", "copied") {
		t.Error("a settled call settled or started again")
	}
	cs.Interrupt("t1", func(c string) bool { return c == "call c2" })
	if !cs.Running() {
		t.Error("c3 should still run")
	}
	cs.Start("c4", "call c4")
	cs.Interrupt("t2", nil)
	if cs.Running() {
		t.Error("nothing should run after an interrupt of all")
	}
	got := cs.Unsettled()
	want := []Open[string]{{ID: "c2", Call: "call c2", Interrupted: true, Stopped: "t1"}, {ID: "c3", Call: "call c3", Interrupted: true, Stopped: "t2"},
		{ID: "c4", Call: "call c4", Interrupted: true, Stopped: "t2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unsettled %+v, want %+v", got, want)
	}
	if c, ok := cs.Settle("c3"); !ok || c != "call c3" {
		t.Error("an interrupted call was not settled by its late result")
	}
	if !cs.Lost("gone") || cs.Lost("gone") || cs.Lost("c2") || cs.Lost("c1") {
		t.Error("Lost: a result without its call is told once, and a known call is not lost")
	}
	var zero Calls[int]
	if zero.Running() || len(zero.Unsettled()) != 0 {
		t.Error("the zero value is not empty")
	}
	if _, ok := zero.Settle("x"); ok {
		t.Error("the zero value settled a call")
	}
}

// TestUnixTime: seconds, milliseconds, and nothing for a time a manifest
// cannot hold.
func TestUnixTime(t *testing.T) {
	for v, want := range map[int64]string{
		1762336801:          "2025-11-05T10:00:01Z",
		1762336801123:       "2025-11-05T10:00:01.123Z",
		0:                   "0001-01-01T00:00:00Z",
		-5:                  "0001-01-01T00:00:00Z",
		253402300799999:     "9999-12-31T23:59:59.999Z",
		253402300800000:     "0001-01-01T00:00:00Z",
		9223372036854775807: "0001-01-01T00:00:00Z",
	} {
		if got := UnixTime(v).Format(time.RFC3339Nano); got != want {
			t.Errorf("UnixTime(%d) = %s, want %s", v, got, want)
		}
	}
	if !UnixMilli(253402300800000).IsZero() || UnixMilli(1762336801123).IsZero() {
		t.Error("UnixMilli keeps a time past 9999, or drops one before")
	}
}
