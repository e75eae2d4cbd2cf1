package pi

import (
	"bytes"
	"encoding/binary"
	"iter"
	"strings"

	"github.com/tidwall/gjson"
)

// A tool call or result can hold whole files (a write's content, an edit's
// original and new content, a read's output). gjson finds a key by reading
// every byte before it, one at a time, and a call was looked into a dozen
// times; so an object is split into its top-level fields once, string
// values skipped with bytes.IndexByte, and only the values wanted are
// read. A value read is read as gjson reads it (gjson.ParseBytes of its
// bytes, or text, which unescapes as gjson does), so what a field means is
// unchanged; only the way to it is shorter.
//
// parse/gemini and parse/pi each hold this file, the same but for the
// package name and a method only one of them uses (last, is).

// field is one top-level key of a JSON object and its value, as written.
type field struct{ key, val []byte }

// maxFields is how many fields an object keeps split: the objects read
// here have a dozen keys at most, and one with more (a hostile line can
// hold millions) is read on from where f stops for the keys not kept, so memory
// stays bounded by the line, never a multiple of it.
const maxFields = 64

// object is the top-level fields of a JSON object, in order (a key written
// twice is there twice). The zero object has none: a value that is not an
// object (a string, an array, null) has no fields, as gjson finds none.
type object struct {
	f    []field
	all  []byte // the object, when it has more fields than f keeps
	rest int    // where in all the first field not kept starts
}

// fields splits a JSON object into its top-level fields. It stops at the
// first thing that is not JSON; what it found before is kept.
func fields(raw []byte) object {
	o, _ := fieldsAt(raw, skipSpace(raw, 0))
	return o
}

// fieldsAt splits the JSON object at raw[i] into its top-level fields and
// returns the offset just past it, or -1 (with the fields found before)
// where it is not JSON.
func fieldsAt(raw []byte, i int) (object, int) {
	if i >= len(raw) || raw[i] != '{' {
		return object{}, -1
	}
	o := object{f: make([]field, 0, 8)} // most objects here have fewer keys
	end := walkFields(raw, skipSpace(raw, i+1), func(at int, key, val []byte) bool {
		if len(o.f) < maxFields {
			o.f = append(o.f, field{key: key, val: val})
		} else if o.all == nil {
			o.all, o.rest = raw, at
		}
		return true
	})
	return o, end
}

// walkFields hands yield each field of the object whose first key (or
// closing brace) is at raw[i], with the offset of its key, while yield
// returns true. It returns the offset just past the object, or -1 where
// it is not JSON or yield stopped.
func walkFields(raw []byte, i int, yield func(at int, key, val []byte) bool) int {
	for i < len(raw) && raw[i] == '"' {
		ke := stringEnd(raw, i)
		if ke < 0 {
			return -1
		}
		j := skipSpace(raw, ke)
		if j >= len(raw) || raw[j] != ':' {
			return -1
		}
		j = skipSpace(raw, j+1)
		ve := valueEnd(raw, j)
		if ve <= j {
			return -1
		}
		if !yield(i, raw[i:ke], raw[j:ve]) {
			return -1
		}
		i = skipSpace(raw, ve)
		if i >= len(raw) || raw[i] != ',' {
			break
		}
		i = skipSpace(raw, i+1)
	}
	if i >= len(raw) || raw[i] != '}' {
		return -1
	}
	return i + 1
}

// elem is one of the values gjson's ForEach goes through, with its fields
// when it is an object.
type elem struct {
	raw []byte
	obj object
}

