package parse

import (
	"bytes"
	"errors"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// ErrUnknownFormat is returned for a file that is not a transcript of a
// known agent.
var ErrUnknownFormat = errors.New("not a transcript of a known agent")

// detect tells a transcript's agent from its first bytes (by content, so a
// renamed file still reads). Each record in head votes for the agent whose
// record it looks like, and the majority decides: one line of another
// agent's shape (a pasted record, a test line) does not turn a session into
// the other agent's. Records are read as JSON, so whitespace, key order and
// escapes do not matter; the last record may be cut short.
func detect(head []byte) (manifest.Agent, bool) {
	a, ok := readHead(head).agent()
	if !ok {
		return "", false
	}
	return a.Name(), true
}

// head is what the records at the start of a transcript say.
type head struct {
	// notJSON is set when the bytes do not start as JSON does (prose that
	// quotes a record: a README, a spec).
	notJSON bool
	// doc is the agent whose single-document transcript the bytes are, if
	// any (its Head is then the whole story).
	doc agent.Agent
	// votes and ids are by registered agent: the records that look like
	// its, and the first session id its records give.
	votes []int
	ids   []string
	agent.Head
}

// agent decides: a document's agent, else by the votes; a tie goes to the
// agent registered first.
func (h *head) agent() (agent.Agent, bool) {
	switch {
	case h.notJSON:
		return nil, false
	case h.doc != nil:
		return h.doc, true
	}
	best := 0
	for i, v := range h.votes {
		if v > h.votes[best] {
			best = i
		}
	}
	if len(h.votes) == 0 || h.votes[best] == 0 {
		return nil, false
	}
	return agent.All()[best], true
}

// id returns the session id the head gives for agent a.
func (h *head) id(a agent.Agent) string {
	if h.doc != nil {
		return h.Head.ID
	}
	for i, b := range agent.All() {
		if b == a && i < len(h.ids) {
			return h.ids[i]
		}
	}
	return ""
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
	agents := agent.All()
	best := 0
	for _, a := range agents {
		if dh, rank := a.Document(b); rank > best {
			best, h.doc, h.Head = rank, a, dh
		}
	}
	if h.doc != nil {
		return h
	}
	h.votes, h.ids = make([]int, len(agents)), make([]string, len(agents))
	rec := records.Get().(*agent.Record)
	defer records.Put(rec)
	first := true
	eachLine(b, func(line string) {
		readRecord(line, rec)
		if i, ok := shape(agents, rec, first); ok {
			h.votes[i]++
		}
		for i, a := range agents {
			if id := a.Note(rec, first, &h.Head); id != "" && h.ids[i] == "" {
				h.ids[i] = strings.Clone(id)
			}
		}
		first = false
	})
	return h
}

// records recycles the head records: a home of thousands of transcripts
// reads one head each.
var records = sync.Pool{New: func() any { return agent.NewRecord() }}

// shape returns the agent a record votes for: the one whose Shape ranks it
// highest (a vote beats a claim without one at the same rank), if that one
// votes.
func shape(agents []agent.Agent, r *agent.Record, first bool) (int, bool) {
	at, rank, vote := -1, 0, false
	for i, a := range agents {
		k, v := a.Shape(r, first)
		if k > rank || (k == rank && k > 0 && v && !vote) {
			at, rank, vote = i, k, v
		}
	}
	return at, at >= 0 && vote
}

// eachLine calls fn with each line of b that may be a record (it starts with
// "{"), trimmed; the last one may be cut short. The lines are b itself, read
// in place (a head is 64 KiB, and a home holds thousands of transcripts): fn
// must copy what it keeps, since b is the reader's buffer.
func eachLine(b []byte, fn func(line string)) {
	s := zerocopy.String(b)
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

// readRecord reads the declared fields (agent.NewKey) of one line of a
// head into r. A whole record's fields are found from its keys' offsets
// (jsonl.Record.EachField), without parsing the values between them; a
// record cut short by the end of the head gives those before the cut,
// through gjson.
func readRecord(line string, r *agent.Record) {
	r.Reset()
	// A read-only view of the line's bytes: EachField never writes them.
	rec := jsonl.Record{Data: zerocopy.Bytes(line)}
	whole := rec.EachField(func(name []byte, start, end int) {
		if k, ok := agent.KeyOf(name); ok {
			r.Set(k, gjson.Parse(line[start:end]))
		}
	})
	if !whole {
		gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
			if key, ok := agent.KeyOf([]byte(k.Str)); ok {
				r.Set(key, v)
			}
			return true
		})
	}
}
