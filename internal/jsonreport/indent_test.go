package jsonreport

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzIndentJSON: on any JSON, compacted as json.Marshal writes it,
// Indent writes what json.Indent writes.
func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":"x\"y\\"},[],{}],"c":{"d":null}}`, `"s"`, `12`,
		`[{"k":"a,b:{c}[d]"},true,false,-1.5e3]`, `{"a":"\u00e9\n","b":[[[]]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, in) != nil {
			return
		}
		for _, pi := range [][2]string{{"", "  "}, {"    ", "  "}, {"\t", ""}} {
			var want bytes.Buffer
			if err := json.Indent(&want, compact.Bytes(), pi[0], pi[1]); err != nil {
				t.Fatal(err)
			}
			if got := Indent(nil, compact.Bytes(), pi[0], pi[1]); !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("Indent(%q, %q, %q) =\n%s\nwant\n%s", compact.Bytes(), pi[0], pi[1], got, want.Bytes())
			}
		}
	})
}
