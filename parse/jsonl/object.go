package jsonl

import (
	"bytes"
	"encoding/binary"
	"iter"
	"strings"

	"github.com/agentsandbox/sandbox/internal/zerocopy"

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

// field is one top-level key of a JSON object and its value, as written.
type field struct{ key, val []byte }

// maxFields is how many fields an object keeps split: the objects read
// here have a dozen keys at most, and one with more (a hostile line can
// hold millions) is read on from where f stops for the keys not kept, so memory
// stays bounded by the line, never a multiple of it.
const maxFields = 64

// Object is the top-level fields of a JSON object, in order (a key written
// twice is there twice). The zero object has none: a value that is not an
// object (a string, an array, null) has no fields, as gjson finds none.
type Object struct {
	// The first fields are kept in the object itself (most objects here
	// have fewer): splitting one allocates nothing.
	fixed [8]field
	n     int     // fields kept in fixed
	more  []field // fields kept past fixed, up to maxFields in all
	all   []byte  // the object, when it has more fields than are kept
	rest  int     // where in all the first field not kept starts
}

// add keeps one more field, or notes where the fields not kept start.
func (o *Object) add(raw []byte, at int, f field) {
	switch {
	case o.n < len(o.fixed):
		o.fixed[o.n] = f
		o.n++
	case o.n+len(o.more) < maxFields:
		o.more = append(o.more, f)
	case o.all == nil:
		o.all, o.rest = raw, at
	}
}

// Fields splits a JSON object into its top-level fields. It stops at the
// first thing that is not JSON; what it found before is kept.
func Fields(raw []byte) Object {
	o, _ := fieldsAt(raw, SkipSpace(raw, 0))
	return o
}

// RawOf is Fields(raw).Raw(name): the value of the first field named name
// of the object raw, or nil.
func RawOf(raw []byte, name string) []byte {
	o := Fields(raw)
	return o.Raw(name)
}

// GetOf is Fields(raw).Get(name).
func GetOf(raw []byte, name string) gjson.Result {
	o := Fields(raw)
	return o.Get(name)
}

// fieldsAt splits the JSON object at raw[i] into its top-level fields and
// returns the offset just past it, or -1 (with the fields found before)
// where it is not JSON.
func fieldsAt(raw []byte, i int) (Object, int) {
	if i >= len(raw) || raw[i] != '{' {
		return Object{}, -1
	}
	var o Object
	end := walkFields(raw, SkipSpace(raw, i+1), func(at int, key, val []byte) bool {
		o.add(raw, at, field{key: key, val: val})
		return true
	})
	return o, end
}

// walkFields hands yield each field of the object whose first key (or
// closing brace) is at raw[i], with the offset of its key, while yield
// returns true. It returns the offset just past the object, or -1 where
// it is not JSON or yield stopped.
func walkFields(raw []byte, i int, yield func(at int, key, val []byte) bool) int {
	return walk(raw, i, false, yield)
}

// walk is walkFields; strict, it also requires each value to be one that
// JSON's grammar reads whole (see In), found in the same pass.
func walk(raw []byte, i int, strict bool, yield func(at int, key, val []byte) bool) int {
	for i < len(raw) && raw[i] == '"' {
		ke := StringEnd(raw, i)
		if ke < 0 {
			return -1
		}
		j := SkipSpace(raw, ke)
		if j >= len(raw) || raw[j] != ':' {
			return -1
		}
		j = SkipSpace(raw, j+1)
		ve := valueEnd(raw, j, strict)
		if ve <= j {
			return -1
		}
		if !yield(i, raw[i:ke], raw[j:ve]) {
			return -1
		}
		i = SkipSpace(raw, ve)
		if i >= len(raw) || raw[i] != ',' {
			break
		}
		i = SkipSpace(raw, i+1)
		if strict && (i >= len(raw) || raw[i] != '"') {
			return -1 // a comma and no key after it
		}
	}
	if i >= len(raw) || raw[i] != '}' {
		return -1
	}
	return i + 1
}

// Elem is one of the values gjson's ForEach goes through, with its fields
// when it is an object.
type Elem struct {
	Raw []byte
	Obj Object
}

// Each goes through what gjson's ForEach does: the values of an array or
// of an object, or a value that is neither itself. The objects among them
// are split into their fields as they are read (rather than skipped, then
// read again), one at a time: nothing is kept for the elements gone by.
func Each(raw []byte) iter.Seq[Elem] {
	return func(yield func(Elem) bool) {
		i := SkipSpace(raw, 0)
		if i >= len(raw) {
			return
		}
		switch raw[i] {
		case '{':
			walkFields(raw, SkipSpace(raw, i+1), func(_ int, _, val []byte) bool {
				return yield(Elem{Raw: val, Obj: Fields(val)})
			})
		case '[':
			i = SkipSpace(raw, i+1)
			for i < len(raw) && raw[i] != ']' {
				var o Object
				ve := -1
				if raw[i] == '{' {
					o, ve = fieldsAt(raw, i)
				}
				if ve < 0 {
					// Not an object, or not one as JSON writes it: found by
					// its nesting, and read as fields would read it alone.
					if ve = ValueEnd(raw, i); ve <= i {
						return
					}
					o = Fields(raw[i:ve])
				}
				if !yield(Elem{Raw: raw[i:ve], Obj: o}) {
					return
				}
				i = SkipSpace(raw, ve)
				if i >= len(raw) || raw[i] != ',' {
					return
				}
				i = SkipSpace(raw, i+1)
			}
		default:
			// A value that is neither, as gjson reads it: without the
			// white space around it. Not JSON at all: nothing.
			if v := Value(raw); v.Exists() {
				b := raw[i:]
				if len(v.Raw) <= len(b) && string(b[:len(v.Raw)]) == v.Raw {
					b = b[:len(v.Raw)]
				} else {
					b = []byte(v.Raw)
				}
				yield(Elem{Raw: b})
			}
		}
	}
}

// SkipSpace returns the offset of the first byte at or after b[i] that is
// not JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// ValueEnd returns the offset just past the JSON value starting at b[i]
// (an object or array by its nesting, strings skipped whole), or -1.
func ValueEnd(b []byte, i int) int { return valueEnd(b, i, false) }

// valueEnd is ValueEnd; strict, it returns -1 also for a value that JSON's
// grammar does not read whole (a literal that is not one, an object or
// array whose keys, commas or values are not JSON's), checked as its end
// is found, in one pass.
func valueEnd(b []byte, i int, strict bool) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		if strict {
			end, ok := nestedAt(b, i, 0)
			if !ok {
				return -1
			}
			return end
		}
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := StringEnd(b, j)
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
	if strict && !literal(b[i:j]) {
		return -1
	}
	return j
}

