package parse

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Summary is what `sandbox sessions` shows of one session.
type Summary struct {
	Agent      manifest.Agent    `json:"agent"`
	ID         string            `json:"id"`
	Harness    string            `json:"harness,omitempty"`
	Start      time.Time         `json:"start"`
	End        time.Time         `json:"last_activity"`
	Cwd        string            `json:"cwd"`
	OpsApplied int               `json:"ops_applied"`
	OpsFailed  int               `json:"ops_failed"`
	OpsOther   int               `json:"ops_other"`
	Files      int               `json:"files"`
	EndState   manifest.EndState `json:"end_state"`
	// Verdict says how the session ended, in inspect's words.
	Verdict  string `json:"verdict"`
	Warnings int    `json:"warnings"`
	Bytes    int64  `json:"bytes"`
	// Transcripts are the files the session was read from (subagents and
	// resumed copies share their session's id).
	Transcripts []string `json:"transcripts"`
	files       map[string]bool
	// ops holds each call's outcome by its identity, so that a call copied
	// into several transcripts of one session (resume, fork, compaction)
	// counts once, as recover replays it once.
	ops map[uint64]manifest.Outcome
}

// Summarize parses the selected transcripts (one worker per core) and
// returns a summary per session, oldest first. progress, when set, is told
// the bytes read as each transcript finishes.
func Summarize(ctx context.Context, sel []Selected, progress func(int64)) ([]*Summary, []error) {
	type result struct {
		s   *Summary
		err error
	}
	results := make([]result, len(sel))
	next := make(chan int)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s, err := summarizeOne(ctx, &sel[i])
				results[i] = result{s, err}
				if progress != nil {
					progress(sel[i].Size)
				}
			}
		}()
	}
	for i := range sel {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	var errs []error
	byID := map[string]*Summary{}
	var out []*Summary
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		if r.s == nil {
			continue
		}
		key := string(r.s.Agent) + "/" + r.s.ID
		if prev, ok := byID[key]; ok {
			prev.merge(r.s)
			continue
		}
		byID[key] = r.s
		out = append(out, r.s)
	}
	for _, s := range out {
		s.Files = len(s.files)
		s.count()
		s.Verdict = verdictOf(s.EndState)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start.Before(out[b].Start) })
	return out, errs
}

func (s *Summary) merge(o *Summary) {
	for k, v := range o.ops {
		s.ops[k] = v
	}
	s.Warnings += o.Warnings
	s.Bytes += o.Bytes
	s.Transcripts = append(s.Transcripts, o.Transcripts...)
	for f := range o.files {
		s.files[f] = true
	}
	if !o.Start.IsZero() && (s.Start.IsZero() || o.Start.Before(s.Start)) {
		s.Start = o.Start
	}
	if o.End.After(s.End) {
		s.End = o.End
		s.EndState = o.EndState
	}
}

// opKey identifies a call the way replay does when it drops copies: by its
// identity, else its call id and payload; a call with neither is unique.
func opKey(op *manifest.Op, n int) uint64 {
	h := fnv.New64a()
	switch {
	case op.Identity != "":
		h.Write([]byte(op.Identity))
	case op.Provenance.CallID != "":
		h.Write([]byte(op.Provenance.CallID))
		h.Write([]byte{0})
		h.Write([]byte(op.PatchText))
		h.Write([]byte{0})
		h.Write([]byte(op.Command))
	default:
		fmt.Fprintf(h, "\x00%s\x00%d\x00%d", op.Provenance.Transcript, op.Provenance.Line, n)
	}
	return h.Sum64()
}

// count turns the calls into the counts shown.
func (s *Summary) count() {
	s.OpsApplied, s.OpsFailed, s.OpsOther = 0, 0, 0
	for _, o := range s.ops {
		switch o {
		case manifest.OutcomeApplied:
			s.OpsApplied++
		case manifest.OutcomeFailed:
			s.OpsFailed++
		default:
			s.OpsOther++
		}
	}
}

func summarizeOne(ctx context.Context, c *Selected) (*Summary, error) {
	var body io.Reader
	if c.Listed != nil {
		// A session of a store (an agent's database): its agent is known,
		// and its records need no detection or decompression.
		rc, err := c.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		c.Info.Agent, body = c.Agent, rc
	} else {
		// Selected without a probe (no filter needed one): tell the agent here.
		br, head, agent, ok, done, err := openDetect(c)
		if err != nil {
			return nil, err
		}
		defer done()
		if !ok {
			if len(head) == 0 || c.Agent == "" {
				return nil, nil // not a transcript
			}
			agent = c.Agent
		}
		c.Info.Agent, body = agent, br
	}
	s := &Summary{Agent: c.Info.Agent, Harness: c.Harness, Transcripts: []string{c.Name}, files: map[string]bool{},
		ops: map[uint64]manifest.Outcome{}}
	h := emit.Handler{Op: func(op manifest.Op) {
		if op.Kind == manifest.KindObserve {
			return
		}
		s.ops[opKey(&op, len(s.ops))] = op.Outcome
		if op.Outcome == manifest.OutcomeApplied {
			for _, p := range op.Paths {
				if !s.files[p] {
					s.files[strings.Clone(p)] = true // p may be a slice of the whole patch text
				}
			}
		}
	}}
	// Summaries read no companion files (file-history backups, a project
	// root marker): what the transcript itself says is the summary.
	body = &failures{r: body}
	sess, err := parseAs(ctx, c.Info.Agent, body, agent.Transcript{Name: c.Name}, h)
	s.ID, s.Cwd, s.Start, s.End, s.EndState, s.Warnings, s.Bytes = sess.ID, sess.Cwd, sess.Start, sess.End, sess.EndState, len(sess.Warnings), sess.Bytes
	if err == nil && body.(*failures).err != nil {
		// A parser may take a failed read for the end of a damaged
		// transcript, and say so only in its warnings.
		err = fmt.Errorf("%s: %w", c.Name, body.(*failures).err)
	}
	if err != nil && (ctx.Err() != nil || discover.IsSourceFailure(err)) {
		return nil, err // a summary of part of a transcript would pass for all of it
	}
	return s, nil
}

