//go:build !race

package memtune

// raceEnabled says the tests run under the race detector (see race_test.go).
const raceEnabled = false