// KeyIs reports whether a key (with its quotes) names name, however it is
// spelled.
func KeyIs(key []byte, name string) bool {
	if len(key) == len(name)+2 && string(key[1:len(key)-1]) == name {
		return true
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return false
	}
	return gjson.ParseBytes(key).Str == name
}

// Raw returns the value of the first field named name (as gjson's Get
// finds it), or nil.
func (o *Object) Raw(name string) []byte {
	for _, f := range o.fixed[:o.n] {
		if KeyIs(f.key, name) {
			return f.val
		}
	}
	for _, f := range o.more {
		if KeyIs(f.key, name) {
			return f.val
		}
	}
	var found []byte
	if o.all != nil {
		walkFields(o.all, o.rest, func(_ int, key, val []byte) bool {
			if KeyIs(key, name) {
				found = val
				return false
			}
			return true
		})
	}
	return found
}

// Last returns the value of the last field named name (as a ForEach over
// the object that keeps the last finds it), or nil.
func (o *Object) Last(name string) []byte {
	var found []byte
	if o.all != nil {
		walkFields(o.all, o.rest, func(_ int, key, val []byte) bool {
			if KeyIs(key, name) {
				found = val
			}
			return true
		})
	}
	if found != nil {
		return found
	}
	for k := len(o.more) - 1; k >= 0; k-- {
		if KeyIs(o.more[k].key, name) {
			return o.more[k].val
		}
	}
	for k := o.n - 1; k >= 0; k-- {
		if KeyIs(o.fixed[k].key, name) {
			return o.fixed[k].val
		}
	}
	return nil
}

// Get is gjson's Get of a plain key: the first field named name, read by
// gjson. Its strings are copies (they may outlive the line).
func (o *Object) Get(name string) gjson.Result { return Value(o.Raw(name)) }

// Str returns the text of the first field named name when it is a string.
func (o *Object) Str(name string) (string, bool) { return Text(o.Raw(name)) }

