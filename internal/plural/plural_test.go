package plural

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 files", 1: "1 file", 2: "2 files", -1: "-1 files"} {
		if got := Count(n, "file"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
