// Package progress draws one progress bar for a command's reading, across
// all its inputs: bytes read of the total, rate and time left. It appears
// only when the reading lasts: a command done within its delay shows none.
// The readers only add to a counter; one goroutine draws.
package progress

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Bar is a progress bar; a nil *Bar is none, and all its methods do nothing.
type Bar struct {
	read  atomic.Int64
	total int64
	stop  chan struct{}
	done  sync.WaitGroup
}

// Start starts a bar over total bytes, drawn on w once delay has passed.
func Start(w io.Writer, what string, total int64, delay time.Duration) *Bar {
	p := &Bar{total: total, stop: make(chan struct{})}
	// The bar starts with the command, so its rate and time left are the
	// reading's; its output is held back until the reading has lasted.
	out := &delayedWriter{w: w}
	// No throttle: this goroutine draws ten times a second, and at once
	// when the bar appears and when it ends.
	bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(out), progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription(what), progressbar.OptionClearOnFinish(), progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30), progressbar.OptionShowCount())
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

// Add counts n more bytes read.
func (p *Bar) Add(n int64) {
	if p != nil {
		p.read.Add(n)
	}
}

// End removes the bar, before the command prints its result.
func (p *Bar) End() {
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

// Reader moves a bar with what is read through it.
type Reader struct {
	R io.Reader
	P *Bar
}

func (r *Reader) Read(b []byte) (int, error) {
	n, err := r.R.Read(b)
	r.P.Add(int64(n))
	return n, err
}

// Seeker is a Reader that can seek (restore reads a snapshot twice), and
// stops reading once Ctx is done.
type Seeker struct {
	F   io.ReadSeeker
	P   *Bar
	Ctx context.Context
	// Err is the first read error: the source's own (a store that failed),
	// which what read it may have reported as damage.
	Err error
}

func (r *Seeker) Read(b []byte) (int, error) {
	if r.Ctx != nil && r.Ctx.Err() != nil {
		return 0, r.Ctx.Err()
	}
	n, err := r.F.Read(b)
	r.P.Add(int64(n))
	if err != nil && err != io.EOF && r.Err == nil {
		r.Err = err
	}
	return n, err
}

// Seek implements io.Seeker.
func (r *Seeker) Seek(off int64, whence int) (int64, error) { return r.F.Seek(off, whence) }