// Is reports whether the first field named name is the string want (its
// .Str, as gjson reads it), without copying it.
func (o *Object) Is(name, want string) bool {
	v := o.Raw(name)
	if len(v) == len(want)+2 && v[0] == '"' && string(v[1:len(v)-1]) == want {
		return true
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	s, ok := Text(v)
	return ok && s == want
}

// Value reads a value as gjson does, or returns the empty result for none.
func Value(raw []byte) gjson.Result {
	if raw == nil {
		return gjson.Result{}
	}
	return gjson.ParseBytes(raw)
}

// Text returns the text of a JSON string value (a copy), exactly as gjson
// reads it, and whether raw is a string. Long strings are the common case
// (whole files): runs without escapes are copied whole.
func Text(raw []byte) (string, bool) {
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

// In returns the fields of the JSON object s, read in place: the values
// found are slices of s's bytes, for ValueIn (which must never write
// them). whole is false unless s is an object that JSON's grammar reads to
// its closing brace at the top level (keys, colons, commas, and each value
// a string, a nested object or array, or a literal JSON allows), with
// nothing but white space after it:
// inside damage gjson reads on its own way (it skips a missing comma, loses
// its place in a broken literal), and a reader that must give gjson's
// answer leaves such an object to gjson.
func In(s string) (o Object, whole bool) {
	raw := zerocopy.Bytes(s)
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return Object{}, false
	}
	end := walk(raw, SkipSpace(raw, i+1), true, func(at int, key, val []byte) bool {
		o.add(raw, at, field{key: key, val: val})
		return true
	})
	// Nothing may follow the object but white space: gjson reads on past a
	// closing brace that ends its input early.
	return o, end >= 0 && SkipSpace(raw, end) == len(raw)
}

// nestedAt reports whether the object or array at b[i] is one as JSON's
// grammar reads it, and where it ends: where it is not, gjson finds its end
// its own way. Strings are skipped whole (their content does not move an
// end), so a nested value costs a look at its structure only.
func nestedAt(b []byte, i, depth int) (int, bool) {
	if depth > 512 || i >= len(b) {
		return i, false
	}
	closer := byte('}')
	if b[i] == '[' {
		closer = ']'
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		if closer == '}' {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i = StringEnd(b, i); i < 0 {
				return i, false
			}
			if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = SkipSpace(b, i+1)
		}
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"':
			if i = StringEnd(b, i); i < 0 {
				return i, false
			}
		case '{', '[':
			var ok bool
			if i, ok = nestedAt(b, i, depth+1); !ok {
				return i, false
			}
		default:
			j := i
			for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
				j++
			}
			if !literal(b[i:j]) {
				return j, false
			}
			i = j
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		if b[i] == closer {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = SkipSpace(b, i+1)
	}
}

// literal reports whether b is true, false, null or a number as JSON
// writes them.
func literal(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	}
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

// ValueIn reads raw, a value found in s by In, as gjson reads it, without
// copying it: its Raw is a substring of s, and so is the text of a string
// without escapes (one with escapes is unescaped in runs, as Text does).
// gjson's Get on s would give the same but for its Index. A raw that is not
// in s is read by Value.
func ValueIn(s string, raw []byte) gjson.Result {
	text, ok := inside(s, raw)
	if raw == nil || !ok {
		return Value(raw)
	}
	if raw[0] != '"' {
		return gjson.Parse(text)
	}
	if len(raw) >= 2 && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return gjson.Result{Type: gjson.String, Raw: text, Str: text[1 : len(text)-1]}
	}
	str, _ := Text(raw)
	return gjson.Result{Type: gjson.String, Raw: text, Str: str}
}

// Within returns whether a string has bytes in b's memory: the strings a
// parser reading b in place must copy to keep (manifest.Op.OwnBorrowed).
// A nil or empty b holds none.
func Within(b []byte) func(string) bool { return zerocopy.Within(b) }

// inside returns the substring of s whose bytes raw views, when raw lies
// within s: a value In found, read as a string without a copy.
func inside(s string, raw []byte) (string, bool) { return zerocopy.Inside(s, raw) }

// Parse is gjson.Parse(s), the same result, with a string without escapes
// read in place by two IndexByte (gjson reads it a byte at a time): a
// record's short values (ids, times, paths) are most of what is read of it.
func Parse(s string) gjson.Result {
	if n := len(s); n >= 2 && s[0] == '"' && strings.IndexByte(s[1:], '"') == n-2 && strings.IndexByte(s, '\\') < 0 {
		return gjson.Result{Type: gjson.String, Raw: s, Str: s[1 : n-1]}
	}
	return gjson.Parse(s)
}

