package jsonl

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestObject compares Fields and Each with gjson, whose reading they
// stand for: a key's first value (Get), its last (a ForEach that keeps the
// last), a string's text, the values a ForEach goes through, on objects with
// more fields than are kept split, keys written twice or with escapes,
// whitespace.
func TestObject(t *testing.T) {
	for _, doc := range seeds() {
		sameAsGJSON(t, doc)
		sameDoc(t, doc)
		sameParse(t, doc)
	}
}

// sameNum: equal, or both NaN (gjson reads "nan" as a number).
func sameNum(a, b float64) bool { return a == b || a != a && b != b }

// sameParse compares Parse with gjson's, on s and on each string in it
// as StringEnd finds it.
func sameParse(t *testing.T, s string) {
	t.Helper()
	for i := 0; i <= len(s); i++ {
		v := s[i:]
		if i < len(s) && s[i] == '"' {
			if e := StringEnd([]byte(s), i); e > i {
				v = s[i:e]
			}
		} else if i > 0 {
			continue
		}
		got, want := Parse(v), gjson.Parse(v)
		if got.Type != want.Type || got.Raw != want.Raw || got.Str != want.Str || !sameNum(got.Num, want.Num) || got.Exists() != want.Exists() {
			t.Fatalf("Parse(%.60q) = %#v, gjson: %#v", v, got, want)
		}
	}
}

// sameDoc compares a Doc's Get and Each with gjson's Get and ForEach, on
// any text at all (damaged, an object only in part, not one): a Doc reads
// in place only what gjson would read the same way.
func sameDoc(t *testing.T, doc string) {
	t.Helper()
	names := []string{"a", "b", "c", "content", "k5", "absent", "a.b", ""}
	gjson.Parse(doc).ForEach(func(k, _ gjson.Result) bool {
		if len(names) < 32 {
			names = append(names, k.Str)
		}
		return true
	})
	d := docOf(doc)
	same := func(what string, got, want gjson.Result) {
		t.Helper()
		if got.Type != want.Type || got.Raw != want.Raw || got.Str != want.Str || !sameNum(got.Num, want.Num) || got.Exists() != want.Exists() {
			t.Fatalf("%.60q: %s = %#v, gjson: %#v", doc, what, got, want)
		}
	}
	for _, n := range names {
		if strings.ContainsAny(n, ".*?|#@\\!=<>%[]{}") {
			continue // a gjson path, not a plain key
		}
		same(fmt.Sprintf("Get(%q)", n), d.Get(n), gjson.Get(doc, n))
		var got, want []gjson.Result
		d.Each(n, func(v gjson.Result, e Doc) bool {
			got = append(got, v)
			for _, m := range []string{"type", "a", "id", "absent"} {
				same(fmt.Sprintf("Each(%q)[%d].Get(%q)", n, len(got)-1, m), e.Get(m), v.Get(m))
			}
			return true
		})
		gjson.Get(doc, n).ForEach(func(_, v gjson.Result) bool {
			want = append(want, v)
			return true
		})
		if len(got) != len(want) {
			t.Fatalf("%.60q: Each(%q) gave %d values, gjson's ForEach %d", doc, n, len(got), len(want))
		}
		for i := range got {
			same(fmt.Sprintf("Each(%q)[%d]", n, i), got[i], want[i])
		}
	}
}

// FuzzObject: on any valid JSON, what Fields and Each find is what gjson
// finds.
func FuzzObject(f *testing.F) {
	for _, doc := range seeds() {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		sameDoc(t, doc)
		sameParse(t, doc)
		if got, want := Valid(doc), gjson.Valid(doc); got != want {
			t.Fatalf("Valid(%.60q) = %v, gjson: %v", doc, got, want)
		}
		if !gjson.Valid(doc) {
			Fields([]byte(doc)) // no panic on anything
			for range Each([]byte(doc)) {
			}
			return
		}
		sameAsGJSON(t, doc)
	})
}

func seeds() []string {
	var big strings.Builder
	big.WriteString("{ ")
	for i := 0; i < 3*maxFields; i++ {
		fmt.Fprintf(&big, `"k%d" : %d , `, i%100, i)
	}
	big.WriteString(`"\u006bx": "last" }`)
	return []string{
		big.String(),
		`{"a":1,"b":{"c":[1,2,{"d":"e"}]},"a":"two","\u0061":3}`,
		`[ {"a":1} , 2, "s", [3], {"a":{"b":1}} ]`,
		`{"a":"x\ty\u00e9\"q\"","b":"\ud83d\ude00"}`,
		`"just a string"`, `12`, `nonsense`, `{}`, `[]`,
		`{"content":[{"type":"tool_use","id":"t1","input":{"a":"x\ny"}}, "s", 3, [1], {"type":"text","a":[1]}],"a":{"b":1}}`,
		`{"content":[{"type":"x"} {"type":"y"}]}`, `{"content":[{"type":"x",}]}`, `{"content":[{"type":tru}]}`,
		`{"content":"text","a":-0.5e-3,"b":null}`, `{"a":"\q"}`, `{"a":"\u00zz"}`, `{"a":"\u00e9\\"}`, "{\"a\":\"x\ty\"}", "{\"a\":1}\n", "{\"content\":[{\"type\":\"a\tb\"}]}",
	}
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_$-]+$`)

func sameAsGJSON(t *testing.T, doc string) {
	t.Helper()
	names := []string{"a", "b", "k5", "k99", "kx", "k0", "absent"}
	gjson.Parse(doc).ForEach(func(k, _ gjson.Result) bool {
		// A plain key (the parsers ask for nothing else), not one that
		// gjson's path syntax would read as more than a name.
		if k.Type == gjson.String && plainKey.MatchString(k.Str) && len(names) < 32 {
			names = append(names, k.Str)
		}

		return true
	})
	o := Fields([]byte(doc))
	for _, n := range names {
		g := gjson.Get(doc, n)
		if got, want := string(o.Raw(n)), g.Raw; got != want {
			t.Errorf("%.40s: Raw(%q) = %q, want %q", doc, n, got, want)
		}
		if s, ok := o.Str(n); ok != (g.Type == gjson.String) || (ok && s != g.Str) {
			t.Errorf("%.40s: Str(%q) = %q, %v, want %q", doc, n, s, ok, g.Str)
		}
		var last string
		gjson.Parse(doc).ForEach(func(k, v gjson.Result) bool {
			if k.Str == n {
				last = v.Raw
			}
			return true
		})
		if gjson.Parse(doc).IsObject() && string(o.Last(n)) != last {
			t.Errorf("%.40s: Last(%q) = %q, want %q", doc, n, o.Last(n), last)
		}
	}
	var got, want []string
	for e := range Each([]byte(doc)) {
		got = append(got, string(e.Raw))
	}
	gjson.Parse(doc).ForEach(func(_, v gjson.Result) bool {
		want = append(want, v.Raw)
		return true
	})
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%.40s: Each %q, want %q", doc, got, want)
	}
}
