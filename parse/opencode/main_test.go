package opencode

import (
	"testing"

	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/internal/testhook"
)

// The parser's tests run with records poisoned once read (testhook.Poison):
// nothing it keeps may alias a record's bytes. Discovery finds opencode's
// stores through the registry, which here holds opencode alone.
func TestMain(m *testing.M) {
	agent.Register(Agent{})
	testhook.Main(m)
}
