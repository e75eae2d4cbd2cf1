package parse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/jsonl"
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

var (
	tsRe       = regexp.MustCompile(`"timestamp"\s*:\s*"([0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]+)"`)
	cwdRe      = regexp.MustCompile(`"cwd"\s*:\s*("(?:[^"\\]|\\.)*")`)
	codexIDRe  = regexp.MustCompile(`"(?:id|session_id)"\s*:\s*"([0-9a-fA-F-]{36})"`)
	claudeIDRe = regexp.MustCompile(`"sessionId"\s*:\s*"([^"]+)"`)
)

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
		re := codexIDRe
		if agent == manifest.AgentClaude {
			re = claudeIDRe
		}
		if m := re.FindSubmatch(head); m != nil {
			info.ID = strings.ToLower(string(m[1]))
		}
	}
	if m := cwdRe.FindSubmatch(head); m != nil {
		var s string
		if json.Unmarshal(m[1], &s) == nil {
			info.Cwd = s
		}
	}
	first, last := span(head)
	tail := head
	if rerr == nil { // more than the head: find the end
		t, ok := c.Tail(probeBytes)
		if compressed || !ok {
			t = lastBytes(dr, head)
		}
		tail = t
	}
	_, tlast := span(tail)
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

// span returns the earliest and latest timestamps in b.
func span(b []byte) (first, last time.Time) {
	for _, m := range tsRe.FindAllSubmatch(b, -1) {
		t, err := time.Parse(time.RFC3339Nano, string(m[1]))
		if err != nil {
			continue
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	return first, last
}
