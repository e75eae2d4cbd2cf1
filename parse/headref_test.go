package parse

// The head reader as it was before the agents moved behind the registry
// (parse/agent), kept as the reference the registry's detection must
// agree with (TestHeadSameAsReference, FuzzHeadSameAsReference).

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/codex"
	"github.com/agentsandbox/sandbox/parse/gemini"
	"github.com/agentsandbox/sandbox/parse/jsonl"
	"github.com/agentsandbox/sandbox/parse/opencode"
)

func refUUIDOnly(id string) string {
	if len(id) != 36 || strings.Trim(id, "0123456789abcdefABCDEF-") != "" {
		return ""
	}
	return id
}

func refFirstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// refHead is what the records at the start of a transcript say.
type refHead struct {
	// notJSON is set when the bytes do not start as JSON does (prose that
	// quotes a refRecord: a README, a spec); single when they are the
	// single-JSON layout of the TypeScript codex-cli.
	notJSON, single bool
	// opencode is set when the bytes are an opencode refRecord stream.
	opencode bool
	votes    [4]int // Codex, Claude Code, Gemini CLI, pi
	gemini   bool   // the pretty-printed single-JSON Gemini session
	// The first of each the records give.
	claudeID, codexID, cwd string
	geminiID, piID         string
	refSpan
}

// refSpan is the earliest and latest timestamps seen.
type refSpan struct{ first, last time.Time }

func (s *refSpan) add(ts string) {
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
func (s *refSpan) addMillis(v int64) {
	if v > 0 {
		s.add(time.UnixMilli(v).UTC().Format(time.RFC3339Nano))
	}
}

// agent decides by the votes; a tie goes to Codex, whose marks are the
// more specific.
func (h *refHead) agent() (manifest.Agent, bool) {
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

// vote counts a refRecord's shape for its agent.
func (h *refHead) vote(a manifest.Agent) {
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

// refReadHead reads the records of a transcript's first bytes, each once.
func refReadHead(b []byte) *refHead {
	h := &refHead{}
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
		doc := gjson.Parse(refFirstLine(t))
		h.codexID, h.cwd = doc.Get("id").Str, doc.Get("directory").Str
		h.addMillis(doc.Get("created").Int())
		h.addMillis(doc.Get("updated").Int())
		return h
	}
	if gemini.Pretty(b) {
		// A pretty-printed document: Gemini CLI's legacy session or the
		// early codex-cli rollout, told by their top-level keys (as far as
		// the refHead holds them).
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
		doc := gjson.ParseBytes(b) // read as far as it goes: the refHead may cut it
		h.codexID = refUUIDOnly(doc.Get("session.id").Str)
		h.add(doc.Get("session.timestamp").Str)
		return h
	}
	first := true
	eachLine(b, func(line string) {
		r := refReadRecord(line)
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
				h.codexID = strings.Clone(refUUIDOnly(refFirstNonEmpty(r.payload.Get("id").Str, r.payload.Get("session_id").Str)))
			case first && !r.typ.Exists():
				h.codexID = strings.Clone(refUUIDOnly(r.id.Str)) // a legacy rollout's first line
			}
		}
		if h.cwd == "" {
			h.cwd = r.cwd.Str
			if h.cwd == "" && (r.typ.Str == "session_meta" || r.typ.Str == "turn_context") {
				h.cwd = r.payload.Get("cwd").Str
			}
			h.cwd = strings.Clone(h.cwd)
		}
		r.times(&h.refSpan)
		first = false
	})
	return h
}

// refRecord is the top-level fields of a refRecord (complete, or cut short: those
// before the cut) that tell its agent, id, cwd and time, the last of each
// as decoders do.
type refRecord struct {
	typ, sessionID, parentUUID, recordType, id, timestamp, cwd, payload, snapshot gjson.Result
	// Gemini CLI's and pi's marks.
	projectHash, set, rewindTo, startTime, message, parentID gjson.Result
}

