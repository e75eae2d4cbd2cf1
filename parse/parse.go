package parse

import (
	"bytes"
	"errors"
	"strings"
	"time"
	"unsafe"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/codex"
	"github.com/agentsandbox/sandbox/parse/gemini"
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
	votes    [4]int // Codex, Claude Code, Gemini CLI, pi
	gemini   bool   // the pretty-printed single-JSON Gemini session
	// The first of each the records give.
	claudeID, codexID, cwd string
	geminiID, piID         string
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
	case h.gemini:
		return manifest.AgentGemini, true
	case h.single:
		return manifest.AgentCodex, true
	case h.opencode:
		return manifest.AgentOpencode, true
	}
	best, agents := 0, []manifest.Agent{manifest.AgentCodex, manifest.AgentClaude, manifest.AgentGemini, manifest.AgentPi}
	for i, v := range h.votes {
		if v > h.votes[best] {
			best = i
		}
	}
	if h.votes[best] == 0 {
		return "", false
	}
	return agents[best], true
}

// vote counts a record's shape for its agent.
func (h *head) vote(a manifest.Agent) {
	switch a {
	case manifest.AgentCodex:
		h.votes[0]++
	case manifest.AgentClaude:
		h.votes[1]++
	case manifest.AgentGemini:
		h.votes[2]++
	case manifest.AgentPi:
		h.votes[3]++
	}
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
	if gemini.Pretty(b) {
		// A pretty-printed document: Gemini CLI's legacy session or the
		// early codex-cli rollout, told by their top-level keys (as far as
		// the head holds them).
		doc := gjson.ParseBytes(b)
		if doc.Get("projectHash").Exists() || (doc.Get("sessionId").Exists() && doc.Get("messages").Exists()) {
			h.gemini = true
			h.geminiID = doc.Get("sessionId").Str
			h.add(doc.Get("startTime").Str)
			h.add(doc.Get("lastUpdated").Str)
			doc.Get("messages").ForEach(func(_, m gjson.Result) bool {
				h.add(m.Get("timestamp").Str)
				return true
			})
			return h
		}
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
		h.vote(r.shape(first))
		if h.geminiID == "" && r.projectHash.Exists() {
			h.geminiID = strings.Clone(r.sessionID.Str)
		}
		if h.piID == "" && r.typ.Str == "session" {
			h.piID = strings.Clone(r.id.Str)
		}
		if h.claudeID == "" {
			h.claudeID = strings.Clone(r.sessionID.Str)
		}
		if h.codexID == "" {
			switch {
			case r.typ.Str == "session_meta":
				h.codexID = strings.Clone(uuidOnly(firstNonEmpty(r.payload.Get("id").Str, r.payload.Get("session_id").Str)))
			case first && !r.typ.Exists():
				h.codexID = strings.Clone(uuidOnly(r.id.Str)) // a legacy rollout's first line
			}
		}
		if h.cwd == "" {
			h.cwd = r.cwd.Str
			if h.cwd == "" && (r.typ.Str == "session_meta" || r.typ.Str == "turn_context") {
				h.cwd = r.payload.Get("cwd").Str
			}
			h.cwd = strings.Clone(h.cwd)
		}
		r.times(&h.span)
		first = false
	})
	return h
}

// eachLine calls fn with each line of b that may be a record (it starts with
// "{"), trimmed; the last one may be cut short. The lines are b itself, read
// in place (a head is 64 KiB, and a home holds thousands of transcripts): fn
// must copy what it keeps, since b is the reader's buffer.
func eachLine(b []byte, fn func(line string)) {
	s := unsafe.String(unsafe.SliceData(b), len(b))
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
	// Gemini CLI's and pi's marks.
	projectHash, set, rewindTo, startTime, message, parentID gjson.Result
}

// readRecord reads the fields of one line of a head. A whole record's
// fields are found from its keys' offsets (jsonl.Record.EachField),
// without parsing the values between them; a record cut short by the end of
// the head gives those before the cut, through gjson.
func readRecord(line string) record {
	var r record
	// A read-only view of the line's bytes: EachField never writes them.
	rec := jsonl.Record{Data: unsafe.Slice(unsafe.StringData(line), len(line))}
	whole := rec.EachField(func(name []byte, start, end int) {
		if f := r.field(name); f != nil {
			*f = gjson.Parse(line[start:end])
		}
	})
	if !whole {
		gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
			if f := r.field([]byte(k.Str)); f != nil {
				*f = v
			}
			return true
		})
	}
	return r
}

// field returns where the record keeps the value of the key k, or nil.
func (r *record) field(k []byte) *gjson.Result {
	switch string(k) {
	case "type":
		return &r.typ
	case "sessionId":
		return &r.sessionID
	case "parentUuid":
		return &r.parentUUID
	case "record_type":
		return &r.recordType
	case "id":
		return &r.id
	case "timestamp":
		return &r.timestamp
	case "cwd":
		return &r.cwd
	case "payload":
		return &r.payload
	case "snapshot":
		return &r.snapshot
	case "projectHash":
		return &r.projectHash
	case "$set":
		return &r.set
	case "$rewindTo":
		return &r.rewindTo
	case "startTime":
		return &r.startTime
	case "message":
		return &r.message
	case "parentId":
		return &r.parentID
	}
	return nil
}

// shape says which agent's record this looks like, if either's.
func (r *record) shape(first bool) manifest.Agent {
	switch {
	case r.projectHash.Exists() || r.set.IsObject() || r.rewindTo.Exists():
		return manifest.AgentGemini // session metadata, $set, $rewindTo
	case r.sessionID.Exists() || r.parentUUID.Exists():
		return manifest.AgentClaude
	case r.typ.Type == gjson.String && r.id.Type == gjson.String && (r.typ.Str == "gemini" || (r.typ.Str == "info" || r.typ.Str == "user" || r.typ.Str == "error" || r.typ.Str == "warning") && !r.message.Exists() && !r.parentID.Exists() && !first):
		return manifest.AgentGemini // a message record
	case r.typ.Str == "message" && r.message.IsObject(), r.typ.Str == "session" && (r.cwd.Exists() || r.id.Exists()):
		return manifest.AgentPi
	case r.parentID.Exists() && r.typ.Type == gjson.String:
		switch r.typ.Str {
		case "model_change", "thinking_level_change", "compaction", "branch_summary", "custom", "custom_message", "label", "session_info":
			return manifest.AgentPi
		}
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
	if r.startTime.Type == gjson.String {
		s.add(r.startTime.Str) // Gemini CLI's session metadata
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
