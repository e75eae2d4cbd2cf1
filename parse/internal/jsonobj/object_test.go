package jsonobj

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
	}
}

// FuzzObject: on any valid JSON, what Fields and Each find is what gjson
// finds.
func FuzzObject(f *testing.F) {
	for _, doc := range seeds() {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
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
