package gemini

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestObject compares fields and each with gjson, whose reading they
// stand for: a key's first value (Get), its last (a ForEach that keeps the
// last), the values a ForEach goes through, on objects with more fields
// than are kept split, keys written twice or with escapes, whitespace.
func TestObject(t *testing.T) {
	var big strings.Builder
	big.WriteString("{ ")
	for i := 0; i < 3*maxFields; i++ {
		fmt.Fprintf(&big, `"k%d" : %d , `, i%100, i)
	}
	big.WriteString(`"\u006bx": "last" }`)
	docs := []string{
		big.String(),
		`{"a":1,"b":{"c":[1,2,{"d":"e"}]},"a":"two","\u0061":3}`,
		`[ {"a":1} , 2, "s", [3], {"a":{"b":1}} ]`,
		`"just a string"`, `12`, `nonsense`, `{}`, `[]`,
	}
	names := []string{"a", "b", "k5", "k99", "kx", "k0", "absent"}
	for _, doc := range docs {
		o := fields([]byte(doc))
		for _, n := range names {
			if got, want := string(o.raw(n)), gjson.Get(doc, n).Raw; got != want {
				t.Errorf("%.40s: raw(%q) = %q, want %q", doc, n, got, want)
			}
			var last string
			gjson.Parse(doc).ForEach(func(k, v gjson.Result) bool {
				if k.Str == n {
					last = v.Raw
				}
				return true
			})
			if gjson.Parse(doc).IsObject() && string(o.last(n)) != last {
				t.Errorf("%.40s: last(%q) = %q, want %q", doc, n, o.last(n), last)
			}
		}
		var got, want []string
		for e := range each([]byte(doc)) {
			got = append(got, string(e.raw))
		}
		gjson.Parse(doc).ForEach(func(_, v gjson.Result) bool {
			want = append(want, v.Raw)
			return true
		})
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%.40s: each %q, want %q", doc, got, want)
		}
	}
}
