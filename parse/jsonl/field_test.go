package jsonl

import (
	"fmt"
	"strings"
	"testing"
)

func TestField(t *testing.T) {
	for _, tc := range []struct {
		in, key, want string
	}{
		{`{"type":"user","timestamp":"t1"}`, "type", `"user"`},
		{`{ "type" : "user" , "timestamp" : "t1" }`, "timestamp", `"t1"`},
		{"{\"a\":{\"type\":\"x\"},\r \t\"type\":\"y\"}", "type", `"y"`},
		{`{"\u0074yp\u0065":"user"}`, "type", `"user"`},
		{`{"ty\"pe":"no","type":[1, {"b":2}] }`, "type", `[1, {"b":2}]`},
		{`{"type":"first","x":1,"type":"last"}`, "type", `"last"`}, // the last one counts
		{`{"payload":{"type":"nested"}}`, "type", ``},
		{`{"type":"a","payload":"{\"type\":\"in a string\"}"}`, "payload", `"{\"type\":\"in a string\"}"`},
		{`{}`, "type", ``},
	} {
		for name, rec := range map[string]Record{"reader": readOne(t, tc.in), "bare": {Data: []byte(tc.in)}} {
			if got := string(rec.Field(tc.key)); got != tc.want {
				t.Errorf("%s: Field(%s, %q) = %q, want %q", name, tc.in, tc.key, got, tc.want)
			}
			// FieldFrom is the same value followed by the rest of the record.
			from := string(rec.FieldFrom(tc.key))
			if !strings.HasPrefix(from, tc.want) || (from == "") != (tc.want == "") || !strings.HasSuffix(tc.in, from) {
				t.Errorf("%s: FieldFrom(%s, %q) = %q, want %q and the rest of the record", name, tc.in, tc.key, from, tc.want)
			}
		}
	}
}

