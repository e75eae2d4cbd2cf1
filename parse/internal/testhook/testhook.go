// Package testhook holds switches that tests turn on to make a mistake
// visible that would otherwise pass unseen. Nothing outside tests sets them.
package testhook

import (
	"flag"
	"os"
)

// Poison makes jsonl's Each overwrite each record's bytes once fn has
// returned for it. A parser that keeps a slice of a record past its call
// (where reading in place is allowed: the record is valid during the call
// only) then reads '#'s instead of the transcript, and its tests fail.
var Poison bool

// Main runs a package's tests with Poison on (PoisonTests), for a
// TestMain:
//
//	func TestMain(m *testing.M) { testhook.Main(m) }
func Main(m interface{ Run() int }) {
	PoisonTests()
	os.Exit(m.Run())
}

// PoisonTests turns Poison on unless the test binary runs benchmarks: they
// measure the parser, not the poisoning. It parses the test flags.
func PoisonTests() {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		Poison = true
	}
}

// NoWALInPlace makes a SQLite store whose write-ahead log holds changes be
// read through a private copy, as it is when it cannot be read in place (a
// read-only directory), to exercise that path.
var NoWALInPlace bool
