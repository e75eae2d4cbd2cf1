package parse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"sync"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/codex"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Transcript is one parsed transcript file.
type Transcript struct {
	Session manifest.Session
	Ops     []manifest.Op
	// Err is a read error that stopped parsing early (the session and ops
	// hold everything before it), or an open error (they are empty).
	Err error
}

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

// Reader parses one transcript from r; name labels it in warnings and
// provenance.
func Reader(ctx context.Context, r io.Reader, name string) Transcript {
	rc, err := jsonl.Decompress(r)
	if err != nil {
		return Transcript{Err: fmt.Errorf("%s: %w", name, err)}
	}
	defer rc.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(rc, head)
	head = head[:n]
	body := io.MultiReader(bytes.NewReader(head), rc)
	agent, ok := Detect(head)
	if !ok {
		if n == 0 {
			return Transcript{Err: fmt.Errorf("%s: empty file", name)}
		}
		return Transcript{Err: fmt.Errorf("%s: %w", name, ErrUnknownFormat)}
	}
	switch agent {
	case manifest.AgentCodex:
		res, err := codex.Parse(ctx, body, name)
		return Transcript{Session: res.Session, Ops: res.Ops, Err: err}
	}
	return Transcript{Err: fmt.Errorf("%s: %s transcripts are not supported yet", name, agent)}
}

// File parses one transcript file.
func File(ctx context.Context, name string) Transcript {
	f, err := openFile(name)
	if err != nil {
		return Transcript{Err: err}
	}
	defer f.Close()
	return Reader(ctx, f, name)
}

// Files parses files in parallel (one worker per core) and returns the
// transcripts in the order of names.
func Files(ctx context.Context, names []string) []Transcript {
	out := make([]Transcript, len(names))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(names) {
		workers = len(names)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = File(ctx, names[i])
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
