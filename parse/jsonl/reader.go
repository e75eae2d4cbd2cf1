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
	"github.com/agentsandbox/sandbox/parse/internal/testhook"
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
	// marks are where the record's strings that start with MarkWord are;
	// scanned says the Reader found them (a record made by hand has none).
	marks   marks
	scanned bool
	// pinned says Data is in a chunk a batch holds, not a copy in the batch.
	pinned bool
}

// bom is the UTF-8 byte order mark.
var bom = []byte{0xef, 0xbb, 0xbf}

// Reader reads records from a JSON Lines stream.
type Reader struct {
	r    *lineReader
	file string

	line   int
	off    int64 // offset of the next line
	long   []byte
	blocks [][]byte // the rest of a line longer than keptLine
	// big holds a line that could not be measured (no plain file to
	// measure it in) once it is longer than measuredLine, where the system
	// maps one (bigBuf): the line is then never copied, and r.long never
	// grows past measuredLine for it. inBig says the current line is there.
	// Like r.long, the mapping is kept for the next lines unless a huge
	// line made it larger than keptBig.
	big       *bigBuf
	inBig     bool
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
	// bufEnd is the offset of the end of the read buffer's data when
	// lineBuffered last looked, and lastNL the offset of its last newline.
	bufEnd, lastNL int64
	// tooLong is the length of the line readLine skipped for being longer
	// than MaxLine, or 0; lostNames the files its start names, and
	// lostUnnamed whether it holds a call that may change files unnamed.
	tooLong     int64
	lostNames   []string
	lostUnnamed bool
	// src, when set, holds the bytes of the input (WithSource): a line
	// longer than measuredLine is measured there before it is gathered.
	src *source
	// measured says the current line was measured (or could not be), and
	// sized that r.long was given the capacity of all of it.
	measured, sized bool
	// ownLine says the line readLine returned last is in the Reader's own
	// buffer (gathered past the read buffer), which no read overwrites.
	ownLine bool
	// fromChunk says the line readLine returned last is in the read
	// buffer's current chunk, and inChunk that the records Next returns
	// from the current line are: Each's batches then hold the chunk
	// instead of copying them.
	fromChunk, inChunk bool
	// cutShort says the input ended in the middle of its compressed
	// stream (io.ErrUnexpectedEOF from the decompressor): a transcript cut
	// off, read to its end like a plain one. cutTold says a truncated last
	// line was reported already.
	cutShort, cutTold bool
	// touched is what touch read, kept.
	touched byte
	// maxLine is the longest line held (MaxLine of Each's context).
	maxLine int64
}

// defaultMaxLine is the longest line a Reader holds unless the context
// says otherwise (WithMaxLine, --max-line): a longer one is skipped as it
// is read, never held, and reported with its number, so memory is bounded
// by the largest line kept whatever the input.
const defaultMaxLine int64 = 1 << 30

type maxLineKey struct{}

// WithMaxLine returns a context under which readers hold lines of up to n
// bytes (and the single-JSON readers documents of up to n).
func WithMaxLine(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, maxLineKey{}, n)
}

// MaxLine returns the longest line readers under ctx hold.
func MaxLine(ctx context.Context) int64 {
	if n, ok := ctx.Value(maxLineKey{}).(int64); ok && n > 0 {
		return n
	}
	return defaultMaxLine
}

