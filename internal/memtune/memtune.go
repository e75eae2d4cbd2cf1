// Package memtune keeps the Go runtime's soft memory limit at what the
// work holds (Start): the one place sandbox tunes the collector.
package memtune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// memFloor is the soft memory limit for a small live heap: the Go
// runtime's own memory (heap, free pages not yet returned, metadata),
// under which it collects as usual. The binary's pages (about 20 MB) come
// on top in the resident set.
const memFloor = 40 << 20

var tuneOnce sync.Once

// Start keeps the runtime's soft memory limit at what the work
// holds: about twice the live heap (as GOGC=100 does; memLimit) but at
// least memFloor, plus twice the longest transcript line held (a line gathered in blocks
// is, for a moment, in them and in one piece). With the collector's
// default alone the heap could grow to twice the live heap whatever it
// was, and free pages were kept until a slow scavenger returned them: a
// 1 GiB session peaked at 66-83 MB, of which 20 MB live. The limit is
// re-read after each collection, so it follows a heap that grows (a
// replay of large files) instead of making the collector run without end.
// A GOMEMLIMIT in the environment is the user's, and is left alone.
// longest returns the longest transcript line held so far (jsonl.Longest).
func Start(longest func() int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	tuneOnce.Do(func() {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		set := func() {
			metrics.Read(live)
			var n int64
			if live[0].Value.Kind() == metrics.KindUint64 {
				n = int64(live[0].Value.Uint64())
			}
			debug.SetMemoryLimit(memLimit(n, longest()))
		}
		set()
		var arm func()
		arm = func() {
			// A finalizer runs after each collection that finds its object
			// unreachable: one collection, one new object.
			runtime.SetFinalizer(&gcTick{}, func(*gcTick) {
				set()
				arm()
			})
		}
		arm()
	})
}

// memLimit is the soft memory limit for a live heap and a longest line.
// Past the floor it is twice the live heap, as GOGC=100 would have the
// heap; but the limit counts all the runtime's memory, which is a quarter
// more than the heap, so for a larger heap (a scan of a whole home, with a
// parser a core) it goes to 2.5 times, so as not to collect more often
// than the default does: max(2x, 2.5x - 8 MiB) leaves 2x at 16 MiB.
func memLimit(live, line int64) int64 {
	return max(memFloor, 2*live, live*5/2-8<<20) + 2*line
}

// gcTick is allocated for its finalizer; its pointer keeps it out of the
// tiny allocator, whose blocks free (and finalize) late.
type gcTick struct{ _ *int }
