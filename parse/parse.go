package parse

import (
	"bytes"
	"errors"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/codex"
	"github.com/agentsandbox/sandbox/parse/jsonl"
	"github.com/agentsandbox/sandbox/parse/opencode"
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
	return readHead(head).agent()
}

// head is what the records at the start of a transcript say.
type head struct {
	// notJSON is set when the bytes do not start as JSON does (prose that
	// quotes a record: a README, a spec); single when they are the
	// single-JSON layout of the TypeScript codex-cli.
	notJSON, single bool
	// opencode is set when the bytes are an opencode record stream.
	opencode bool
	votes    [2]int // Codex, Claude Code
	// The first of each the records give.
	claudeID, codexID, cwd string
	span
}

// span is the earliest and latest timestamps seen.
type span struct{ first, last time.Time }

func (s *span) add(ts string) {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return
	}
	if s.first.IsZero() || t.Before(s.first) {
		s.first = t
	}
	if t.After(s.last) {
		s.last = t
	}
}

// addMillis adds a time in milliseconds since the epoch (opencode's), when
// there is one.
func (s *span) addMillis(v int64) {
	if v > 0 {
		s.add(time.UnixMilli(v).UTC().Format(time.RFC3339Nano))
	}
}

// agent decides by the votes; a tie goes to Codex, whose marks are the
// more specific.
func (h *head) agent() (manifest.Agent, bool) {
	switch {
	case h.notJSON:
		return "", false
	case h.single:
		return manifest.AgentCodex, true
	case h.opencode:
		return manifest.AgentOpencode, true
	case h.votes[0] == 0 && h.votes[1] == 0:
		return "", false
	case h.votes[1] > h.votes[0]:
		return manifest.AgentClaude, true
	}
	return manifest.AgentCodex, true
}

// readHead reads the records of a transcript's first bytes, each once.
func readHead(b []byte) *head {
	h := &head{}
	b = jsonl.TrimBOM(b)
	t := bytes.TrimLeft(b, " \t\r\n\x00")
	if len(t) == 0 || t[0] != '{' {
		h.notJSON = true
		return h
	}
	if opencode.IsExport(t) {
		h.opencode = true
		id, dir, created, updated := opencode.ExportHead(t)
		h.codexID, h.cwd = id, dir
		h.addMillis(created)
		h.addMillis(updated)
		return h
	}
	if opencode.IsStream(t) {
		h.opencode = true
		doc := gjson.Parse(firstLine(t))
		h.codexID, h.cwd = doc.Get("id").Str, doc.Get("directory").Str
		h.addMillis(doc.Get("created").Int())
		h.addMillis(doc.Get("updated").Int())
		return h
	}
	if codex.SingleJSON(b) {
		h.single = true
		doc := gjson.ParseBytes(b) // read as far as it goes: the head may cut it
		h.codexID = uuidOnly(doc.Get("session.id").Str)
		h.add(doc.Get("session.timestamp").Str)
		return h
	}
	first := true
	eachLine(b, func(line string) {
		r := readRecord(line)
		switch r.shape(first) {
		case manifest.AgentCodex:
			h.votes[0]++
		case manifest.AgentClaude:
			h.votes[1]++
		}
		if h.claudeID == "" {
			h.claudeID = r.sessionID.Str
		}
		if h.codexID == "" {
			switch {
			case r.typ.Str == "session_meta":
				h.codexID = uuidOnly(firstNonEmpty(r.payload.Get("id").Str, r.payload.Get("session_id").Str))
			case first && !r.typ.Exists():
				h.codexID = uuidOnly(r.id.Str) // a legacy rollout's first line
			}
		}
		if h.cwd == "" {
			h.cwd = r.cwd.Str
			if h.cwd == "" && (r.typ.Str == "session_meta" || r.typ.Str == "turn_context") {
				h.cwd = r.payload.Get("cwd").Str
			}
		}
		r.times(&h.span)
		first = false
	})
	return h
}

// eachLine calls fn with each line of b that may be a record (it starts with
// "{"), trimmed; the last one may be cut short. The lines are of one copy
// of b, which gjson results may keep.
func eachLine(b []byte, fn func(line string)) {
	s := string(b)
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		line = strings.Trim(line, " \t\r\x00")
		if len(line) > 0 && line[0] == '{' {
			fn(line)
		}
	}
}

// record is the top-level fields of a record (complete, or cut short: those
// before the cut) that tell its agent, id, cwd and time, the last of each
// as decoders do.
type record struct {
	typ, sessionID, parentUUID, recordType, id, timestamp, cwd, payload, snapshot gjson.Result
}

func readRecord(line string) record {
	var r record
	gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			r.typ = v
		case "sessionId":
			r.sessionID = v
		case "parentUuid":
			r.parentUUID = v
		case "record_type":
			r.recordType = v
		case "id":
			r.id = v
		case "timestamp":
			r.timestamp = v
		case "cwd":
			r.cwd = v
		case "payload":
			r.payload = v
		case "snapshot":
			r.snapshot = v
		}
		return true
	})
	return r
}

// shape says which agent's record this looks like, if either's.
func (r *record) shape(first bool) manifest.Agent {
	switch {
	case r.sessionID.Exists() || r.parentUUID.Exists():
		return manifest.AgentClaude
	case r.typ.Type == gjson.String:
		switch r.typ.Str {
		case "session_meta", "turn_context", "response_item", "event_msg", "compacted":
			return manifest.AgentCodex
		case "file-history-snapshot":
			return manifest.AgentClaude
		}
	case r.recordType.Exists():
		return manifest.AgentCodex // a legacy rollout's state line
	case first && r.id.Exists() && r.timestamp.Exists():
		return manifest.AgentCodex // a legacy rollout's first line
	}
	return ""
}

// times adds the record's timestamps to s: its own, and the one of a Codex
// session_meta or a Claude Code file-history snapshot.
func (r *record) times(s *span) {
	if r.timestamp.Type == gjson.String {
		s.add(r.timestamp.Str)
	}
	var inner gjson.Result
	switch r.typ.Str {
	case "session_meta":
		inner = r.payload.Get("timestamp")
	case "file-history-snapshot":
		inner = r.snapshot.Get("timestamp")
	}
	if inner.Type == gjson.String {
		s.add(inner.Str)
	}
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
