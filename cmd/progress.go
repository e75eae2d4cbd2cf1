package cmd

import (
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/agentsandbox/sandbox/parse"
)

// One progress bar for a command's reading, across all its inputs: bytes
// read of the total, rate and time left, on stderr when it is a terminal
// (never under --quiet or --json... stderr stays clean for machines). It
// appears only when the reading lasts: a command done within progressDelay
// shows none. The readers only add to a counter; one goroutine draws.

// progressDelay is how long a command reads before its bar appears;
// SANDBOX_PROGRESS_DELAY (a duration) sets another (0: at once).
const progressDelay = 400 * time.Millisecond

type progress struct {
	read  atomic.Int64
	total int64
	stop  chan struct{}
	done  sync.WaitGroup
}

// startProgress starts a bar over total bytes, or returns nil when no bar
// is wanted here.
func (a *app) startProgress(what string, total int64) *progress {
	if a.quiet || !isTerminal(a.stderr) || total <= 0 {
		return nil
	}
	p := &progress{total: total, stop: make(chan struct{})}
	// The bar starts with the command, so its rate and time left are the
	// reading's; its output is held back until the reading has lasted.
	out := &delayedWriter{w: a.stderr}
	// No throttle: this goroutine draws ten times a second, and at once
	// when the bar appears and when it ends.
	bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(out), progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription(what), progressbar.OptionClearOnFinish(), progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30), progressbar.OptionShowCount())
	delay := progressDelay
	if d, err := time.ParseDuration(os.Getenv("SANDBOX_PROGRESS_DELAY")); err == nil && d >= 0 {
		delay = d
	}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		shown := time.After(delay)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-shown:
				out.on.Store(true)
				_ = bar.Set64(min(p.read.Load(), total))
			case <-tick.C:
				_ = bar.Set64(min(p.read.Load(), total))
			case <-p.stop:
				if out.on.Load() {
					_ = bar.Set64(min(p.read.Load(), total)) // the last figures, then gone
				}
				_ = bar.Clear()
				return
			}
		}
	}()
	return p
}

// delayedWriter drops what is written until it is turned on.
type delayedWriter struct {
	w  io.Writer
	on atomic.Bool
}

func (d *delayedWriter) Write(b []byte) (int, error) {
	if !d.on.Load() {
		return len(b), nil
	}
	return d.w.Write(b)
}

func (p *progress) add(n int64) {
	if p != nil {
		p.read.Add(n)
	}
}

// end removes the bar, before the command prints its result.
func (p *progress) end() {
	if p == nil {
		return
	}
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.done.Wait()
}

// counting starts a bar over the selected transcripts and makes their
// reading move it. The caller ends it.
func (a *app) counting(what string, sel []parse.Selected) *progress {
	var total int64
	for _, s := range sel {
		total += s.Size
	}
	p := a.startProgress(what, total)
	if p == nil {
		return nil
	}
	for i := range sel {
		sel[i].Candidate = sel[i].Candidate.Counted(p.add)
	}
	return p
}

// progressReader moves a bar with what is read through it.
type progressReader struct {
	r io.Reader
	p *progress
}

func (r *progressReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.p.add(int64(n))
	return n, err
}

// progressSeeker is a progressReader that can seek (restore reads a
// snapshot twice).
type progressSeeker struct {
	f   io.ReadSeeker
	p   *progress
	ctx context.Context
	// err is the first read error: the source's own (a store that failed),
	// which what read it may have reported as damage.
	err error
}

func (r *progressSeeker) Read(b []byte) (int, error) {
	if r.ctx != nil && r.ctx.Err() != nil {
		return 0, r.ctx.Err()
	}
	n, err := r.f.Read(b)
	r.p.add(int64(n))
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

func (r *progressSeeker) Seek(off int64, whence int) (int64, error) { return r.f.Seek(off, whence) }
