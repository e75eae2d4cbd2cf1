package claude

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"github.com/tidwall/gjson"
)

// FuzzParse checks that no transcript, however damaged, makes the Claude
// parser panic, lose a line number, or make an op without a file.
func FuzzParse(f *testing.F) {
	golden.Seeds(f, "../../fixtures/corpus/claude/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse(context.Background(), bytes.NewReader(data), "f.jsonl", Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range res.Ops {
			if op.Provenance.Line < 1 || (op.Kind != manifest.KindShell && len(op.Paths) == 0) {
				t.Fatalf("bad op %+v", op)
			}
		}
	})
}

// turByForEach is readTur as it was: one gjson ForEach over the whole
// object, reading every value.
func turByForEach(tur gjson.Result) *turResult {
	t := &turResult{Result: tur}
	if !tur.IsObject() {
		return t
	}
	var seen [len(turNames)]bool
	tur.ForEach(func(k, v gjson.Result) bool {
		for i, n := range turNames {
			if k.Str == n && !seen[i] {
				seen[i], t.fields[i] = true, v
				break
			}
		}
		return true
	})
	return t
}

// FuzzReadTur checks readTur against the ForEach it replaces: on valid
// JSON every field it keeps has the same type, text, raw value and number;
// on anything else it does not panic.
func FuzzReadTur(f *testing.F) {
	for _, s := range []string{
		`{"type":"create","filePath":"/w/a.go","content":"package a\n","structuredPatch":[]}`,
		`{"filePath":"/w/a.go","oldString":"x","newString":"y\u00e9\"","originalFile":"x\ny\n","replaceAll":false,"userModified":false,"structuredPatch":[{"oldStart":1}]}`,
		`{"type":"text","file":{"filePath":"/w/b","content":"1\n2","numLines":2}}`,
		`{"agentId":"a1","content":[{"type":"text","text":"done"}],"agentId":"second"}`,
		`{"\u0065rror":"boom","edits":[{"old_string":"a","new_string":"b"}],"notebook_path":null}`,
		"{ \"filePath\" : \"/w/c\" , \"content\" : \"tab\\tend\" }",
		`"Error: string, not an object"`,
		`{"filePath":"cut short`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tur := gjson.Parse(raw)
		got := readTur(tur)
		if !gjson.Valid(raw) {
			return
		}
		want := turByForEach(tur)
		for i, n := range turNames {
			g, w := got.fields[i], want.fields[i]
			if g.Type != w.Type || g.Str != w.Str || g.Raw != w.Raw || g.Num != w.Num || g.Exists() != w.Exists() {
				t.Fatalf("%s in %q: %#v, ForEach gave %#v", n, raw, g, w)
			}
		}
	})
}
