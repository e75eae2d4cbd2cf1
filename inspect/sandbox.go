package inspect

import "github.com/agentsandbox/sandbox/harness"

// SandboxEnd is how one harness run of a session ended, from the session's
// runtime log (harness.Store.LastEnd).
type SandboxEnd = harness.RunEnd
