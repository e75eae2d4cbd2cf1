package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
)

// longest is the longest line any Reader of the process has gathered, or
// is gathering, past its read buffer.
var longest atomic.Int64

// Longest returns the length of the longest line a Reader has held (or is
// holding) in this process, past the read buffer: what a memory limit must
// allow for on top of the rest.
func Longest() int64 { return longest.Load() }

func noteLine(n int64) {
	for {
		old := longest.Load()
		if n <= old || longest.CompareAndSwap(old, n) {
			return
		}
	}
}

// source is where the stream a Reader reads is stored: its byte k is ra's
// byte base+k.
type source struct {
	ra   io.ReaderAt
	base int64
}

type sourceKey struct{}

// WithSource tells Each, through ctx, that the stream it reads is ra's
// bytes from base on: a plain file, not decompressed. A line longer than
// 1 MiB (measuredLine) is then measured in the file ahead of the reading and
// read into one buffer of its exact size, instead of being gathered in
// blocks and copied once at its end (twice the line at that moment).
//
// The measure only sizes a buffer: the line read is still the one the
// stream delivers. If the file changes under the reader (a live session
// growing), a line longer than measured falls back to the blocks.
func WithSource(ctx context.Context, ra io.ReaderAt, base int64) context.Context {
	return context.WithValue(ctx, sourceKey{}, &source{ra: ra, base: base})
}

// sizeLine measures the line being gathered (n bytes of it just added to
// what is held) in the source, and gives r.long the capacity of the whole
// line; it reports whether it did. It does nothing without a source, or
// for a line past the longest held, which readLine skips.
func (r *Reader) sizeLine(n int) bool {
	if r.src == nil {
		return false
	}
	have := int64(len(r.long) + n)
	rest, ok := r.src.lineRest(r.bytes, r.maxLine+1-have)
	if !ok || have+rest > r.maxLine {
		return false
	}
	noteLine(have + rest)
	line := make([]byte, len(r.long), have+rest)
	copy(line, r.long)
	r.long = line
	return true
}

// lineRest returns how many bytes there are from the stream's offset pos
// to the next newline (or the end of the file), looking at no more than
// limit of them; ok is false past limit or on a read error.
func (s *source) lineRest(pos, limit int64) (n int64, ok bool) {
	buf := make([]byte, 1<<20)
	for n < limit {
		k, err := s.ra.ReadAt(buf, s.base+pos+n)
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			return n + int64(i), true
		}
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, true
		}
		if err != nil || k == 0 {
			return 0, false
		}
	}
	return 0, false
}