// each goes through what gjson's ForEach does: the values of an array or
// of an object, or a value that is neither itself. The objects among them
// are split into their fields as they are read (rather than skipped, then
// read again), one at a time: nothing is kept for the elements gone by.
func each(raw []byte) iter.Seq[elem] {
	return func(yield func(elem) bool) {
		i := skipSpace(raw, 0)
		if i >= len(raw) {
			return
		}
		switch raw[i] {
		case '{':
			walkFields(raw, skipSpace(raw, i+1), func(_ int, _, val []byte) bool {
				return yield(elem{raw: val, obj: fields(val)})
			})
		case '[':
			i = skipSpace(raw, i+1)
			for i < len(raw) && raw[i] != ']' {
				var o object
				ve := -1
				if raw[i] == '{' {
					o, ve = fieldsAt(raw, i)
				}
				if ve < 0 {
					// Not an object, or not one as JSON writes it: found by
					// its nesting, and read as fields would read it alone.
					if ve = valueEnd(raw, i); ve <= i {
						return
					}
					o = fields(raw[i:ve])
				}
				if !yield(elem{raw: raw[i:ve], obj: o}) {
					return
				}
				i = skipSpace(raw, ve)
				if i >= len(raw) || raw[i] != ',' {
					return
				}
				i = skipSpace(raw, i+1)
			}
		default:
			if value(raw).Exists() { // not JSON at all: nothing
				yield(elem{raw: raw})
			}
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the offset just past the JSON string starting at b[i],
// or -1 when it is not terminated.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		bs := 0
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1
		}
		j++
	}
}

// valueEnd returns the offset just past the JSON value starting at b[i]
// (an object or array by its nesting, strings skipped whole), or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
		j++
	}
	return j
}

// keyIs reports whether a key (with its quotes) names name, however it is
// spelled.
func keyIs(key []byte, name string) bool {
	if len(key) == len(name)+2 && string(key[1:len(key)-1]) == name {
		return true
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return false
	}
	return gjson.ParseBytes(key).Str == name
}

// raw returns the value of the first field named name (as gjson's Get
// finds it), or nil.
func (o object) raw(name string) []byte {
	for _, f := range o.f {
		if keyIs(f.key, name) {
			return f.val
		}
	}
	var found []byte
	if o.all != nil {
		walkFields(o.all, o.rest, func(_ int, key, val []byte) bool {
			if keyIs(key, name) {
				found = val
				return false
			}
			return true
		})
	}
	return found
}

// Get is gjson's Get of a plain key: the first field named name, read by
// gjson. Its strings are copies (they may outlive the line).
func (o object) Get(name string) gjson.Result { return value(o.raw(name)) }

// str returns the text of the first field named name when it is a string.
func (o object) str(name string) (string, bool) { return text(o.raw(name)) }

// is reports whether the first field named name is the string want (its
// .Str, as gjson reads it), without copying it.
func (o object) is(name, want string) bool {
	v := o.raw(name)
	if len(v) == len(want)+2 && v[0] == '"' && string(v[1:len(v)-1]) == want {
		return true
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	s, ok := text(v)
	return ok && s == want
}

// value reads a value as gjson does, or returns the empty result for none.
func value(raw []byte) gjson.Result {
	if raw == nil {
		return gjson.Result{}
	}
	return gjson.ParseBytes(raw)
}

// text returns the text of a JSON string value (a copy), exactly as gjson
// reads it, and whether raw is a string. Long strings are the common case
// (whole files): runs without escapes are copied whole.
func text(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return string(in), true // gjson keeps such a string as written
	}
	if s, ok := unescape(in); ok {
		return s, true
	}
	return gjson.ParseBytes(raw).Str, true
}

// unescape decodes the inside of a JSON string as gjson does (it stops at a
// control character or an unknown escape); ok is false for a \u escape,
// which is left to gjson.
func unescape(in []byte) (string, bool) {
	var sb strings.Builder
	sb.Grow(len(in))
	for {
		k := bytes.IndexByte(in, '\\')
		if k < 0 {
			k = len(in)
		}
		if c := control(in[:k]); c >= 0 {
			sb.Write(in[:c])
			return sb.String(), true
		}
		sb.Write(in[:k])
		if k+1 >= len(in) {
			return sb.String(), true
		}
		switch in[k+1] {
		case '\\', '/', '"':
			sb.WriteByte(in[k+1])
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			return "", false
		default:
			return sb.String(), true
		}
		in = in[k+2:]
	}
}

// control returns the index of the first byte below 0x20 in b, or -1,
// eight bytes at a time.
func control(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-0x20*ones)&^x&highs != 0 {
			break // one of these eight
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return -1
}