// NewReader returns a Reader over r; file names the input in warnings.
// Close returns its buffer for reuse.
//
// Its read buffer (chunkSize, larger than bufs: Each hands records on a
// buffer at a time, and a large read of a file goes straight into it past
// Decompress's smaller one) comes from a pool.
func NewReader(r io.Reader, file string) *Reader {
	return &Reader{r: newLineReader(r), file: file, lastNL: -1, maxLine: defaultMaxLine}
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
	r.dropBig()
	if r.r != nil {
		r.r.close()
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
	r.warnLost(line, off, nil, false, format, args...)
}

// warnLost records a warning about a line (or part of one) that was not
// read, with the files its bytes name, and whether it holds a call that
// may have changed files it does not name.
func (r *Reader) warnLost(line int, off int64, names []string, unnamed bool, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if unnamed {
		msg += "; it holds a call that may have changed files it does not name (cut before or inside them)"
	}
	r.warnings.Add(format, manifest.Warning{File: r.file, Line: line, Offset: off, Message: msg, Names: names, Unnamed: unnamed})
}

// heldPrefix returns the start of the line gathered so far, or of chunk
// when none is: what is searched for the names of a line too long to keep.
func (r *Reader) heldPrefix(chunk []byte) []byte {
	var b []byte
	switch {
	case r.inBig:
		b = r.big.bytes()
	case len(r.long) > 0:
		b = r.long
	case len(r.blocks) > 0:
		b = r.blocks[0]
	default:
		b = chunk
	}
	return b[:min(len(b), salvageLimit)]
}

// readLine returns the next line without its newline, and whether it had one.
func (r *Reader) readLine() ([]byte, bool, error) {
	if cap(r.long) > keptLine {
		// Do not keep a buffer the size of one huge line for the rest of the file.
		r.long = nil
	}
	r.long, r.blocks = r.long[:0], nil
	if r.big != nil {
		// Every record of the last line was handed on: reuse or let go.
		if r.big.size() > keptBig {
			r.dropBig()
		} else {
			r.big.reset()
		}
	}
	r.inBig = false
	r.tooLong, r.measured, r.sized, r.ownLine, r.fromChunk = 0, false, false, false, false
	for {
		chunk, err := r.r.ReadSlice('\n')
		if err == io.ErrUnexpectedEOF {
			// gzip and zstd say so of a stream cut short: the file was cut,
			// as a plain one is. (Only that very error: a connection cut
			// while reading wraps it, and is an error, not an end.)
			r.cutShort, err = true, io.EOF
		}
		if r.tooLong > 0 || r.held()+int64(len(chunk)) > r.maxLine+1 {
			// Past the limit: count the rest of the line, hold none of it.
			if r.tooLong == 0 {
				r.lostNames, r.lostUnnamed = names(r.heldPrefix(chunk))
				r.tooLong = r.held()
				r.long, r.blocks, r.inBig = nil, nil, false
				r.dropBig()
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
			if r.held() > 0 {
				r.hold(chunk[:len(chunk)-1], true)
				r.ownLine = true
				return r.line0(), true, nil
			}
			r.fromChunk = true
			return chunk[:len(chunk)-1], true, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			r.bytes += int64(len(chunk))
			r.hold(chunk, false)
			continue
		}
		r.bytes += int64(len(chunk))
		if errors.Is(err, io.EOF) {
			if r.held() > 0 {
				r.hold(chunk, true)
				return r.line0(), false, nil
			}
			if len(chunk) == 0 {
				return nil, false, io.EOF
			}
			r.fromChunk = true
			return chunk, false, nil
		}
		return nil, false, err
	}
}

const (
	// keptLine is the largest line buffer kept from one line to the next.
	keptLine = 16 << 20
	// blockSize is the size of the blocks a line longer than keptLine is
	// gathered in.
	blockSize = 4 << 20
	// measuredLine is the length past which a line is measured ahead in a
	// plain file (WithSource), so that no more than this was gathered
	// before it is read into a buffer of its size.
	measuredLine = 1 << 20
	// keptBig is the largest mapping kept from one line to the next.
	keptBig = 2*keptLine + 4<<20
)

// dropBig lets go of the mapping lines are held in.
func (r *Reader) dropBig() {
	if r.big != nil {
		r.big.free()
		r.big, r.inBig = nil, false
	}
}

// held returns the length of the line gathered so far.
func (r *Reader) held() int64 {
	n := int64(len(r.long))
	if r.inBig {
		n += int64(len(r.big.bytes()))
	}
	for _, b := range r.blocks {
		n += int64(len(b))
	}
	return n
}

// hold adds b to the line being gathered. Up to measuredLine it goes into
// r.long, kept for the next lines. Past that, in a plain file (WithSource),
// the line's length is first measured there and the line is read into one
// buffer of that size. Otherwise (standard input, a compressed file, an
// archive member) it goes into a mapping that grows without copying
// (bigBuf, on Linux), kept for the next lines like r.long; and where there
// is none, into r.long up to keptLine and then into blocks, copied once
// into a buffer of the line's exact size at its end. Either way a huge line
// costs about its own size. Growing one buffer instead would copy a huge
// line again at every step and leave every earlier copy to the collector:
// a 200 MiB line cost 880 MB; joined from blocks, 2.2 times the line.
// end says b ends the line.
func (r *Reader) hold(b []byte, end bool) {
	defer func() { noteLine(r.held()) }()
	if r.blocks == nil && !r.inBig {
		if len(r.long)+len(b) > measuredLine && !r.measured && !end {
			r.measured = true
			r.sized = r.sizeLine(len(b))
		}
		n := len(r.long) + len(b)
		// r.long takes a short line, one measured for it, or (with no
		// mapping made yet) what fits its capacity or ends the line.
		if n <= measuredLine || n <= cap(r.long) && (r.sized || r.big == nil) || end && n <= keptLine && r.big == nil {
			r.long = append(r.long, b...)
			return
		}
		// Past measuredLine and not measured (no plain file to measure it
		// in), or longer than it was measured: into the mapping, the part
		// held so far first.
		if r.big == nil && mapLines {
			r.big = newBigBuf(2 * n)
		}
		if r.big != nil && r.big.add(r.long) {
			r.inBig, r.long = true, r.long[:0]
		} else if n <= max(keptLine, cap(r.long)) {
			r.long = append(r.long, b...) // no mapping: as before
			return
		}
	}
	if r.inBig {
		if r.big.add(b) {
			return
		}
		// The mapping could not grow: what it holds goes to the blocks.
		r.holdBlocks(r.big.bytes())
		r.dropBig()
	}
	r.holdBlocks(b)
}

// mapLines says huge lines go into a mapping where there is one (false in
// the tests of the blocks a line is gathered in otherwise).
var mapLines = true

// holdBlocks adds b to the blocks a line longer than keptLine is gathered
// in where no mapping holds it.
func (r *Reader) holdBlocks(b []byte) {
	for len(b) > 0 {
		if n := len(r.blocks); n == 0 || len(r.blocks[n-1]) == cap(r.blocks[n-1]) {
			r.blocks = append(r.blocks, make([]byte, 0, blockSize))
		}
		last := &r.blocks[len(r.blocks)-1]
		k := min(len(b), cap(*last)-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
}

// line0 returns the line gathered by hold, in one buffer.
func (r *Reader) line0() []byte {
	if r.inBig {
		return r.big.bytes()
	}
	if r.blocks == nil {
		return r.long
	}
	line := make([]byte, 0, r.held())
	line = append(line, r.long...)
	for i, b := range r.blocks {
		line = append(line, b...)
		r.blocks[i] = nil // garbage as soon as copied
	}
	r.long, r.blocks = line, nil
	return line
}

// Next returns the next record. It returns io.EOF at the end of the input,
// and any other error from the underlying reader (a decompression error,
// say), after which the records already returned are still good.
func (r *Reader) Next() (Record, error) {
	if len(r.pending) > 0 {
		rec := r.pending[0].record(r.pendRec)
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
			} else if r.cutShort && !r.cutTold {
				r.warn(max(r.line, 1), r.off, manifest.TruncatedLastLine+", the compressed stream ends early (unexpected EOF): the transcript was cut off")
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
			r.warnLost(r.line, start, r.lostNames, r.lostUnnamed, "line of %d bytes is longer than --max-line (%d bytes): skipped, not read", r.tooLong, r.maxLine)
			continue
		}
		last := !hadNL
		if r.line == 1 {
			line = TrimBOM(line) // not part of the first record
		}
		// A CRLF line end is a line end.
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
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
		r.inChunk = r.fromChunk
		recs, problem, keys, cut, broken := split(line, r.objs[:0], r.keys[:0])
		if problem != "" && !last {
			// A damaged line right before the end is a cut-off record too. Peek
			// may refill the read buffer, so a line in it is copied first (one
			// gathered in the Reader's own buffer is not: a huge damaged line
			// would be held twice).
			if !r.ownLine {
				own := append(r.scratch[:0], line...)
				r.scratch = own
				line = own
				r.inChunk = false
			}
			if _, err := r.r.Peek(1); errors.Is(err, io.EOF) {
				last = true
			}
			recs, problem, keys, cut, broken = split(line, r.objs[:0], r.keys[:0])
		}
		if problem != "" {
			if last && (cut || broken >= 0 && unfinished(line[broken:])) {
				// The last line ends inside a record: the file was cut
				// there, whatever nested objects of it were read whole.
				problem = manifest.TruncatedLastLine + ", the transcript was cut off mid-record: " + problem
				r.cutTold = true
			}
			names, unnamed := names(line)
			r.warnLost(r.line, start, names, unnamed, "%s", problem)
		}
		if len(recs) == 0 {
			continue
		}
		if len(recs) > 1 {
			r.warn(r.line, start, "%d records glued on one line; each is read", len(recs))
		}
		r.objs, r.keys = recs, keys
		r.pendRec = Record{Line: r.line, Offset: start, Last: last}
		rec := recs[0].record(r.pendRec)
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
//
// Reading runs on a goroutine of its own, one batch of records ahead of fn:
// finding the lines and checking each for damage (about a third of the work
// of a parse) then runs on the other core while fn classifies what was read
// before. Records reach fn in order, each exactly as Next returns it: its
// bytes are left in the read buffer's chunk, which the batch holds until fn
// is done with it (the reader reads on into a fresh chunk), or, for a line
// gathered past the buffer, copied into the batch. A batch is handed on as
// soon as the read buffer is empty (before the reader can block on its
// input, so a record is never held back waiting for the next), and a
// gathered record longer than maxCopied is not copied: it is handed on
// alone and the reader waits for fn to be done with it, so memory stays a
// few batches and chunks plus the longest line.
// The Reader's other methods may be called again once Each has returned.
func (r *Reader) Each(ctx context.Context, fn func(Record)) (err error) {
	p := &pipe{full: make(chan *batch, nBatches), free: make(chan *batch, nBatches), ack: make(chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{})}
	for range nBatches {
		p.free <- batches.Get().(*batch)
	}
	r.src, _ = ctx.Value(sourceKey{}).(*source)
	r.maxLine = MaxLine(ctx)
	go r.produce(ctx, p)
	finished := false
	defer func() {
		if !finished {
			// fn panicked: stop the reader before the panic goes on, so
			// that nothing reads the buffer after Close hands it back.
			close(p.quit)
			<-p.done
		}
	}()
	skipped, n := false, 0
	for b := range p.full {
		r.touched ^= touch(b.recs)
		for i := 0; i < len(b.recs) && !skipped; i++ {
			if n&1023 == 0 && ctx.Err() != nil {
				skipped = true // the reader stops too, at its next check
				break
			}
			n++
			fn(b.recs[i])
			if testhook.Poison {
				for k := range b.recs[i].Data {
					b.recs[i].Data[k] = '#'
				}
			}
		}
		if b.err != nil {
			err = b.err
		}
		if b.hold {
			p.ack <- struct{}{}
		}
		b.reset()
		p.free <- b
	}
	finished = true
	<-p.done
	for range nBatches {
		batches.Put(<-p.free) // all back: the reader has stopped
	}
	if skipped && err == nil {
		err = ctx.Err()
	}
	return err
}

// touch loads the first and the last bytes of each record of a batch,
// which the reading goroutine's core scanned: the loads do not depend on
// each other, so the core asks for the lines all at once instead of
// waiting for each in turn when the parser first reads a record's keys
// (at its start, and, in a Claude Code line, after its message, at its
// end). What it returns is kept (Reader.touched) so that the compiler
// does not leave the loads out.
func touch(recs []Record) byte {
	var x byte
	for i := range recs {
		if d := recs[i].Data; len(d) > 0 {
			x ^= d[0]
			if len(d) > 64 {
				x ^= d[64]
			}
			if len(d) > 128 {
				x ^= d[len(d)-1] ^ d[len(d)-65]
			}
		}
	}
	return x
}

const (
	// nBatches is how many batches of records are in flight at most. With
	// the parser, the reader and the replay on two cores, the reader is
	// sometimes kept waiting for a core; with four batches ahead the parser
	// then ran dry 520 times in a 1 GiB rollout, and waited for a core
	// again once fed. Eight (each a 256 KiB chunk at most) cut that to 150.
	nBatches = 8
	// maxCopied is the longest record copied into a batch; a longer one
	// is handed on in place.
	maxCopied = 1 << 20
	// maxBatch is the most records in a batch: a buffer of tiny records
	// (2,000,000 "{}" lines) would otherwise make batches of 87,000
	// records, 6 MB of them each.
	maxBatch = 1024
)

// batches recycles batches: a scan of thousands of small transcripts
// would otherwise allocate them for each.
var batches = sync.Pool{New: func() any { return &batch{keys: make([]int, 0, 256)} }}

// batch is records read ahead for Each, their key offsets copied into
// keys, and their bytes either left in the read buffer's chunks, which the
// batch holds, or (a record not in a chunk: gathered past it, or copied out
// of it before a peek) copied into data.
type batch struct {
	data   []byte
	keys   []int
	recs   []Record
	chunks []*chunk
	// hold says the last record aliases the Reader's buffer: the reader
	// waits on the ack channel until fn is done with it.
	hold bool
	// err ends the records: the error Each returns.
	err error
}

func (b *batch) reset() {
	if cap(b.data) > 4*maxCopied {
		b.data = nil
	}
	for i, c := range b.chunks {
		c.release()
		b.chunks[i] = nil
	}
	b.data, b.keys, b.recs, b.chunks, b.hold, b.err = b.data[:0], b.keys[:0], b.recs[:0], b.chunks[:0], false, nil
}

// pin adds rec, whose bytes are in c, to the batch, which holds c until
// it is reset. Only its key offsets are copied.
func (b *batch) pin(rec Record, c *chunk) {
	if n := len(b.chunks); n == 0 || b.chunks[n-1] != c {
		c.hold()
		b.chunks = append(b.chunks, c)
	}
	rec.pinned = true
	b.addKeys(&rec)
	b.recs = append(b.recs, rec)
}

// addKeys copies rec's key offsets into the batch.
func (b *batch) addKeys(rec *Record) {
	if rec.keys != nil {
		k := len(b.keys)
		b.keys = append(b.keys, rec.keys...)
		rec.keys = b.keys[k:len(b.keys):len(b.keys)]
	}
}

// add copies rec into the batch.
func (b *batch) add(rec Record) {
	at := len(b.data)
	b.data = append(b.data, rec.Data...)
	rec.Data = b.data[at:len(b.data):len(b.data)]
	b.addKeys(&rec)
	b.recs = append(b.recs, rec)
}

// fix points the records' data and keys into the batch's final buffers:
// an append that grew them left the earlier records on the old ones.
func (b *batch) fix() {
	at, k := 0, 0
	for i := range b.recs {
		rec := &b.recs[i]
		if b.hold && i == len(b.recs)-1 {
			break // in place, not copied
		}
		if !rec.pinned {
			n := len(rec.Data)
			rec.Data = b.data[at : at+n : at+n]
			at += n
		}
		if rec.keys != nil {
			nk := len(rec.keys)
			rec.keys = b.keys[k : k+nk : k+nk]
			k += nk
		}
	}
}

type pipe struct {
	full, free chan *batch
	ack        chan struct{}
	quit, done chan struct{}
}

// produce reads the records for Each, in batches.
func (r *Reader) produce(ctx context.Context, p *pipe) {
	defer close(p.done)
	defer close(p.full)
	var b *batch
	get := func() bool {
		select {
		case b = <-p.free:
			return true
		case <-p.quit:
			return false
		}
	}
	send := func() bool {
		b.fix()
		hold := b.hold // b is Each's once sent
		select {
		case p.full <- b:
		case <-p.quit:
			return false
		}
		if hold {
			select {
			case <-p.ack:
			case <-p.quit:
				return false
			}
		}
		b = nil
		return true
	}
	if !get() {
		return
	}
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			b.err = ctx.Err()
			send()
			return
		}
		rec, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				b.err = fmt.Errorf("%s: line %d: %w", r.file, r.line+1, err)
			}
			send()
			return
		}
		switch {
		case r.inChunk:
			b.pin(rec, r.r.c) // the batch holds the chunk instead of a copy
		case len(rec.Data) > maxCopied:
			// Hand it on in place, and read no further until fn is done.
			b.recs = append(b.recs, rec)
			b.hold = true
		default:
			b.add(rec)
		}
		// Hand the batch on before the next read could wait for input (or
		// would overwrite a record held in place).
		if b.hold || len(b.recs) >= maxBatch || (len(r.pending) == 0 && !r.lineBuffered()) {
			if !send() || !get() {
				return
			}
		}
	}
}

// lineBuffered reports whether a whole line is in the read buffer, so that
// Next can return it without reading its input. The buffer's last newline
// is looked for once each time the buffer is filled.
func (r *Reader) lineBuffered() bool {
	n := r.r.Buffered()
	if end := r.bytes + int64(n); end != r.bufEnd {
		r.bufEnd = end
		b, _ := r.r.Peek(n) // buffered already: no read
		r.lastNL = r.bytes + int64(bytes.LastIndexByte(b, '\n'))
	}
	return r.lastNL >= r.bytes
}

// Fill puts what the reader learnt into a session: its warnings, merged with
// the parser's in line order, and the lines and bytes read.
func (r *Reader) Fill(s *manifest.Session) {
	s.Warnings = append(r.Warnings(), s.Warnings...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Lines, s.Bytes = r.Lines(), r.Bytes()
}
