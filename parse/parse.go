package parse

import (
	"bytes"
	"errors"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/codex"
	"github.com/agentsandbox/sandbox/parse/jsonl"
	"github.com/tidwall/gjson"
)

// ErrUnknownFormat is returned for a file that is not a transcript of a
// known agent.
var ErrUnknownFormat = errors.New("not a transcript of a known agent")

// Detect tells a transcript's agent from its first bytes (by content, so a
// renamed file still reads). Each record in head votes for the agent whose
// record it looks like, and the majority decides: one line of another
// agent's shape (a pasted record, a test line) does not turn a session into
// the other agent's. Records are read as JSON, so whitespace, key order and
// escapes do not matter; the last record may be cut short.
func Detect(head []byte) (manifest.Agent, bool) {
	head = jsonl.TrimBOM(head)
	// A transcript is JSON: prose that quotes one (a README, a spec) is not.
	if t := bytes.TrimLeft(head, " \t\r\n\x00"); len(t) == 0 || t[0] != '{' {
		return "", false
	}
	if codex.SingleJSON(head) {
		return manifest.AgentCodex, true
	}
	var votes [2]int // codex, claude
	first := true
	eachLine(head, func(line []byte) {
		switch shape(line, first) {
		case manifest.AgentCodex:
			votes[0]++
		case manifest.AgentClaude:
			votes[1]++
		}
		first = false
	})
	switch {
	case votes[0] == 0 && votes[1] == 0:
		return "", false
	case votes[1] > votes[0]:
		return manifest.AgentClaude, true
	}
	return manifest.AgentCodex, true // a tie goes to Codex, whose marks are the more specific
}

// eachLine calls fn with each line of b that may be a record (it starts with
// "{"), trimmed; the last one may be cut short.
func eachLine(b []byte, fn func(line []byte)) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.Trim(line, " \t\r\x00")
		if len(line) > 0 && line[0] == '{' {
			fn(line)
		}
	}
}

// top reads the top-level fields named in want from a record (complete, or
// cut short: those before the cut), the last of each as decoders do.
func top(line []byte, want ...string) []gjson.Result {
	out := make([]gjson.Result, len(want))
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
		for i, w := range want {
			if k.Str == w {
				out[i] = v
			}
		}
		return true
	})
	return out
}

// shape says which agent's record a line looks like, if either's.
func shape(line []byte, first bool) manifest.Agent {
	f := top(line, "type", "sessionId", "parentUuid", "record_type", "id", "timestamp")
	typ, sessionID, parent, recordType, id, ts := f[0], f[1], f[2], f[3], f[4], f[5]
	switch {
	case sessionID.Exists() || parent.Exists():
		return manifest.AgentClaude
	case typ.Type == gjson.String:
		switch typ.Str {
		case "session_meta", "turn_context", "response_item", "event_msg", "compacted":
			return manifest.AgentCodex
		case "file-history-snapshot":
			return manifest.AgentClaude
		}
	case recordType.Exists():
		return manifest.AgentCodex // a legacy rollout's state line
	case first && id.Exists() && ts.Exists():
		return manifest.AgentCodex // a legacy rollout's first line
	}
	return ""
}
