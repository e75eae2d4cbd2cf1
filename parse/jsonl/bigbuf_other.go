//go:build !linux

package jsonl

// bigBuf is a growable mapping on Linux (bigbuf_linux.go); elsewhere a
// line is gathered in r.long and, past keptLine, in blocks.
type bigBuf struct{}

func newBigBuf(int) *bigBuf     { return nil }
func (*bigBuf) add([]byte) bool { return false }
func (*bigBuf) bytes() []byte   { return nil }
func (*bigBuf) size() int       { return 0 }
func (*bigBuf) reset()          {}
func (*bigBuf) free()           {}
