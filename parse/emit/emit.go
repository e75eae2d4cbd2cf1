// Package emit is how the agent parsers hand on what they find: a session
// header once, then operations in replay order as soon as each is settled.
package emit

import (
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// Handler receives a transcript's session and operations.
type Handler struct {
	// Header is called once, before the first operation (or at the end when
	// there is none), with the session's identity and working directory.
	Header func(manifest.Session)
	// Op is called for each operation, in replay order.
	Op func(manifest.Op)
	// Event, when set, is called for every turn and tool call (file-changing
	// or not), for the timeline of sandbox inspect. Parsers do this extra
	// work only when it is set.
	Event func(manifest.Event)
}

// FirstLine is how a tool's output is quoted as an operation's outcome
// evidence: its first line, cut at 120 bytes.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