// refReadRecord reads the fields of one line of a refHead. A whole refRecord's
// fields are found from its keys' offsets (jsonl.Record.EachField),
// without parsing the values between them; a refRecord cut short by the end of
// the refHead gives those before the cut, through gjson.
func refReadRecord(line string) refRecord {
	var r refRecord
	// A read-only view of the line's bytes: EachField never writes them.
	rec := jsonl.Record{Data: zerocopy.Bytes(line)}
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

// field returns where the refRecord keeps the value of the key k, or nil.
func (r *refRecord) field(k []byte) *gjson.Result {
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

// shape says which agent's refRecord this looks like, if either's.
func (r *refRecord) shape(first bool) manifest.Agent {
	switch {
	case r.projectHash.Exists() || r.set.IsObject() || r.rewindTo.Exists():
		return manifest.AgentGemini // session metadata, $set, $rewindTo
	case r.sessionID.Exists() || r.parentUUID.Exists():
		return manifest.AgentClaude
	case r.typ.Type == gjson.String && r.id.Type == gjson.String && (r.typ.Str == "gemini" || (r.typ.Str == "info" || r.typ.Str == "user" || r.typ.Str == "error" || r.typ.Str == "warning") && !r.message.Exists() && !r.parentID.Exists() && !first):
		return manifest.AgentGemini // a message refRecord
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

// times adds the refRecord's timestamps to s: its own, and the one of a Codex
// session_meta or a Claude Code file-history snapshot.
func (r *refRecord) times(s *refSpan) {
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

func refFirstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// refID is the id the reference probe took for agent a.
func refID(h *refHead, a manifest.Agent) string {
	switch a {
	case manifest.AgentClaude:
		return h.claudeID
	case manifest.AgentGemini:
		return h.geminiID
	case manifest.AgentPi:
		return h.piID
	}
	return h.codexID
}

// newMarks are what, in a head, only an agent added since the reference
// writes: where the head holds them, the agent may take it from the one the
// reference gives it to.
var newMarks = map[manifest.Agent]*regexp.Regexp{
	"qwen":  regexp.MustCompile(`"(tool_result|toolCallResult|systemPayload|parts)"`),
	"droid": regexp.MustCompile(`"(tool_use|tool_result|session_start)"|"id"\s*:\s*"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-`),
}

// sameHead fails when the registry's reading of a head differs from the
// reference's: the agent, its session id, the working directory, the span.
func sameHead(t testing.TB, b []byte) {
	t.Helper()
	ref := refReadHead(b)
	want, wok := ref.agent()
	h := readHead(b)
	got, gok := h.agent()
	if gok && !slices.Contains([]manifest.Agent{manifest.AgentCodex, manifest.AgentClaude, manifest.AgentOpencode, manifest.AgentGemini, manifest.AgentPi}, got.Name()) {
		// An agent added since the reference was written may claim only
		// heads that no agent claimed before, or that carry its own marks:
		// Qwen Code's records have Claude Code's envelope, Factory Droid's
		// messages pi's outer shape.
		if wok && !newMarks[got.Name()].Match(b) {
			t.Fatalf("%.200q: agent %v, the reference says %q: a new agent took a head from an old one", b, got.Name(), want)
		}
		return
	}
	if wok != gok || (gok && got.Name() != want) {
		t.Fatalf("%.200q: agent %v %v, the reference says %q %v", b, got, gok, want, wok)
	}
	if !gok {
		return
	}
	if g, w := h.id(got), refID(ref, want); g != w {
		t.Fatalf("%.200q: id %q, the reference says %q", b, g, w)
	}
	if h.Cwd != ref.cwd || !h.First.Equal(ref.first) || !h.Last.Equal(ref.last) {
		t.Fatalf("%.200q: cwd %q %v–%v, the reference says %q %v–%v", b, h.Cwd, h.First, h.Last, ref.cwd, ref.first, ref.last)
	}
}

// TestHeadSameAsReference reads the heads of every real and generated
// transcript here, whole and cut at every 997th byte, both ways.
func TestHeadSameAsReference(t *testing.T) {
	var files []string
	for _, glob := range []string{"../fixtures/corpus/*/*", "../fixtures/sample/*", "../../shared/corpus/*/*", "../../shared/corpus/*/*/*", "testdata/*", "*/testdata/*"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	heads := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || len(data) == 0 {
			continue
		}
		head := data[:min(len(data), 64<<10)]
		sameHead(t, head)
		for cut := 1; cut < len(head); cut += 997 {
			sameHead(t, head[:cut])
		}
		heads++
	}
	if heads < 50 {
		t.Fatalf("read %d heads: the transcripts were not found", heads)
	}
}

func FuzzHeadSameAsReference(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":"2026-11-20T09:12:03Z","type":"session_meta","payload":{"id":"019e0001-0000-7000-8000-000000000001","cwd":"/w"}}`,
		`{"parentUuid":null,"sessionId":"5f0c","cwd":"/b","type":"user","timestamp":"2026-11-20T09:12:03Z"}`,
		`{"sessionId":"g-1","projectHash":"abc","startTime":"2026-11-20T09:12:03Z"}` + "\n" + `{"type":"gemini","id":"m1","timestamp":"2026-11-20T09:12:04Z"}`,
		`{"type":"session","id":"p-1","cwd":"/c","timestamp":"2026-11-20T09:12:03Z"}` + "\n" + `{"type":"label","parentId":"x","id":"y"}`,
		`{"type":"session_meta","parentId":"x"}` + "\n" + `{"record_type":"state"}`, `{"id":"x","timestamp":"2026-11-20T09:12:03Z"}`,
		"{\n  \"sessionId\": \"s\",\n  \"messages\": []\n}", "{\n  \"session\": {\"id\": \"019e0001-0000-7000-8000-000000000001\"}\n}",
		`{"oc":"session","id":"ses_1","directory":"/d","created":1}`, `{"info":{"id":"ses_abc","directory":"/d"},"messages":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameHead(t, b) })
}
