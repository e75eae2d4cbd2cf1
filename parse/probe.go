package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/codex"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/jsonl"
	"github.com/tidwall/gjson"
)

// Info is what a transcript's first and last lines say, read without
// parsing the whole file.
type Info struct {
	Agent manifest.Agent
	ID    string
	Cwd   string
	// First and Last bound the session's activity.
	First, Last time.Time
}

// tsLoose finds timestamps in the one place a record cannot be read as
// JSON: the start of a tail that begins inside a record longer than the
// tail. It runs on the record with its \u escapes of ASCII spelled out.
var tsLoose = regexp.MustCompile(`"timestamp"\s*:\s*"([0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]+)"`)

const probeBytes = 64 << 10

// Probe reads a candidate's head (and its tail, or all of it when the tail
// cannot be had directly) for its agent, id, cwd and time span.
func Probe(c *discover.Candidate) (Info, error) {
	rc, err := c.Open()
	if err != nil {
		return Info{}, err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	magic, _ := br.Peek(4)
	compressed := bytes.HasPrefix(magic, []byte{0x1f, 0x8b}) || bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd})
	dr, err := jsonl.Decompress(br)
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	defer dr.Close()
	head := make([]byte, probeBytes)
	n, rerr := io.ReadFull(dr, head)
	head = head[:n]
	if n == 0 {
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return Info{}, fmt.Errorf("%s: %w", c.Name, rerr)
		}
		return Info{}, fmt.Errorf("%s: empty file", c.Name)
	}
	agent, ok := Detect(head)
	if !ok {
		return Info{}, fmt.Errorf("%s: %w", c.Name, ErrUnknownFormat)
	}
	info := Info{Agent: agent, ID: c.ID}
	if info.ID == "" {
		info.ID = strings.ToLower(headID(head, agent))
	}
	info.Cwd = headCwd(head)
	first, last := span(head, false)
	tail, cut := head, false
	if rerr == nil { // more than the head: find the end
		t, ok := c.Tail(probeBytes)
		if compressed || !ok {
			t = lastBytes(dr, head)
		}
		tail, cut = t, true
	}
	_, tlast := span(tail, cut)
	if tlast.After(last) {
		last = tlast
	}
	if last.IsZero() {
		last = c.ModTime // no timestamp at all: the file's time is the best there is
	}
	info.First, info.Last = first, last
	if info.First.IsZero() {
		info.First = info.Last
	}
	return info, nil
}

// lastBytes reads r to its end and keeps the last probeBytes.
func lastBytes(r io.Reader, head []byte) []byte {
	ring := append([]byte{}, head...)
	buf := make([]byte, 256<<10)
	for {
		n, err := r.Read(buf)
		ring = append(ring, buf[:n]...)
		if len(ring) > 2*probeBytes {
			ring = append(ring[:0], ring[len(ring)-probeBytes:]...)
		}
		if err != nil {
			return ring
		}
	}
}

// headID returns the session id the first records give: Claude Code's
// sessionId, or the id of a Codex session_meta (of a legacy rollout's first
// line, of the single-JSON layout's session).
func headID(head []byte, agent manifest.Agent) string {
	head = jsonl.TrimBOM(head)
	if agent == manifest.AgentCodex && codex.SingleJSON(head) {
		return uuidOnly(gjson.GetBytes(head, "session.id").Str)
	}
	var id string
	first := true
	eachLine(head, func(line []byte) {
		if id != "" {
			return
		}
		f := top(line, "sessionId", "type", "payload", "id")
		switch {
		case agent == manifest.AgentClaude:
			id = f[0].Str
		case f[1].Str == "session_meta":
			id = uuidOnly(firstNonEmpty(f[2].Get("id").Str, f[2].Get("session_id").Str))
		case first && !f[1].Exists():
			id = uuidOnly(f[3].Str)
		}
		first = false
	})
	return id
}

// uuidOnly keeps a Codex session id that has the shape of one.
func uuidOnly(id string) string {
	if len(id) != 36 || strings.Trim(id, "0123456789abcdefABCDEF-") != "" {
		return ""
	}
	return id
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// headCwd returns the first working directory the records give: a Claude
// Code line's cwd, or a Codex session_meta's or turn context's.
func headCwd(head []byte) string {
	var cwd string
	eachLine(jsonl.TrimBOM(head), func(line []byte) {
		if cwd == "" {
			f := top(line, "cwd", "payload")
			cwd = firstNonEmpty(f[0].Str, f[1].Get("cwd").Str)
		}
	})
	return cwd
}

// span returns the earliest and latest timestamps of the records in b: a
// record's own, and the one of a Codex session_meta or a Claude Code
// file-history snapshot. cut says b starts inside a record, whose visible
// part is searched for timestamps only when b holds no other record.
func span(b []byte, cut bool) (first, last time.Time) {
	add := func(s string) {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	b = jsonl.TrimBOM(b)
	if codex.SingleJSON(b) {
		add(gjson.GetBytes(b, "session.timestamp").Str)
		return first, last
	}
	var partial []byte
	if cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			partial, b = b[:i], b[i+1:]
		} else {
			partial, b = b, nil
		}
	}
	found := false
	eachLine(b, func(line []byte) {
		f := top(line, "timestamp", "payload", "snapshot")
		for _, ts := range []gjson.Result{f[0], f[1].Get("timestamp"), f[2].Get("timestamp")} {
			if ts.Type == gjson.String {
				add(ts.Str)
				found = true
			}
		}
	})
	if !found && len(partial) > 0 {
		// One record longer than the tail: its start is gone, so it cannot be
		// read as JSON; its timestamps can still be found in what is left.
		plain, _ := jsonl.Plain(partial, nil)
		for _, m := range tsLoose.FindAllSubmatch(plain, -1) {
			add(string(m[1]))
		}
	}
	return first, last
}
