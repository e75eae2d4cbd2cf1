package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// chunkSize is the size of a Reader's read buffer.
const chunkSize = 256 << 10

// chunk is a read buffer that the records read into it may alias after the
// reader has moved on to another: it goes back to the free list when the reader
// and every batch holding records in it are done with it.
type chunk struct {
	buf  []byte
	refs atomic.Int32
}

// chunks are the chunks let go of, for the next reader to read into: a
// free list, not a sync.Pool, which the collector empties (a run collects
// about thirty times a GiB, and each time the readers made and zeroed their
// chunks anew). It keeps at most maxFreeChunks, enough for every batch in
// flight of a few readers at once; more are let go of.
var chunks struct {
	sync.Mutex
	free []*chunk
}

const maxFreeChunks = 32

// getChunk returns a chunk held once, by its caller.
func getChunk() *chunk {
	chunks.Lock()
	var c *chunk
	if n := len(chunks.free); n > 0 {
		c, chunks.free = chunks.free[n-1], chunks.free[:n-1]
	}
	chunks.Unlock()
	if c == nil {
		c = &chunk{buf: make([]byte, chunkSize)}
	}
	c.refs.Store(1)
	return c
}

// putChunk keeps c for getChunk, or lets the collector have it.
func putChunk(c *chunk) {
	chunks.Lock()
	if len(chunks.free) < maxFreeChunks {
		chunks.free = append(chunks.free, c)
	}
	chunks.Unlock()
}

// hold takes one more hold on c.
func (c *chunk) hold() { c.refs.Add(1) }

// release lets go of one hold on c; the last one puts it on the free list.
func (c *chunk) release() {
	if c.refs.Add(-1) == 0 {
		putChunk(c)
	}
}

// lineReader is bufio.Reader's ReadSlice, Peek and Buffered, with the same
// results, over chunks. Where bufio slides the bytes not yet read to the
// start of its buffer, over the bytes it returned before, lineReader moves
// them to a fresh chunk when anyone else holds the current one: a batch of
// records read ahead (Each) then holds their chunk instead of a copy of
// their bytes, and what the reader returned stays as it was for as long as
// its chunk is held.
type lineReader struct {
	rd   io.Reader
	c    *chunk
	r, w int
	err  error
}

var lineReaders = sync.Pool{New: func() any { return new(lineReader) }}

func newLineReader(rd io.Reader) *lineReader {
	b := lineReaders.Get().(*lineReader)
	*b = lineReader{rd: rd, c: getChunk()}
	return b
}

// close lets go of the reader's chunk and returns the reader to the pool.
func (b *lineReader) close() {
	b.c.release()
	*b = lineReader{}
	lineReaders.Put(b)
}

// fill reads a new block into the buffer, first making room for it: the
// bytes not yet read go to the start of the chunk if no one else holds it,
// else to the start of a fresh one.
func (b *lineReader) fill() {
	if b.r > 0 {
		if b.c.refs.Load() == 1 {
			copy(b.c.buf, b.c.buf[b.r:b.w])
		} else {
			n := getChunk()
			copy(n.buf, b.c.buf[b.r:b.w])
			b.c.release()
			b.c = n
		}
		b.w -= b.r
		b.r = 0
	}
	for range 100 {
		n, err := b.rd.Read(b.c.buf[b.w:])
		if n < 0 {
			panic(errors.New("jsonl: reader returned negative count from Read"))
		}
		b.w += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}

func (b *lineReader) readErr() error {
	err := b.err
	b.err = nil
	return err
}

// Buffered returns the number of bytes that can be read from the buffer.
func (b *lineReader) Buffered() int { return b.w - b.r }

// ReadSlice is bufio.Reader's: it reads until the first delim, returning a
// slice of the buffer; with a full buffer and no delim in it, the buffer
// and bufio.ErrBufferFull.
func (b *lineReader) ReadSlice(delim byte) (line []byte, err error) {
	s := 0 // search start
	for {
		if i := bytes.IndexByte(b.c.buf[b.r+s:b.w], delim); i >= 0 {
			i += s
			line = b.c.buf[b.r : b.r+i+1]
			b.r += i + 1
			return line, nil
		}
		if b.err != nil {
			line = b.c.buf[b.r:b.w]
			b.r = b.w
			return line, b.readErr()
		}
		if b.Buffered() >= len(b.c.buf) {
			line = b.c.buf[b.r:b.w]
			b.r = b.w
			return line, bufio.ErrBufferFull
		}
		s = b.w - b.r
		b.fill()
	}
}

// Peek is bufio.Reader's: the next n bytes without reading them.
func (b *lineReader) Peek(n int) ([]byte, error) {
	for b.w-b.r < n && b.w-b.r < len(b.c.buf) && b.err == nil {
		b.fill()
	}
	if n > len(b.c.buf) {
		return b.c.buf[b.r:b.w], bufio.ErrBufferFull
	}
	var err error
	if avail := b.w - b.r; avail < n {
		n = avail
		err = b.readErr()
		if err == nil {
			err = bufio.ErrBufferFull
		}
	}
	return b.c.buf[b.r : b.r+n], err
}
