package parse

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Stream is a transcript being parsed in the background: its operations
// arrive in line order as soon as each is settled, so a transcript of any
// size is read in bounded memory, and several streams parse in parallel.
type Stream struct {
	name   string
	ops    chan manifest.Op
	header chan struct{}
	done   chan struct{}

	mu     sync.Mutex
	hdr    manifest.Session
	sess   manifest.Session
	err    error
	closer io.Closer
	cancel context.CancelFunc
	hash   hash.Hash
	once   sync.Once
	// turns, when keepTurns, are the user's prompts (for git history).
	keepTurns bool
	// homes are the agents' homes of the candidate (Candidate.Homes).
	homes map[manifest.Agent]string
	turns []manifest.Event
}

// OpenStream opens a transcript (name, or r when r is not nil, e.g.
// standard input), recognises its agent, and starts parsing it. Errors that
// make the file unusable (it cannot be opened, is empty, or is not a known
// transcript) are returned here, before anything is parsed.
func OpenStream(ctx context.Context, name string, r io.Reader) (*Stream, error) {
	return openStream(ctx, name, r, nil, name != "-" && r == nil, StreamOptions{Hash: true}, nil)
}

// StreamOptions say what a stream computes and keeps beyond the session and
// its operations.
type StreamOptions struct {
	// Turns keeps the user's prompts (Turns); the parser then does the extra
	// work of a timeline.
	Turns bool
	// Hash computes the sha256 of the transcript as stored
	// (Session().TranscriptSHA256), which an export manifest records. It
	// costs about as much CPU as all the parsing of a Codex rollout (sha256
	// runs at ~1.4 GB/s a core), so a caller that never shows it leaves it
	// off.
	Hash bool
}

// OpenCandidateWith opens a discovered transcript as a stream with options.
func OpenCandidateWith(ctx context.Context, c *discover.Candidate, o StreamOptions) (*Stream, error) {
	rc, err := c.Open()
	if err != nil {
		return nil, err
	}
	return openStream(ctx, c.Name, rc, rc, c.Path != "", o, c.Homes)
}

// openStream starts parsing r (or the file name when r is nil); closer,
// when set, is closed at the end. onDisk says name is a file on the host,
// whose Claude Code file-history may be beside it.
func openStream(ctx context.Context, name string, r io.Reader, closer io.Closer, onDisk bool, o StreamOptions, homes map[manifest.Agent]string) (*Stream, error) {
	if r == nil {
		f, err := openFile(name)
		if err != nil {
			return nil, err
		}
		r, closer = f, f
	}
	// A plain file can be read ahead (jsonl.WithSource): where it starts now.
	file, fileAt := plainFile(r)
	// The transcript's sha256, of its bytes as stored, for the manifest.
	var sum hash.Hash
	if o.Hash {
		sum = sha256.New()
		r = io.TeeReader(r, sum)
	}
	rc, err := jsonl.Decompress(r)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	head := make([]byte, 64<<10)
	n, rerr := io.ReadFull(rc, head)
	head = head[:n]
	fail := func(err error) (*Stream, error) {
		rc.Close()
		if closer != nil {
			closer.Close()
		}
		return nil, err
	}
	if n == 0 && rerr != nil && !errors.Is(rerr, io.EOF) {
		return fail(fmt.Errorf("%s: %w", name, rerr))
	}
	a, ok := detect(head)
	switch {
	case n == 0:
		return fail(fmt.Errorf("%s: empty file", name))
	case !ok:
		return fail(fmt.Errorf("%s: %w", name, ErrUnknownFormat))
	}
	if file != nil && jsonl.Uncompressed(rc) {
		ctx = jsonl.WithSource(ctx, file, fileAt)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Stream{name: name, ops: make(chan manifest.Op, 256), header: make(chan struct{}), done: make(chan struct{}),
		closer: multiCloser{rc, closer}, cancel: cancel, hash: sum, keepTurns: o.Turns, homes: homes}
	body := io.MultiReader(bytes.NewReader(head), rc)
	go s.run(ctx, a, body, onDisk)
	return s, nil
}

// parseAs parses body as a transcript of the agent named a; t names it.
func parseAs(ctx context.Context, a manifest.Agent, body io.Reader, t agent.Transcript, h emit.Handler) (manifest.Session, error) {
	ag, ok := agent.Named(a)
	if !ok {
		return manifest.Session{}, fmt.Errorf("%s: %w", t.Name, ErrUnknownFormat)
	}
	return ag.Stream(ctx, body, t, h)
}

// plainFile returns r as a regular file, and the offset it will be read
// from, when it is one.
func plainFile(r io.Reader) (*os.File, int64) {
	f, ok := r.(*os.File)
	if !ok {
		return nil, 0
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, 0
	}
	at, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, 0
	}
	return f, at
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	for _, c := range m {
		if c != nil {
			c.Close()
		}
	}
	return nil
}

func (s *Stream) run(ctx context.Context, a manifest.Agent, body io.Reader, onDisk bool) {
	defer close(s.done)
	defer close(s.ops)
	defer s.closer.Close()
	h := emit.Handler{
		Header: func(h manifest.Session) {
			s.mu.Lock()
			s.hdr = h
			s.mu.Unlock()
			close(s.header)
		},
		Op: func(op manifest.Op) {
			select {
			case s.ops <- op:
			case <-ctx.Done():
			}
		},
	}
	if s.keepTurns {
		h.Event = func(e manifest.Event) {
			if e.Kind == manifest.EventTurn {
				s.mu.Lock()
				s.turns = append(s.turns, e)
				s.mu.Unlock()
			}
		}
	}
	sess, err := parseAs(ctx, a, body, agent.Transcript{Name: s.name, OnDisk: onDisk, Home: s.homes[a]}, h)
	if err == nil {
		_, _ = io.Copy(io.Discard, body) // hash to the end, past anything the parser left
		if s.hash != nil {
			sess.TranscriptSHA256 = hex.EncodeToString(s.hash.Sum(nil))
		}
	}
	s.mu.Lock()
	s.sess, s.err = sess, err
	s.mu.Unlock()
}

// Name returns the transcript's name.
func (s *Stream) Name() string { return s.name }

// Header returns the session's identity and working directory, waiting for
// the first lines to be parsed.
func (s *Stream) Header() manifest.Session {
	select {
	case <-s.header:
	case <-s.done:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hdr
}

// Next returns the next operation, or false at the end.
func (s *Stream) Next() (manifest.Op, bool) {
	op, ok := <-s.ops
	return op, ok
}

// Session returns the complete session; it waits for parsing to end.
func (s *Stream) Session() manifest.Session {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// Err returns the read error that stopped parsing early, if any (the
// session and operations hold everything before it); it waits for parsing
// to end.
func (s *Stream) Err() error {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Turns returns the user's prompts, for a stream opened to keep them; it
// waits for parsing to end.
func (s *Stream) Turns() []manifest.Event {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns
}

// TurnLine returns the line of the n-th prompt (1-based) if the parser has
// reached it, without waiting: a prompt is always seen before the
// operations of the lines after it are handed on.
func (s *Stream) TurnLine(n int) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.turns) {
		return 0, false
	}
	return s.turns[n-1].Line, true
}

// Close stops parsing and releases the file.
func (s *Stream) Close() {
	s.once.Do(func() {
		s.cancel()
		for range s.ops {
		}
		<-s.done
	})
}
