package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Ranges grow from firstRange, doubling while the reads go on in order, up
// to maxRange: a probe of an object's head costs one small GET, and a whole
// object streams in a few large ones.
const (
	firstRange = 128 << 10
	maxRange   = 64 << 20
)

// Attempts to go on with a body cut mid-stream: the rest is asked for again
// from where it stopped, for the same ETag, after a short pause.
const resumeAttempts = 3

var resumePause = 200 * time.Millisecond

// Object is one object pinned by its ETag, read at any offset through
// ranged GETs (an io.ReaderAt over the object) and never copied to disk.
// Reads in order go on from the open response; a read elsewhere asks for a
// new range. Every GET carries If-Match with the pinned ETag, so a replaced
// object fails with ErrChanged instead of mixing two versions. It is safe
// for concurrent use; Close ends the open response.
type Object struct {
	c    *Client
	ctx  context.Context
	info Info

	mu       sync.Mutex
	whole    []byte // a small object, read once whole
	body     io.ReadCloser
	pos, end int64 // the open body serves [pos, end)
	next     int64 // the length of the next range in order
}

// Object returns a reader of the object info names, pinned by info.ETag.
// Nothing is requested until the first read.
func (c *Client) Object(ctx context.Context, info Info) *Object {
	return &Object{c: c, ctx: ctx, info: info}
}

// Info is what the object was pinned as.
func (o *Object) Info() Info { return o.info }

// Size is the object's length in bytes.
func (o *Object) Size() int64 { return o.info.Size }

// ReadAt implements io.ReaderAt.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset", o.info.Loc)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.info.Size <= firstRange {
		// A small object costs one GET whatever is read of it: an
		// archive's directory, then its members, then its head again.
		if o.whole == nil {
			if err := o.readWhole(); err != nil {
				return 0, err
			}
		}
		if off >= int64(len(o.whole)) {
			return 0, io.EOF
		}
		n := copy(p, o.whole[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	return o.readRanged(p, off)
}

// readRanged fills p from off through ranged GETs, going on from the open
// response when it is there, and asking again for the rest of a response
// cut mid-stream.
func (o *Object) readRanged(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= o.info.Size {
			return n, io.EOF
		}
		if o.body == nil || o.pos != at || o.pos >= o.end {
			if err := o.open(at, len(p)-n); err != nil {
				return n, err
			}
		}
		k, err := o.body.Read(p[n:min(len(p), n+int(o.end-o.pos))])
		n += k
		o.pos += int64(k)
		if err == nil || (errors.Is(err, io.EOF) && o.pos == o.end) {
			continue
		}
		// The response ended before its range did: a connection cut. Ask
		// for the rest again, for the same version, a few times.
		cut := err
		if errors.Is(err, io.EOF) {
			cut = io.ErrUnexpectedEOF
		}
		if err := o.resume(cut); err != nil {
			return n, err
		}
	}
	return n, nil
}

// readWhole reads a small object into memory, in one range.
func (o *Object) readWhole() error {
	buf := make([]byte, o.info.Size)
	if _, err := o.readRanged(buf, 0); err != nil {
		return err
	}
	o.closeBody()
	o.whole = buf
	return nil
}

// open asks for the range from at: the next size up when it goes on in
// order, else a small one, and never less than want.
func (o *Object) open(at int64, want int) error {
	length := int64(firstRange)
	if o.body != nil && at == o.end {
		length = min(o.next*2, maxRange)
	}
	o.closeBody()
	length = max(length, int64(want))
	end := min(at+length, o.info.Size)
	if err := o.get(at, end); err != nil {
		return err
	}
	o.next = length
	return nil
}

func (o *Object) get(at, end int64) error {
	rng := fmt.Sprintf("bytes=%d-%d", at, end-1)
	in := &s3.GetObjectInput{Bucket: &o.info.Bucket, Key: &o.info.Key, Range: aws.String(rng)}
	if o.info.ETag != "" {
		in.IfMatch = aws.String(o.info.ETag)
	}
	out, err := o.c.s3.GetObject(o.ctx, in)
	if err != nil {
		return o.c.wrap(o.info.Loc, o.info.ETag, err)
	}
	if out.ETag != nil && o.info.ETag != "" && *out.ETag != o.info.ETag {
		// A store that ignores If-Match still names the version it sent.
		out.Body.Close()
		return &Error{URL: o.info.Loc.String(), Kind: ErrChanged, Detail: "it is no longer the version with ETag " + o.info.ETag, Err: ErrChanged}
	}
	o.body, o.pos, o.end = out.Body, at, end
	return nil
}

// resume asks again for what is left of the open range after a cut.
func (o *Object) resume(cut error) error {
	at, end := o.pos, o.end
	o.closeBody()
	var err error
	for i := 0; i < resumeAttempts; i++ {
		select {
		case <-o.ctx.Done():
			return o.c.wrap(o.info.Loc, o.info.ETag, o.ctx.Err())
		case <-time.After(resumePause << (2 * i)):
		}
		if err = o.get(at, end); err == nil {
			return nil
		}
		var oe *Error
		if errors.As(err, &oe) && oe.Kind != ErrUnreachable && oe.Kind != nil {
			return err // not found, changed, denied: asking again will not help
		}
	}
	return &Error{URL: o.info.Loc.String(), Detail: fmt.Sprintf("the connection was cut at byte %d and could not be resumed", at),
		Kind: ErrUnreachable, Err: errors.Join(cut, err)}
}

func (o *Object) closeBody() {
	if o.body != nil {
		o.body.Close()
		o.body = nil
	}
}

// Close ends the open response, if any. The object can be read again.
func (o *Object) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closeBody()
	return nil
}

// Stream returns a reader of the whole object from its start, in order.
func (o *Object) Stream() io.ReadCloser {
	return &stream{SectionReader: io.NewSectionReader(o, 0, o.info.Size), o: o}
}

type stream struct {
	*io.SectionReader
	o *Object
}

func (s *stream) Close() error { return s.o.Close() }
