package jsonl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
)

// resyncKeys are the first keys of the records a crashed writer may have
// appended to a half-written line; after damage, reading resumes at an
// object that opens with one (however the key is spelled).
var resyncKeys = []string{"timestamp", "type", "record_type", "parentUuid", "uuid", "id"}

// object is one JSON object found on a line: its bytes, the offsets of its
// top-level keys, and whether a name in it may be spelled with escapes.
type object struct {
	data    []byte
	keys    []int
	escaped bool
	marks   marks
}

// record is rec (its line, offset, whether it is the last) with o's bytes
// and what the scan found of them.
func (o object) record(rec Record) Record {
	rec.Data, rec.keys, rec.Escaped, rec.marks, rec.scanned = o.data, o.keys, o.escaped, o.marks, true
	return rec
}

// MarkWord is the name the Reader notes every string of a record that
// starts with: "tool_use" (Claude Code's calls, and the "tool_use_id" of
// their results). A parser that looks for it in a record finds it at the
// marks (Record.Marks) instead of searching the record's bytes, most of
// which are the outputs of commands.
const MarkWord = "tool_use"

// markWord is MarkWord as the eight bytes a string's scan loads first.
var markWord = binary.LittleEndian.Uint64([]byte(MarkWord))

// marks are where a record's strings that start with MarkWord are: the
// offset of the first one's opening quote, and how many there are.
type marks struct{ first, n int }

// split returns the JSON objects on one line and, when the line holds
// anything else, a description of it. The objects' keys are appended to
// keys; both slices are returned for the caller to reuse from line to line.
// cut says the line ends in damage: no whole object follows its last
// break. broken is where the last object that could not be read starts (-1
// for none): a record cut off after a nested object of its own closed,
// which was read as a record, ends in no damage (see Unfinished).
func split(line []byte, recs []object, keys []int) (_ []object, problem string, _ []int, cut bool, broken int) {
	i := 0
	broken = -1
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return recs, problem, keys, cut, broken
		}
		if line[i] == '{' {
			from := len(keys)
			var m marks
			n, ok, k, esc := scanObject(line[i:], keys, &m)
			if ok {
				keys = k
				recs = append(recs, object{data: line[i : i+n], keys: keys[from:len(keys):len(keys)], escaped: esc, marks: m})
				i += n
				cut = false
				continue
			}
			if problem == "" {
				problem = brokenObject(line, i)
			}
			broken = i
		} else if problem == "" {
			problem = fmt.Sprintf("not a JSON object: unexpected %s at byte %d", quoteByte(line[i]), i)
		}
		cut = true
		next := resync(line, i+1)
		if next < 0 {
			return recs, problem, keys, cut, broken
		}
		i = next
	}
}

// brokenObject says where and how the JSON object that starts at byte at
// of line, which scanObject did not read whole, breaks. It runs only on
// damage, so it reads byte by byte.
func brokenObject(line []byte, at int) string {
	type opener struct {
		c   byte
		off int
	}
	var open []opener
	b := line[at:]
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) {
				return fmt.Sprintf("the JSON object at byte %d is unfinished: the string opened at byte %d is still open where the line ends (byte %d)",
					at, at+i, len(line))
			}
			c := j + 1
			for c < len(b) && isSpace(b[c]) {
				c++
			}
			if c < len(b) && b[c] != ':' && b[c] != ',' && b[c] != '}' && b[c] != ']' {
				return fmt.Sprintf("the JSON object at byte %d breaks at byte %d: %s after the string opened at byte %d, where a colon, a comma or a closing bracket must be (a line cut inside a string, and the next record glued to it?)",
					at, at+c, quoteByte(b[c]), at+i)
			}
			i = j
		case '{', '[':
			open = append(open, opener{c, at + i})
		case '}', ']':
			want := byte('}')
			if o := open[len(open)-1]; o.c == '[' {
				want = ']'
			}
			if c != want {
				o := open[len(open)-1]
				return fmt.Sprintf("the JSON object at byte %d breaks at byte %d: %q where the %q opened at byte %d needs %q",
					at, at+i, rune(c), rune(o.c), o.off, rune(want))
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				// scanObject read no further: a caller's mistake, not the line's.
				return fmt.Sprintf("the JSON object at byte %d could not be read", at)
			}
		}
	}
	o := open[len(open)-1]
	return fmt.Sprintf("the JSON object at byte %d is unfinished: the line ends (byte %d) with %d bracket(s) still open, the innermost %q from byte %d",
		at, len(line), len(open), rune(o.c), o.off)
}

// unfinished reports whether b is the start of a JSON value that its end
// cut short: well-formed as far as it goes, and open. A half-written record
// with a whole one appended after it is not: the two do not make one
// value's start. It reads b once with encoding/json's validating scanner,
// which copies nothing, so it is kept for a transcript's last line.
func unfinished(b []byte) bool {
	var se *json.SyntaxError
	err := json.Unmarshal(b, &struct{}{})
	return errors.As(err, &se) && se.Offset == int64(len(b))
}

func resync(line []byte, from int) int {
	for i := from; i < len(line); i++ {
		k := bytes.IndexByte(line[i:], '{')
		if k < 0 {
			return -1
		}
		i += k
		if opensRecord(line[i+1:]) {
			return i
		}
	}
	return -1
}