// Valid is gjson.Valid(s), the same answer. An object that In reads whole,
// with no control byte anywhere and every backslash starting an escape JSON
// allows, is valid without gjson's reading a byte at a time (a call's
// arguments hold whole patches); anything else is left to gjson.
func Valid(s string) bool {
	if _, whole := In(s); whole && control(zerocopy.Bytes(s)) < 0 && escapesValid(s) {
		return true
	}
	return gjson.Valid(s)
}

// escapesValid reports whether every backslash of s, read from the start,
// begins an escape JSON allows. In an object In reads whole every backslash
// is inside a string, so pairing them from the start pairs them as a
// reading of each string does.
func escapesValid(s string) bool {
	for {
		k := strings.IndexByte(s, '\\')
		if k < 0 {
			return true
		}
		if k+1 >= len(s) {
			return false
		}
		switch s[k+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s = s[k+2:]
		case 'u':
			if k+6 > len(s) {
				return false
			}
			for _, c := range []byte(s[k+2 : k+6]) {
				if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
					return false
				}
			}
			s = s[k+6:]
		default:
			return false
		}
	}
}

// Doc is a JSON text split by In once, for several Get on it.
type Doc struct {
	s     string
	o     Object
	whole bool
}

// docOf splits s, a JSON object, into its fields.
func docOf(s string) Doc {
	o, whole := In(s)
	return Doc{s: s, o: o, whole: whole}
}

// DocOfResult is DocOf(r.Raw), or a Doc that leaves every key to gjson
// when r is not an object.
func DocOfResult(r gjson.Result) Doc {
	if r.Type != gjson.JSON {
		return Doc{s: r.Raw}
	}
	return docOf(r.Raw)
}

// Get is gjson.Get(s, name) for a plain key of the object s (the same
// result but for its Index), found from In's fields and read by ValueIn,
// without splitting s again. A key not found, or a value that is not a
// string, is left to gjson: inside damage gjson's reading is its own. In an object that In
// reads whole, every value is read in place (an object or array as its
// Raw, as gjson gives it) and a key that is not there is nothing, as it is
// for gjson; a name that gjson would read as a path is left to it.
func (d *Doc) Get(name string) gjson.Result {
	if !d.whole || !plainName(name) {
		return gjson.Get(d.s, name)
	}
	return ValueIn(d.s, d.o.Raw(name))
}

// Each goes through the values of the array that the field name holds, as
// gjson's ForEach on Get(name) does, with each value's Doc. In a whole
// object the array was checked with it: Each (the package's) splits each
// object in it once, read in place. Otherwise each is read by gjson
// (DocOfResult). Each Doc is handed by value: a pointer to it would be one
// allocation each.
func (d *Doc) Each(name string, yield func(v gjson.Result, e Doc) bool) {
	raw := d.o.Raw(name)
	if !d.whole || !plainName(name) || len(raw) == 0 || raw[0] != '[' {
		d.Get(name).ForEach(func(_, v gjson.Result) bool {
			return yield(v, DocOfResult(v))
		})
		return
	}
	for el := range Each(raw) {
		e := Doc{o: el.Obj}
		e.s, _ = inside(d.s, el.Raw)
		v := gjson.Result{Type: gjson.JSON, Raw: e.s}
		if e.whole = el.Raw[0] == '{'; !e.whole {
			v = gjson.Parse(e.s)
		}
		if !yield(v, e) {
			return
		}
	}
}

// plainName reports whether name is a key as it is, not a gjson path (with
// its separators, wildcards, queries, modifiers or escapes).
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '.', '*', '?', '|', '#', '@', '\\', '!', '=', '<', '>', '%', '[', ']', '{', '}':
			return false
		}
	}
	return name != ""
}

// RawIn returns the first field name of the object s as written, a
// substring of s, when In finds it in a whole object.
func RawIn(s, name string) (string, bool) {
	o, whole := In(s)
	if !whole {
		return "", false
	}
	raw := o.Raw(name)
	if raw == nil {
		return "", false
	}
	return inside(s, raw)
}

// Field is r.Get(name) for a plain key of the object r, by Doc.Get: found
// without reading the values before it byte by byte, and unescaped in runs
// (a call's input and output, a tool result's content, hold whole patches,
// files and outputs). The result is gjson's, damaged JSON included
// (codex's FuzzField, claude's FuzzResultText); its Raw and Str are r.Raw's
// or fresh copies.
func Field(r gjson.Result, name string) gjson.Result {
	d := DocOfResult(r)
	return d.Get(name)
}
