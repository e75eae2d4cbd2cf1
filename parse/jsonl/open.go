package jsonl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Decompress returns a reader of r's content, decompressing gzip and zstd
// streams recognised by their magic bytes (not by the file name, so a
// renamed artifact still reads).
func Decompress(r io.Reader) (io.ReadCloser, error) {
	br := getBuf(r)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			putBuf(br)
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return releasing{zr, br, false}, nil
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			putBuf(br)
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return releasing{zr.IOReadCloser(), br, false}, nil
	}
	return releasing{io.NopCloser(br), br, true}, nil
}

// Uncompressed reports whether rc, returned by Decompress, reads its input as it
// is, not decompressed.
func Uncompressed(rc io.ReadCloser) bool {
	r, ok := rc.(releasing)
	return ok && r.plain
}

// releasing closes a reader and returns its buffer to the pool.
type releasing struct {
	io.ReadCloser
	buf   *bufio.Reader
	plain bool
}

func (r releasing) Close() error {
	err := r.ReadCloser.Close()
	putBuf(r.buf)
	return err
}
