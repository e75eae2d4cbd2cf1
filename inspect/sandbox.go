package inspect

import (
	"fmt"
	"strings"
)

// SandboxEnd is how one harness run ended, from the session's runtime log.
type SandboxEnd struct {
	Session    string   `json:"session"`
	Event      string   `json:"event"` // sandbox_stopped or session_drop
	Time       string   `json:"time"`
	Run        int      `json:"run"`
	State      string   `json:"state,omitempty"`
	ExitCode   int      `json:"exit_code"`
	Signal     string   `json:"signal,omitempty"`
	OOM        bool     `json:"oom,omitempty"`
	Error      string   `json:"error,omitempty"`
	LastOutput []string `json:"last_output,omitempty"`
}

func (e SandboxEnd) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "harness session %s, last run (%d) at %s: ", e.Session, e.Run, e.Time)
	switch {
	case e.Event == "session_drop":
		b.WriteString("dropped (the harness died)")
	case e.OOM:
		b.WriteString("killed: out of memory")
	case e.Signal != "":
		fmt.Fprintf(&b, "killed by %s (exit %d)", e.Signal, e.ExitCode)
	default:
		fmt.Fprintf(&b, "%s with code %d", orState(e.State), e.ExitCode)
	}
	if e.Error != "" {
		b.WriteString(": " + e.Error)
	}
	return b.String()
}

func orState(s string) string {
	if s == "" {
		return "exited"
	}
	return s
}
