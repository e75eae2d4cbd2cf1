package memtune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestMemLimit(t *testing.T) {
	for _, c := range []struct{ live, line, want int64 }{
		{0, 0, memFloor},
		{10 << 20, 0, memFloor},
		{16 << 20, 0, memFloor},
		{20 << 20, 0, 42 << 20},
		{32 << 20, 0, 72 << 20},
		{100 << 20, 0, 242 << 20},
		{10 << 20, 200 << 20, memFloor + 400<<20},
	} {
		if got := memLimit(c.live, c.line); got != c.want {
			t.Errorf("memLimit(%d, %d) = %d, want %d", c.live, c.line, got, c.want)
		}
	}
}

// TestMemoryLimitFollowsTheLiveHeap: once tuned, the soft limit rises with
// a live heap past the floor (so the collector does not run without end),
// and comes back down when it is freed.
func TestMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory changes the heap")
	}
	t.Setenv("GOMEMLIMIT", "")
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	Start(func() int64 { return 0 })
	// The limit after collections, once ok says it is right or after a
	// second: the finalizer that sets it runs on a goroutine of its own.
	limitAfterGC := func(ok func(int64) bool) int64 {
		t.Helper()
		var got int64
		for range 100 {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			if got = debug.SetMemoryLimit(-1); ok(got) {
				break
			}
		}
		return got
	}
	held := make([][]byte, 0, 150)
	for range 150 {
		b := make([]byte, 1<<20)
		b[0] = 1
		held = append(held, b)
	}
	if got := limitAfterGC(func(n int64) bool { return n >= 2*150<<20 }); got < 2*150<<20 {
		t.Errorf("limit %d MiB with 150 MiB live, want at least twice that", got>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	if got := limitAfterGC(func(n int64) bool { return n <= 100<<20 }); got > 100<<20 {
		t.Errorf("limit %d MiB after the heap was freed, want it back near %d MiB", got>>20, memFloor>>20)
	}
}
