package emit

import (
	"bytes"

	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// FirstLineRaw is the first line of a JSON string as written, unescaped: only
// the bytes before its first newline escape are read (when that comes
// within 4 KiB).
func FirstLineRaw(raw []byte) string {
	if i := newlineEscape(raw[:min(len(raw), 4096)]); i >= 0 {
		raw = append(raw[:i:i], '"')
	}
	text, _ := jsonl.Text(raw)
	return FirstLine(text)
}

// newlineEscape is where the first \n escape of a JSON string as written
// is, or -1: a backslash that follows an odd run of backslashes is itself
// escaped, so \\n is a backslash and an n.
func newlineEscape(raw []byte) int {
	for off := 0; ; {
		i := bytes.Index(raw[off:], []byte(`\n`))
		if i < 0 {
			return -1
		}
		i += off
		run := 0
		for j := i - 1; j >= 0 && raw[j] == '\\'; j-- {
			run++
		}
		if run%2 == 0 {
			return i
		}
		off = i + 2
	}
}