// opensRecord reports whether b (what follows a "{") starts with one of
// resyncKeys as a key.
func opensRecord(b []byte) bool {
	j := 0
	for j < len(b) && isSpace(b[j]) {
		j++
	}
	if j >= len(b) || b[j] != '"' {
		return false
	}
	end := StringEnd(b, j)
	if end < 0 || end-j > shortString {
		return false
	}
	key, ok := String(b[j:end])
	if !ok {
		return false
	}
	for end < len(b) && isSpace(b[end]) {
		end++
	}
	if end >= len(b) || b[end] != ':' {
		return false
	}
	for _, k := range resyncKeys {
		if string(key) == k {
			return true
		}
	}
	return false
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Names that parsers search for (keys, and values such as "tool_use") are
// at most nameBytes long. Written with escapes, such a name takes at most
// shortString bytes (six a character), and its first backslash comes within
// its first nameBytes bytes. Longer strings (contents, outputs) are never
// searched for a name, so only strings within both bounds are looked into.
const (
	nameBytes   = 32
	shortString = 6 * nameBytes
)

// wordBytes is how far into a string scanObject looks eight bytes at a
// time before IndexByte takes over: past the 36 bytes of a UUID. Measured
// on generated sessions, 48 was as fast as 32 on Codex's long strings
// and as 192 on Claude Code's ids.
const wordBytes = 48

// quickLook looks at the first bytes of the JSON string whose opening
// quote is at b[open] eight at a time, up to wordBytes past the quote, for a
// quote or a backslash: it returns where the first one is, with found, or
// where the look stopped (no quote or backslash before it), without. It is
// small enough to be compiled in line: a call per string cost more than the
// look (most strings, keys and ids, end within it).
func quickLook(b []byte, open int) (at int, found bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	j := open + 1
	for ; j+8 <= len(b) && j-open <= wordBytes; j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		q, s := x^('"'*ones), x^('\\'*ones)
		// A byte of q or s is zero where b holds the byte looked for; the
		// lowest flagged byte is exact.
		if m := ((q-ones)&^q | (s-ones)&^s) & highs; m != 0 {
			return j + bits.TrailingZeros64(m)/8, true
		}
	}
	return j, false
}

// scanObject returns the length of the JSON object at the start of b,
// tracking strings, escapes and nesting only. Short strings are read eight
// bytes at a time and longer ones skipped with IndexByte, so long string
// values (file contents, outputs) cost little. The offsets of the object's
// top-level keys are appended to keys; escaped says a string in it that
// could spell a name spells an ASCII character with a \u escape. Where its
// strings that start with MarkWord are is added to *m (kept in memory, not
// in the loop's registers: it is written seldom).
func scanObject(b []byte, keys []int, m *marks) (n int, ok bool, _ []int, escaped bool) {
	var stack [64]byte
	open := stack[:0] // the closers expected, innermost last
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Most strings are short and have no escapes: their bytes are
			// looked at eight at a time, in line (a call per string cost
			// more than the look), until a quote or a backslash. A string
			// with no backslash spells no name with an escape. Past
			// wordBytes (ids and keys fit; contents and outputs do not),
			// or near the end of the line, IndexByte takes over: it is
			// faster on long runs.
			if i+9 <= len(b) && binary.LittleEndian.Uint64(b[i+1:]) == markWord {
				// The string starts with MarkWord. (A string that does is
				// at least as long, so quickLook loads it again.)
				if m.n == 0 {
					m.first = i
				}
				m.n++
			}
			j, found := quickLook(b, i)
			if slow := !found || b[j] == '\\'; slow {
				// From j on, or from the first backslash: find the quote
				// no backslash escapes.
				for {
					k := bytes.IndexByte(b[j:], '"')
					if k < 0 {
						return 0, false, keys, escaped
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
				if j-i <= shortString && !escaped {
					escaped = hasUEscape(b[i+1 : j])
				}
			}
			// A string is followed by a colon (a key; at the top level,
			// one of the record's), a comma or a closer. Anything else is a
			// line cut inside a string with the next record glued on: its
			// quotes read inside out, which brackets alone can balance.
			// The colon or comma is stepped over here, so that the loop's
			// next byte is the next value or key; a closer is left for the
			// loop.
			c := j + 1
			if c < len(b) && b[c] <= ' ' {
				for c < len(b) && isSpace(b[c]) {
					c++
				}
			}
			next := c - 1
			if c < len(b) {
				switch b[c] {
				case ':':
					if len(open) == 1 {
						keys = append(keys, i)
					}
					next = c
				case ',':
					next = c
				case '}', ']':
				default:
					return 0, false, keys, escaped
				}
			}
			i = next
		case '{':
			open = append(open, '}')
		case '[':
			open = append(open, ']')
		case '}', ']':
			if len(open) == 0 || open[len(open)-1] != b[i] {
				return 0, false, keys, escaped
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return i + 1, true, keys, escaped
			}
		}
	}
	return 0, false, keys, escaped
}

// hasUEscape reports whether the inside of a JSON string spells a printable
// ASCII character with a \u escape (which Plain writes out).
func hasUEscape(s []byte) bool {
	for {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return false
		}
		if _, ok := plainEscape(s[k:]); ok {
			return true
		}
		if k+2 >= len(s) {
			return false
		}
		s = s[k+2:]
	}
}