// failures passes a reader on, keeping the first error of a source that
// failed (discover.IsSourceFailure) as it was read.
type failures struct {
	r   io.Reader
	err error
}

func (f *failures) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && f.err == nil && discover.IsSourceFailure(err) {
		f.err = err
	}
	return n, err
}

// SelectedCompanions returns the subagent transcripts of the selected
// Claude Code sessions on disk, probed, so that they count with them.
func SelectedCompanions(sel []Selected) []Selected {
	var out []Selected
	for _, c := range CompanionsOf(sel) {
		c := c
		info, err := Probe(&c)
		if err != nil {
			continue
		}
		out = append(out, Selected{Candidate: c, Info: info})
	}
	return out
}

// CompanionsOf returns the subagent transcripts of the selected Claude Code
// sessions on disk, and the sessions a store holds that started from the
// selected ones (Candidate.Children), that were not selected themselves.
func CompanionsOf(sel []Selected) []discover.Candidate {
	have := map[string]bool{}
	for _, s := range sel {
		have[s.Name] = true
	}
	var out []discover.Candidate
	f := &discover.Finder{}
	for i := range sel {
		for _, k := range sel[i].Children() {
			if !have[k.Name] {
				have[k.Name] = true
				out = append(out, k)
			}
		}
	}
	var cf companionFinder
	for _, s := range sel {
		if s.Path == "" || s.Info.Agent != manifest.AgentClaude {
			continue
		}
		for _, p := range cf.find(s.Path) {
			if have[p] {
				continue
			}
			have[p] = true
			cands, _, err := f.From(p, nil)
			if err == nil {
				out = append(out, cands...)
			}
		}
	}
	return out
}

// Collected is a whole transcript: its session, operations and timeline.
type Collected struct {
	Session manifest.Session
	Ops     []manifest.Op
	Events  []manifest.Event
}

// Collect parses a selected transcript whole, with its timeline events.
func Collect(ctx context.Context, c *Selected) (*Collected, error) {
	var events []manifest.Event
	col, err := CollectEvents(ctx, c, func(e manifest.Event) { events = append(events, e) })
	if col != nil {
		col.Events = events
	}
	return col, err
}

// CollectEvents is Collect with the timeline's events handed to event as
// they are read instead of collected.
func CollectEvents(ctx context.Context, c *Selected, event func(manifest.Event)) (*Collected, error) {
	br, _, a, ok, done, err := openDetect(c)
	if err != nil {
		return nil, err
	}
	defer done()
	if !ok {
		return nil, fmt.Errorf("%s: %w", c.Name, ErrUnknownFormat)
	}
	out := &Collected{}
	h := emit.Handler{
		Op:    func(op manifest.Op) { out.Ops = append(out.Ops, op) },
		Event: event,
	}
	out.Session, err = parseAs(ctx, a, br, agent.Transcript{Name: c.Name, OnDisk: c.Path != "", Home: c.Homes[a]}, h)
	return out, err
}

// verdictOf words an end state as inspect's verdict does.
func verdictOf(e manifest.EndState) string {
	switch e {
	case manifest.EndClean:
		return "ended cleanly"
	case manifest.EndTruncated:
		return "cut off mid-line"
	case manifest.EndInTool:
		return "died in a tool call"
	case manifest.EndOpen:
		return "stopped mid-turn"
	case manifest.EndAborted:
		return "turn aborted"
	}
	return string(e)
}

// openDetect opens a selected transcript, decompressed, and tells its agent
// from its first 64 KiB (ok is false when it cannot). done closes it.
func openDetect(c *Selected) (br *bufio.Reader, head []byte, agent manifest.Agent, ok bool, done func(), err error) {
	rc, err := c.Open()
	if err != nil {
		return nil, nil, "", false, nil, err
	}
	dr, err := jsonl.Decompress(rc)
	if err != nil {
		rc.Close()
		return nil, nil, "", false, nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	br = headBufs.Get().(*bufio.Reader)
	br.Reset(dr)
	done = func() {
		dr.Close()
		rc.Close()
		br.Reset(nil)
		headBufs.Put(br)
	}
	head, err = br.Peek(64 << 10)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		// A file that fails as it is read is not "no transcript": say why.
		done()
		return nil, nil, "", false, nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	agent, ok = detect(head)
	return br, head, agent, ok, done, nil
}

// headBufs recycles openDetect's buffers: a home of thousands of
// transcripts would otherwise allocate 64 KiB for each. Nothing read keeps
// one: the records parsed from it are copied on (jsonl.Reader).
var headBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