func readOne(t *testing.T, line string) Record {
	t.Helper()
	rd := NewReader(strings.NewReader(line+"\n"), "t.jsonl")
	rec, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{`"plain"`: "plain", `"a\u00e9\/b\n"`: "aé/b\n", `"\ud83d\ude00"`: "😀"} {
		got, ok := String([]byte(in))
		if !ok || string(got) != want {
			t.Errorf("String(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`12`, `{"a":1}`, `"unterminated`, ``} {
		if _, ok := String([]byte(in)); ok {
			t.Errorf("String(%s) is a string", in)
		}
	}
}

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		`{"\u0074ool_us\u0065_id":"x"}`:     `{"tool_use_id":"x"}`,
		`{"a":"\u003cenv\u003e \/ \u00e9"}`: `{"a":"<env> \/ \u00e9"}`,    // only printable ASCII is spelled out
		`{"a":"\u0022\u005c\u001b"}`:        `{"a":"\u0022\u005c\u001b"}`, // a quote, a backslash, a control stay escaped
		`{"a":"\\u0074"}`:                   `{"a":"\\u0074"}`,            // an escaped backslash, then text
		`{"a":"\\\u0074"}`:                  `{"a":"\\t"}`,
		`{"a":"plain"}`:                     `{"a":"plain"}`,
		`{"a":"cut \u00`:                    `{"a":"cut \u00`,
	} {
		got, changed := Plain([]byte(in), nil)
		if string(got) != want || changed != (want != in) {
			t.Errorf("Plain(%s) = %s, %v; want %s", in, got, changed, want)
		}
	}
}

func TestEscapedFlag(t *testing.T) {
	for in, want := range map[string]bool{
		`{"type":"tool_use"}`:                                  false,
		`{"type":"\u0074ool_use"}`:                             true,
		`{"t\u0079pe":"x"}`:                                    true,
		`{"type":"text","text":"\u001b[1m bold"}`:              false, // a control character spells no name
		`{"text":"` + strings.Repeat("long ", 40) + `\u0074"}`: false, // no name is that long
	} {
		if got := readOne(t, in).Escaped; got != want {
			t.Errorf("Escaped(%.60s) = %v, want %v", in, got, want)
		}
	}
}

// A byte order mark starts a file without a warning, and CRLF line ends
// read as LF ones.
func TestBOMAndCRLF(t *testing.T) {
	got, rd := readAll(t, strings.NewReader("\ufeff{\"a\":1}\r\n{\"b\":2}\r\n\r\n{\"c\":3}\r\n"))
	if strings.Join(got, "|") != `{"a":1}|{"b":2}|{"c":3}` {
		t.Errorf("records = %q", got)
	}
	for _, w := range rd.Warnings() {
		if !strings.Contains(w.Message, "blank line") {
			t.Errorf("unexpected warning %v", w)
		}
	}
	// Only at the start of the file is it a byte order mark.
	got, rd = readAll(t, strings.NewReader("{\"a\":1}\n\ufeff{\"b\":2}\n"))
	if len(got) != 1 || len(rd.Warnings()) != 1 {
		t.Errorf("records %q, warnings %v", got, rd.Warnings())
	}
}

// Glued records each get their own keys.
func TestGluedKeys(t *testing.T) {
	rd := NewReader(strings.NewReader(`{"type":"a","x":1}{"y":2,"type":"b"}`+"\n"), "t.jsonl")
	for _, want := range []string{`"a"`, `"b"`} {
		rec, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := string(rec.Field("type")); got != want {
			t.Errorf("type = %s, want %s", got, want)
		}
	}
}

// After damage, reading resumes at a record however its first key is
// spelled.
func TestResyncSpellings(t *testing.T) {
	for _, whole := range []string{`{"type":"z"}`, `{ "type" : "z"}`, `{"t\u0079pe":"z"}`, "{\t\"uuid\":\"z\"}"} {
		got, _ := readAll(t, strings.NewReader(`{"timestamp":"x","payload":{"text":"half`+whole+"\n"))
		if len(got) != 1 || got[0] != whole {
			t.Errorf("%s: got %q", whole, got)
		}
	}
}

// refScan is scanObject with strings read a byte at a time: the length of
// the object, whether it is one, its top-level keys and whether a string
// short enough to spell a name holds a \u escape.
func refScan(b []byte) (n int, ok bool, keys []int, escaped bool, m marks) {
	var open []byte
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return 0, false, keys, escaped, m
			}
			if strings.HasPrefix(string(b[i+1:j]), MarkWord) {
				if m.n == 0 {
					m.first = i
				}
				m.n++
			}
			if j-i <= shortString && hasUEscape(b[i+1:j]) {
				escaped = true
			}
			c := j + 1
			for c < len(b) && isSpace(b[c]) {
				c++
			}
			if c < len(b) && !strings.ContainsRune(":,}]", rune(b[c])) {
				return 0, false, keys, escaped, m
			}
			if len(open) == 1 && c < len(b) && b[c] == ':' {
				keys = append(keys, i)
			}
			i = j
		case '{':
			open = append(open, '}')
		case '[':
			open = append(open, ']')
		case '}', ']':
			if len(open) == 0 || open[len(open)-1] != b[i] {
				return 0, false, keys, escaped, m
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return i + 1, true, keys, escaped, m
			}
		}
	}
	return 0, false, keys, escaped, m
}

func sameScan(t *testing.T, in []byte) {
	t.Helper()
	var m1 marks
	n1, ok1, k1, e1 := scanObject(in, nil, &m1)
	n2, ok2, k2, e2, m2 := refScan(in)
	if n1 != n2 || ok1 != ok2 || (ok1 && (fmt.Sprint(k1) != fmt.Sprint(k2) || e1 != e2 || m1 != m2)) {
		t.Fatalf("scanObject(%q) = %d, %v, %v, %v, %v; the byte scan says %d, %v, %v, %v, %v", in, n1, ok1, k1, e1, m1, n2, ok2, k2, e2, m2)
	}
}

// The word-at-a-time string scan finds the same ends, keys, escapes and
// marks as the byte one, on strings of every length around its window with
// quotes and backslashes anywhere, some of them starting with MarkWord.
func TestScanObjectStrings(t *testing.T) {
	alphabet := []string{"a", `"`, `\`, `\\`, `\"`, `\u0074`, "é", " "}
	for n := 0; n < shortString+2*nameBytes; n++ {
		for seed := 0; seed < 40; seed++ {
			var b strings.Builder
			b.WriteString(`{"k":"`)
			if seed%4 == 0 {
				b.WriteString(MarkWord)
			}
			x := uint32(seed*7919 + n)
			for i := 0; i < n; i++ {
				x = x*1664525 + 1013904223
				b.WriteString(alphabet[x>>29])
			}
			b.WriteString(`","z":1}`)
			sameScan(t, []byte(b.String()))
		}
	}
}

// FuzzScanObject is TestScanObjectStrings on any input.
func FuzzScanObject(f *testing.F) {
	f.Add([]byte(`{"a":"b\\\"c","d":[{"e":"\u0074"}],"f":"` + strings.Repeat("x", 300) + `"}`))
	f.Add([]byte(`{"k" :1, "s":"\"}`))
	f.Add([]byte(`{"m":{"content":[{"type":"tool_use","id":"t"},{"tool_use_id":"t","c":"tool_use"}]},"tool_use":"tool_us","x":"\"tool_use"}`))
	f.Add([]byte(`{"a":"tool_use`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 0 && in[0] == '{' {
			sameScan(t, in)
			if _, ok, _, _ := scanObject(in, nil, &marks{}); !ok {
				// Where a line breaks is told for every line that does.
				if msg := brokenObject(in, 0); strings.Contains(msg, "could not be read") {
					t.Fatalf("%q: %s", in, msg)
				}
			}
		}
	})
}

// A broken object is told where and how it breaks.
func TestBrokenObject(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"a":"bcd`, `the JSON object at byte 0 is unfinished: the string opened at byte 5 is still open where the line ends (byte 9)`},
		{`{"a":"b\"cd`, `the JSON object at byte 0 is unfinished: the string opened at byte 5 is still open where the line ends (byte 11)`},
		{`{"a":[1,{"b":2}`, `the JSON object at byte 0 is unfinished: the line ends (byte 15) with 2 bracket(s) still open, the innermost '[' from byte 5`},
		{`{"a":[1,2}`, `the JSON object at byte 0 breaks at byte 9: '}' where the '[' opened at byte 5 needs ']'`},
		{`{"a":"]"]`, `the JSON object at byte 0 breaks at byte 8: ']' where the '{' opened at byte 0 needs '}'`},
		// Cut inside a string, the next record glued on: its quotes are read
		// inside out, and the brackets still balance.
		{`{"type":"text","text":"Now I wil{"type":"x","n":{"a":"b"}}`, `the JSON object at byte 0 breaks at byte 34: 't' after the string opened at byte 22, where a colon, a comma or a closing bracket must be (a line cut inside a string, and the next record glued to it?)`},
	} {
		if _, ok, _, _ := scanObject([]byte(tc.line), nil, &marks{}); ok {
			t.Fatalf("%s: scanObject reads it whole", tc.line)
		}
		if got := brokenObject([]byte(tc.line), 0); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
	// Past other objects on the line, the offsets are the line's.
	_, problem, _, _, _ := split([]byte(`{"type":"a"} {"type":"b`), nil, nil)
	if want := "the JSON object at byte 13 is unfinished: the string opened at byte 21 is still open where the line ends (byte 23)"; problem != want {
		t.Errorf("split: %s, want %s", problem, want)
	}
}

func TestHead(t *testing.T) {
	long := `"` + strings.Repeat(`\u0041`, 5000) + `"`
	for _, tc := range []struct {
		raw  string
		n    int
		want string
		ok   bool
	}{
		{`"abc"`, 2, "ab", true},
		{`"a\nb"`, 10, "a\nb", true},
		{long, 3, "AAA", true},
		{`"` + strings.Repeat("x", 100) + `\n"`, 10, "xxxxxxxxxx", true},
		{`12`, 3, "", false},
	} {
		got, ok := Head([]byte(tc.raw), tc.n)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Head(%.20q, %d) = %q, %v", tc.raw, tc.n, got, ok)
		}
	}
}

// stringEndRef is StringEnd read byte by byte: the first quote after off
// that no backslash escapes.
func stringEndRef(data []byte, off int) int {
	for j := off + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// StringEnd's look at eight bytes at a time finds what a byte-by-byte read
// finds: a quote or a backslash at every place of the first words, and on
// either side of where the words end.
func TestStringEnd(t *testing.T) {
	for n := 0; n < 70; n++ {
		for _, mid := range []string{``, `\"`, `\\`, `\\\"`, `\u0022`, `\`} {
			for _, tail := range []string{`"`, `", "b":1}`, ``, `\"`, `x"` + strings.Repeat("y", 60) + `"`} {
				s := `"` + strings.Repeat("a", n) + mid + tail
				for _, pre := range []string{"", `{"k":`} {
					data := []byte(pre + s)
					off := len(pre)
					if got, want := StringEnd(data, off), stringEndRef(data, off); got != want {
						t.Fatalf("StringEnd(%q, %d) = %d, want %d", data, off, got, want)
					}
				}
			}
		}
	}
}

// FuzzStringEnd is TestStringEnd on any input.
func FuzzStringEnd(f *testing.F) {
	f.Add([]byte(`"ab\"cd\\"`), 0)
	f.Add([]byte(`{"timestamp":"2025-01-01T00:00:00Z","x":"\\\\\\""}`), 1)
	f.Fuzz(func(t *testing.T, data []byte, off int) {
		if off < 0 || off >= len(data) {
			return
		}
		if got, want := StringEnd(data, off), stringEndRef(data, off); got != want {
			t.Fatalf("StringEnd(%q, %d) = %d, want %d", data, off, got, want)
		}
	})
}
