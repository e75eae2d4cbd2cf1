package jsonl

import (
	"bytes"
	"fmt"
)

// resyncKeys are the openings of a record that a crashed writer may have
// appended to a half-written line; after damage, reading resumes at one.
var resyncKeys = [][]byte{
	[]byte(`{"timestamp"`), []byte(`{"type"`), []byte(`{"record_type"`), []byte(`{"parentUuid"`), []byte(`{"uuid"`), []byte(`{"id"`),
}

// split returns the JSON objects on one line and, when the line holds
// anything else, a description of it.
func split(line []byte) (recs [][]byte, problem string) {
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return recs, problem
		}
		if line[i] == '{' {
			if n, ok := scanObject(line[i:]); ok {
				recs = append(recs, line[i:i+n])
				i += n
				continue
			}
			if problem == "" {
				problem = fmt.Sprintf("unterminated JSON object at byte %d", i)
			}
		} else if problem == "" {
			problem = fmt.Sprintf("not a JSON object: unexpected %s at byte %d", quoteByte(line[i]), i)
		}
		next := resync(line, i+1)
		if next < 0 {
			return recs, problem
		}
		i = next
	}
}

func resync(line []byte, from int) int {
	best := -1
	for _, k := range resyncKeys {
		if j := bytes.Index(line[from:], k); j >= 0 && (best < 0 || from+j < best) {
			best = from + j
		}
	}
	return best
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// scanObject returns the length of the JSON object at the start of b,
// tracking strings, escapes and nesting only. Strings are skipped with
// IndexByte, so long string values (file contents, outputs) cost little.
func scanObject(b []byte) (int, bool) {
	var stack [64]byte
	open := stack[:0] // the closers expected, innermost last
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			j := i + 1
			for {
				k := bytes.IndexByte(b[j:], '"')
				if k < 0 {
					return 0, false
				}
				j += k
				bs := 0
				for m := j - 1; m > i && b[m] == '\\'; m-- {
					bs++
				}
				if bs%2 == 0 {
					break
				}
				j++
			}
			i = j
		case '{':
			open = append(open, '}')
		case '[':
			open = append(open, ']')
		case '}', ']':
			if len(open) == 0 || open[len(open)-1] != b[i] {
				return 0, false
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}
