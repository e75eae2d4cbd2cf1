//go:build !race

package cmd

// raceEnabled says the tests run under the race detector (see race_test.go).
const raceEnabled = false
