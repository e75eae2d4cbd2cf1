//go:build race

package memtune

// raceEnabled says the tests run under the race detector, which makes the
// command many times slower and bigger: tests that measure its memory or time
// its kills run without it (.ci/run does both).
const raceEnabled = true
