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
	"github.com/agentsandbox/sandbox/parse/agent"
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

// tsLoose finds timestamps in the one place a record cannot be read as
// JSON: the start of a tail that begins inside a record longer than the
// tail. It runs on the record with its \u escapes of ASCII spelled out.
var tsLoose = regexp.MustCompile(`"timestamp"\s*:\s*"([0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]+)"`)

const probeBytes = 64 << 10

// Probe reads a candidate's head (and its tail, or all of it when the tail
// cannot be had directly) for its agent, id, cwd and time span.
func Probe(c *discover.Candidate) (Info, error) {
	if l := c.Listed; l != nil {
		// A store of many sessions (an agent's database) listed this one:
		// what a probe would find is known without reading it.
		return Info{Agent: c.Agent, ID: c.ID, Cwd: l.Cwd, First: l.First, Last: l.Last}, nil
	}
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
	h := readHead(head)
	a, ok := h.agent()
	if !ok {
		return Info{}, fmt.Errorf("%s: %w", c.Name, ErrUnknownFormat)
	}
	info := Info{Agent: a.Name(), ID: c.ID, Cwd: h.Cwd}
	if r, ok := a.(agent.Rooted); ok {
		// The transcript records no working directory: the agent finds it
		// beside the file, or from the tools' paths in the head.
		info.Cwd = r.Root(agent.Transcript{Name: c.Path, OnDisk: c.Path != ""}, head)
	}
	if info.ID == "" {
		info.ID = h.id(a)
		if !a.About().CaseSensitiveIDs {
			info.ID = strings.ToLower(info.ID)
		}
	}
	first, last := h.First, h.Last
	if rerr == nil { // more than the head: find the end
		t, ok := c.Tail(probeBytes)
		if compressed || !ok {
			t = lastBytes(dr, head)
		}
		if tlast := tailSpan(t).Last; tlast.After(last) {
			last = tlast
		}
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

// tailSpan returns the timestamps of the records in the last bytes of a
// transcript, which start inside a record: that one is searched for
// timestamps only when b holds no other record.
func tailSpan(b []byte) agent.Head {
	var s agent.Head
	partial := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		partial, b = b[:i], b[i+1:]
	} else {
		b = nil
	}
	rec := records.Get().(*agent.Record)
	defer records.Put(rec)
	eachLine(b, func(line string) {
		readRecord(line, rec)
		for _, a := range agent.All() {
			a.Note(rec, false, &s)
		}
	})
	if s.Last.IsZero() && len(partial) > 0 {
		// One record longer than the tail: its start is gone, so it cannot be
		// read as JSON; its timestamps can still be found in what is left.
		plain, _ := jsonl.Plain(partial, nil)
		for _, m := range tsLoose.FindAllSubmatch(plain, -1) {
			s.Add(string(m[1]))
		}
	}
	return s
}
