package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/agentsandbox/sandbox/manifest"
)

// Record is one JSON object read from a transcript. Data aliases the
// reader's buffer and is valid only until the next call to Next.
type Record struct {
	Data   []byte
	Line   int   // 1-based line number
	Offset int64 // byte offset of the line's start
	// Last is true when this record is on the final line of the input and
	// that line had no terminating newline.
	Last bool
	// Escaped is true when a key or a short value of the record (a string
	// that could spell a name such as "type" or "tool_use") writes an ASCII
	// character as a \u escape, which a byte search for the name would not
	// see: Plain spells such a record out.
	Escaped bool
	// keys are the offsets in Data of the record's top-level keys, in order.
	keys []int
}

// bom is the UTF-8 byte order mark.
var bom = []byte{0xef, 0xbb, 0xbf}

// Reader reads records from a JSON Lines stream.
type Reader struct {
	r    *bufio.Reader
	file string

	line      int
	off       int64 // offset of the next line
	long      []byte
	scratch   []byte
	pending   []object // further records glued on the current line
	pendRec   Record
	objs      []object // the current line's records
	keys      []int    // the current line's top-level key offsets
	blank     int
	blankLine int
	blankOff  int64

	warnings Warner
	bytes    int64
	err      error
	// tooLong is the length of the line readLine skipped for being longer
	// than MaxLine, or 0.
	tooLong int64
}

// MaxLine is the longest line a Reader holds (--max-line): a longer one is
// skipped as it is read, never held, and reported with its number, so
// memory is bounded by the largest line kept whatever the input.
var MaxLine int64 = 1 << 30

// NewReader returns a Reader over r; file names the input in warnings.
// Close returns its buffer for reuse.
func NewReader(r io.Reader, file string) *Reader {
	return &Reader{r: getBuf(r), file: file}
}

// bufs recycles read buffers: a scan of thousands of small transcripts
// would otherwise allocate one per file.
var bufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func getBuf(r io.Reader) *bufio.Reader {
	b := bufs.Get().(*bufio.Reader)
	b.Reset(r)
	return b
}

func putBuf(b *bufio.Reader) {
	b.Reset(nil)
	bufs.Put(b)
}

// Close releases the reader's buffer; the records it returned are no longer
// valid. It never fails.
func (r *Reader) Close() error {
	if r.r != nil {
		putBuf(r.r)
		r.r = nil
	}
	return nil
}

// Warnings returns the damage found so far.
func (r *Reader) Warnings() []manifest.Warning { return r.warnings.List() }

// Lines returns the number of lines read so far.
func (r *Reader) Lines() int { return r.line }

// Bytes returns the number of bytes read so far.
func (r *Reader) Bytes() int64 { return r.bytes }

func (r *Reader) warn(line int, off int64, format string, args ...any) {
	r.warnings.Add(format, manifest.Warning{File: r.file, Line: line, Offset: off, Message: fmt.Sprintf(format, args...)})
}

// readLine returns the next line without its newline, and whether it had one.
func (r *Reader) readLine() ([]byte, bool, error) {
	if cap(r.long) > 16<<20 {
		// Do not keep a buffer the size of one huge line for the rest of the file.
		r.long = nil
	}
	r.long = r.long[:0]
	r.tooLong = 0
	for {
		chunk, err := r.r.ReadSlice('\n')
		if r.tooLong > 0 || int64(len(r.long))+int64(len(chunk)) > MaxLine+1 {
			// Past the limit: count the rest of the line, hold none of it.
			if r.tooLong == 0 {
				r.tooLong = int64(len(r.long))
				r.long = nil
			}
			r.tooLong += int64(len(chunk))
			r.bytes += int64(len(chunk))
			switch {
			case err == nil:
				r.tooLong-- // the newline
				return nil, true, nil
			case errors.Is(err, bufio.ErrBufferFull):
				continue
			case errors.Is(err, io.EOF):
				return nil, false, nil
			}
			return nil, false, err
		}
		if err == nil {
			r.bytes += int64(len(chunk))
			if len(r.long) > 0 {
				r.long = append(r.long, chunk[:len(chunk)-1]...)
				return r.long, true, nil
			}
			return chunk[:len(chunk)-1], true, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			r.bytes += int64(len(chunk))
			r.long = append(r.long, chunk...)
			continue
		}
		r.bytes += int64(len(chunk))
		if errors.Is(err, io.EOF) {
			if len(r.long) > 0 {
				r.long = append(r.long, chunk...)
				return r.long, false, nil
			}
			if len(chunk) == 0 {
				return nil, false, io.EOF
			}
			return chunk, false, nil
		}
		return nil, false, err
	}
}

