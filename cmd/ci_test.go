package cmd

import (
	"os"
	"strconv"
	"testing"
)

// onCI says whether the tests run under CI (CI=true, as CI services and
// .ci/run's callers set it).
func onCI() bool {
	v, _ := strconv.ParseBool(os.Getenv("CI"))
	return v
}

// missing ends a test that needs something this machine lacks (a runtime
// such as Docker, bubblewrap or Chromium, or root): a skip that says what,
// or, under CI=true, a failure. A CI machine is set up to have all of them
// (.ci/run installs what it can), so there a missing one is a broken
// machine, never a test that quietly did not run.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if onCI() {
		t.Fatalf("CI=true, but "+format, args...)
	}
	t.Skipf(format, args...)
}
