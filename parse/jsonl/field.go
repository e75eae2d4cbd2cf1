package jsonl

import (
	"bytes"
	"encoding/json"
	"strings"
)

// TrimBOM returns b without the UTF-8 byte order mark it may start with
// (some editors and Windows tools begin a UTF-8 file with one).
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, bom) }

// Marks returns where the record's strings that start with MarkWord are:
// the offset in Data of the first one's opening quote, and how many there
// are, counting keys and values at any depth. ok is false when the Reader
// did not scan the record (one made by hand): then only a search of Data
// tells.
func (r Record) Marks() (first, n int, ok bool) {
	return r.marks.first, r.marks.n, r.scanned
}

// Field returns the raw JSON value of the record's top-level key name, or
// nil when the record has no such key. Keys are compared by what they name,
// however they are spelled (escapes included), and whitespace around the
// value is not part of it. A key the record names twice counts once, the
// last time, as in JSON decoders and in a gjson ForEach over the record.
func (r Record) Field(name string) []byte {
	if data, keys, k, kend := r.lastKey(name); k >= 0 {
		if i, end := valueAfter(data, keys, k, kend); end > i {
			return data[i:end]
		}
	}
	return nil
}

// lastKey returns the record's bytes (up to its closing brace), its key
// offsets and the index among them of the last key named name, or -1;
// kend is the offset just past that key's closing quote where it is known
// without a search (a key written as name is), else -1.
func (r Record) lastKey(name string) (data []byte, keys []int, k, kend int) {
	data, keys = r.Data, r.keys
	if keys == nil {
		data, keys, _ = topKeys(r.Data)
	} else if !r.Escaped && wordName(name) {
		// The Reader found no \u escape in any string short enough to spell
		// name, and no other escape spells a letter, digit or '_': a key
		// names name only as it is written.
		for k := len(keys) - 1; k >= 0; k-- {
			if rest := data[keys[k]+1:]; len(rest) > len(name) && rest[len(name)] == '"' && string(rest[:len(name)]) == name {
				return data, keys, k, keys[k] + len(name) + 2
			}
		}
		return data, keys, -1, -1
	}
	for k := len(keys) - 1; k >= 0; k-- {
		if keyIs(data, keys[k], name) {
			return data, keys, k, -1
		}
	}
	return data, keys, -1, -1
}

// wordName reports whether name is letters, digits and '_' only: JSON
// spells any of these with no escape but \u.
func wordName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return len(name) <= nameBytes
}

// FieldFrom returns the record's bytes from the start of the raw value of
// its top-level key name (the last one named so, as Field finds it) to the
// end of the record, or nil when it has no such key: the value and what
// follows it. A parser that reads only the start of a value (its first
// key) takes this instead of Field, which finds the value's end by looking
// at the end of the record, in a line of kilobytes another cache line.
func (r Record) FieldFrom(name string) []byte {
	if data, keys, k, kend := r.lastKey(name); k >= 0 {
		if i := valueFrom(data, keys[k], kend); i >= 0 {
			return data[i:]
		}
	}
	return nil
}

// EachField calls fn with each top-level key of the record, in order, and
// the offsets in Data of its raw value (whitespace around it left out): the
// fields a one-pass read of the record needs, found from the key offsets
// the Reader kept, without scanning the values. name is the key as
// written, or its text when it holds escapes; it is valid during the call
// only. A key named twice is handed on twice: the last counts, as in a
// JSON decoder, when fn assigns what it reads. It returns false, having
// called fn for nothing, when Data does not start with a whole object (a
// line cut short): its keys cannot be told from its values.
func (r Record) EachField(fn func(name []byte, start, end int)) bool {
	data, keys := r.Data, r.keys
	if keys == nil {
		var ok bool
		if data, keys, ok = topKeys(r.Data); !ok {
			return false
		}
	}
	for k, off := range keys {
		kend := StringEnd(data, off)
		if kend < 0 {
			continue
		}
		name := data[off+1 : kend-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			s, ok := String(data[off:kend])
			if !ok {
				continue
			}
			name = s
		}
		if start, end := valueAfter(data, keys, k, kend); end > start {
			fn(name, start, end)
		}
	}
	return true
}

// topKeys finds the top-level keys of a record that was not read by a
// Reader, and returns it up to its closing brace; ok is false when data
// does not start with a whole object (after any white space).
func topKeys(data []byte) (obj []byte, keys []int, ok bool) {
	i := 0
	for i < len(data) && isSpace(data[i]) {
		i++ // white space before the object is not part of it
	}
	if i >= len(data) || data[i] != '{' {
		return data, nil, false
	}
	n, ok, keys, _ := scanObject(data[i:], nil, new(marks))
	if !ok {
		return data, nil, false
	}
	for k := range keys {
		keys[k] += i
	}
	// What follows the closing brace (a record glued after) is not part of
	// the last value.
	return data[:i+n], keys, true
}

// keyIs reports whether the key string at data[off] names name.
func keyIs(data []byte, off int, name string) bool {
	rest := data[off+1:]
	if len(rest) > len(name) && rest[len(name)] == '"' && string(rest[:len(name)]) == name {
		return true // the common spelling: no escapes
	}
	end := StringEnd(data, off)
	if end < 0 || bytes.IndexByte(data[off:end], '\\') < 0 {
		return false
	}
	s, ok := String(data[off:end])
	return ok && string(s) == name
}

