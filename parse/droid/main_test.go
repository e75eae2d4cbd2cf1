package droid

import (
	"testing"

	"github.com/agentsandbox/sandbox/parse/internal/testhook"
)

// The parser's tests run with records poisoned once read (testhook.Poison):
// nothing it keeps may alias a record's bytes.
func TestMain(m *testing.M) { testhook.Main(m) }