// Next returns the next record. It returns io.EOF at the end of the input,
// and any other error from the underlying reader (a decompression error,
// say), after which the records already returned are still good.
func (r *Reader) Next() (Record, error) {
	if len(r.pending) > 0 {
		rec := r.pendRec
		rec.Data, rec.keys, rec.Escaped = r.pending[0].data, r.pending[0].keys, r.pending[0].escaped
		r.pending = r.pending[1:]
		return rec, nil
	}
	for {
		if r.err != nil {
			return Record{}, r.err
		}
		line, hadNL, err := r.readLine()
		if err != nil {
			r.flushBlank()
			if !errors.Is(err, io.EOF) {
				r.warn(r.line+1, r.off, "read error: %v", err)
			}
			r.err = err
			return Record{}, err
		}
		r.line++
		start := r.off
		r.off += int64(len(line))
		if hadNL {
			r.off++
		}
		if r.tooLong > 0 {
			r.off += r.tooLong
			r.warn(r.line, start, "line of %d bytes is longer than --max-line (%d bytes): skipped, not read", r.tooLong, MaxLine)
			continue
		}
		last := !hadNL
		if r.line == 1 {
			line = TrimBOM(line) // not part of the first record
		}
		// A CRLF line end is a line end.
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) > 0 && (line[0] == 0 || line[len(line)-1] == 0) {
			n := len(line)
			line = bytes.Trim(line, "\x00")
			r.warn(r.line, start, "%d NUL bytes of padding (the file was cut short while being written)", n-len(line))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			r.blank++
			if r.blank == 1 {
				r.blankLine, r.blankOff = r.line, start
			}
			continue
		}
		r.flushBlank()
		recs, problem, keys := split(line, r.objs[:0], r.keys[:0])
		if problem != "" && !last {
			// A damaged line right before the end is a cut-off record too. Peek
			// may refill the buffer that line aliases, so keep a copy first.
			own := append(r.scratch[:0], line...)
			r.scratch = own
			if _, err := r.r.Peek(1); errors.Is(err, io.EOF) {
				last = true
			}
			line = own
			recs, problem, keys = split(line, r.objs[:0], r.keys[:0])
		}
		if problem != "" {
			if last && len(recs) == 0 {
				problem = "truncated last line (" + problem + "): the transcript was cut off mid-record"
			}
			r.warn(r.line, start, "%s", problem)
		}
		if len(recs) == 0 {
			continue
		}
		if len(recs) > 1 {
			r.warn(r.line, start, "%d records glued on one line; each is read", len(recs))
		}
		r.objs, r.keys = recs, keys
		rec := Record{Data: recs[0].data, keys: recs[0].keys, Escaped: recs[0].escaped, Line: r.line, Offset: start, Last: last}
		r.pendRec = rec
		r.pending = recs[1:]
		return rec, nil
	}
}

func (r *Reader) flushBlank() {
	if r.blank == 0 {
		return
	}
	if r.blank == 1 {
		r.warn(r.blankLine, r.blankOff, "blank line")
	} else {
		r.warn(r.blankLine, r.blankOff, "%d blank lines from here", r.blank)
	}
	r.blank = 0
}

// Each reads every record and hands it to fn, checking ctx every 1024
// records. It returns nil at the end of the input, ctx's error when it was
// cancelled, or a read error naming the file and line.
func (r *Reader) Each(ctx context.Context, fn func(Record)) error {
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: line %d: %w", r.file, r.line+1, err)
		}
		fn(rec)
	}
}

// Fill puts what the reader learnt into a session: its warnings, merged with
// the parser's in line order, and the lines and bytes read.
func (r *Reader) Fill(s *manifest.Session) {
	s.Warnings = append(r.Warnings(), s.Warnings...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Lines, s.Bytes = r.Lines(), r.Bytes()
}