// StringEnd returns the offset just past the JSON string starting at
// data[off], or -1 when it is not terminated.
func StringEnd(data []byte, off int) int {
	// Keys and ids are short: their first bytes are looked at as the scan
	// does (quickLook; a call to IndexByte costs more than the look). A
	// backslash sends the search below from the string's start; none, past
	// the bytes looked at, from where they end.
	j, found := quickLook(data, off)
	if found {
		if data[j] == '"' {
			return j + 1
		}
		j = off + 1
	}
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		bs := 0
		for m := j - 1; m > off && data[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1
		}
		j++
	}
}

// valueFrom returns the offset of the value of the key at data[key], or
// -1; the key's string ends at kend (just past its closing quote), or, for
// kend < 0, where a search finds its end.
func valueFrom(data []byte, key, kend int) int {
	i := kend
	if i < 0 {
		i = StringEnd(data, key)
	}
	if i < 0 {
		return -1
	}
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	i++
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// valueAfter returns the offsets of the raw value of the k-th key of keys
// (end <= start when there is none); the key's string ends at kend, or,
// for kend < 0, where a search finds its end (valueFrom).
func valueAfter(data []byte, keys []int, k, kend int) (start, end int) {
	i := valueFrom(data, keys[k], kend)
	if i < 0 {
		return 0, 0
	}
	// The value ends before the separator of the next key, or before the
	// record's closing brace.
	end = len(data) - 1
	if k+1 < len(keys) {
		end = keys[k+1]
		for end > i && isSpace(data[end-1]) {
			end--
		}
		if end > i && data[end-1] == ',' {
			end--
		}
	}
	for end > i && isSpace(data[end-1]) {
		end--
	}
	return i, end
}

// String returns the text of the JSON string raw (with its quotes), and
// whether raw is one. The text aliases raw unless the string holds escapes.
func String(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return in, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// Canonical writes a JSON value the one way its meaning allows: compact,
// keys sorted (a key named twice keeps its last value), strings with only
// the escapes JSON requires, numbers as written. What is quoted from a value
// that is not a string (a timeline's target, an outcome's evidence) then
// reads the same whoever wrote the transcript. Text that is not JSON is
// returned as it is.
func Canonical(raw string) string {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Plain returns data with each \u escape of a printable ASCII character
// (other than the quote and the backslash, which must stay escaped) written
// as the character itself: the same JSON, in which every name made of such
// characters ("type", "tool_use_id", "<environment_context>") is spelled
// the one way a byte search looks for. When nothing needs rewriting it
// returns data itself and false; otherwise it appends the result to buf[:0]
// and returns it and true (so a caller that reuses its buffer never writes
// into data).
func Plain(data, buf []byte) ([]byte, bool) {
	first := -1
	for i := 0; ; {
		k := bytes.IndexByte(data[i:], '\\')
		if k < 0 {
			break
		}
		i += k
		if _, ok := plainEscape(data[i:]); ok {
			first = i
			break
		}
		i += 2 // an escape is at least two bytes: skip the escaped one
		if i >= len(data) {
			break
		}
	}
	if first < 0 {
		return data, false
	}
	out := append(buf[:0], data[:first]...)
	for i := first; i < len(data); {
		k := bytes.IndexByte(data[i:], '\\')
		if k < 0 {
			out = append(out, data[i:]...)
			break
		}
		out = append(out, data[i:i+k]...)
		i += k
		if c, ok := plainEscape(data[i:]); ok {
			out = append(out, c)
			i += 6
			continue
		}
		n := 2
		if i+n > len(data) {
			n = len(data) - i
		}
		out = append(out, data[i:i+n]...)
		i += n
	}
	return out, true
}

// plainEscape decodes a \u escape at the start of b that stands for a
// printable ASCII character other than '"' and '\'.
func plainEscape(b []byte) (byte, bool) {
	if len(b) < 6 || b[1] != 'u' || b[2] != '0' || b[3] != '0' {
		return 0, false
	}
	hi, lo := unhex(b[4]), unhex(b[5])
	if hi < 0 || lo < 0 {
		return 0, false
	}
	c := byte(hi<<4 | lo)
	if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
		return 0, false
	}
	return c, true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Head returns at most the first n bytes of the text of the JSON string raw
// (with its quotes), unescaping only a bounded prefix of it: tool outputs
// can be megabytes, and what decides an outcome is at their start. The
// bound is on the text, not on its spelling (a character may take six bytes
// as an escape), so every spelling of a string gives the same head. ok is
// false when raw is not a string.
func Head(raw []byte, n int) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if len(raw) <= 6*n+2 {
		s, ok := String(raw)
		if len(s) > n {
			s = s[:n]
		}
		return string(s), ok
	}
	// The quote and n characters of at most six bytes each; cut before an
	// escape the cut would split (the last backslash that starts one).
	cut := 6*n + 1
	if k := bytes.LastIndexByte(raw[cut-6:cut], '\\'); k >= 0 {
		k += cut - 6
		bs := 0
		for m := k; m > 0 && raw[m] == '\\'; m-- {
			bs++
		}
		size := 2
		if k+1 < len(raw) && raw[k+1] == 'u' {
			size = 6
		}
		if bs%2 == 1 && k+size > cut {
			cut = k
		}
	}
	buf := make([]byte, 0, cut+1)
	buf = append(append(buf, raw[:cut]...), '"')
	s, ok := String(buf)
	if len(s) > n {
		s = s[:n]
	}
	return string(s), ok
}
