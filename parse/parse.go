package parse

import (
	"bytes"
	"errors"
	"regexp"

	"github.com/agentsandbox/sandbox/manifest"
)

// ErrUnknownFormat is returned for a file that is not a transcript of a
// known agent.
var ErrUnknownFormat = errors.New("not a transcript of a known agent")

var (
	codexMarks = regexp.MustCompile(`"type"\s*:\s*"(session_meta|turn_context|response_item|event_msg)"|"record_type"\s*:`)
	tsCLIMark  = regexp.MustCompile(`^\s*\{\s*"session"\s*:`)
	legacyMeta = regexp.MustCompile(`^\s*\{\s*"id"\s*:`)
	claudeMark = regexp.MustCompile(`"(sessionId|parentUuid)"\s*:`)
)

// Detect tells a transcript's agent from its first bytes (by content, so a
// renamed file still reads).
func Detect(head []byte) (manifest.Agent, bool) {
	// A transcript is JSON: prose that quotes one (a README, a spec) is not.
	if t := bytes.TrimLeft(head, " \t\r\n\x00"); len(t) == 0 || t[0] != '{' {
		return "", false
	}
	switch {
	case codexMarks.Match(head), tsCLIMark.Match(head):
		return manifest.AgentCodex, true
	case claudeMark.Match(head):
		return manifest.AgentClaude, true
	case legacyMeta.Match(head) && bytes.Contains(head, []byte(`"timestamp"`)):
		return manifest.AgentCodex, true
	}
	return "", false
}
