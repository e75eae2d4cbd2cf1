package harness

import (
	"strings"
	"testing"
)

// TestEventLines: the runtime log is read a line at a time, a line too long
// to be an event is skipped without being held, and the last line needs no
// newline.
func TestEventLines(t *testing.T) {
	long := strings.Repeat("x", maxEventLine+1)
	in := "a\n\n" + long + "\nb\n" + long + "c"
	var got []string
	for l := range eventLines(strings.NewReader(in)) {
		got = append(got, strings.TrimSuffix(string(l), "\n"))
	}
	if strings.Join(got, "|") != "a|b" {
		t.Fatalf("got %q", got)
	}
	got = nil
	for l := range eventLines(strings.NewReader("a\nlast")) {
		got = append(got, strings.TrimSuffix(string(l), "\n"))
	}
	if strings.Join(got, "|") != "a|last" {
		t.Fatalf("got %q", got)
	}
}
