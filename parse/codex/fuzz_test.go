package codex

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/parse/internal/golden"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// FuzzParse checks that no rollout, however damaged, makes the parser panic
// or lose its line numbers.
func FuzzParse(f *testing.F) {
	golden.Seeds(f, "../../fixtures/corpus/codex/*.jsonl", "../../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parse(context.Background(), bytes.NewReader(data), "f.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range res.Ops {
			if op.Provenance.Line < 1 {
				t.Fatalf("op without a line: %+v", op)
			}
		}
	})
}

// FuzzField checks field against gjson's Get, which it stands in for: the
// same type, text, raw value and number, whatever the object (escapes,
// duplicate keys, nesting, damage: what jsonl does not read whole goes
// to gjson) and the key.
func FuzzField(f *testing.F) {
	for _, s := range []string{
		`{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch","call_id":"c1"}`,
		`{"type":"function_call_output","call_id":"c1","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\n"}`,
		`{"type":"function_call_output","call_id":"c1","output":{"content":"x","success":true}}`,
		`{"output":[{"type":"input_text","text":"Script completed"}],"output":"second"}`,
		`{"\u0069nput":"\u00e9\ud83d\ude00 \"q\" \\ \/","input":1}`,
		`{ "arguments" : "{\"cmd\":\"ls\"}" , "x":null}`,
		"{\"input\":\"raw\ncontrol\",\"b\":2}",
		`{"input":"cut short`,
		`{"a":[1,{"input":"nested"}],"input":true}`,
		`{"input":-1.5e3}`,
		`{"a":tru"e","input":"x"}`, `{"a":1 "input":"x"}`, `{"a":1,,"input":"x"}`, "{\f\"input\":\"x\"}", `{"a":01,"input":"x"}`, `{"a":1},"input":"x"`,
	} {
		f.Add(s, "input")
		f.Add(s, "output")
		f.Add(s, "arguments")
	}
	f.Fuzz(func(t *testing.T, raw, name string) {
		if strings.ContainsAny(name, ".*?|#@\\!=<>%") {
			return // a gjson path, not a plain key
		}
		it := gjson.Parse(raw)
		got, want := jsonl.Field(it, name), it.Get(name)
		if got.Type != want.Type || got.Str != want.Str || got.Raw != want.Raw || got.Num != want.Num || got.Exists() != want.Exists() {
			t.Fatalf("Field(%q, %q) = %#v, gjson: %#v", raw, name, got, want)
		}
	})
}

// FuzzPayloadType checks payloadType against gjson's GetBytes, which it
// stands in for, on anything at all: its fast path reads only a prefix
// that gjson reads the same way, damaged or not after it.
func FuzzPayloadType(f *testing.F) {
	for _, s := range []string{
		`{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c"}`,
		` { "type" : "reasoning" , "summary":[]}`,
		`{"\u0074ype":"t\u00e9\"x","type":"second"}`,
		`{"name":"x","type":"later"}`,
		`{"type":1}`, `{"type":"cut`, `{"type":"ok"`, `["type"]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, pl []byte) {
		got, ok := payloadType(pl)
		want := gjson.GetBytes(pl, "type")
		if got != want.Str || ok != want.Exists() {
			t.Fatalf("payloadType(%q) = %q, %v; gjson: %q, %v", pl, got, ok, want.Str, want.Exists())
		}
		// In a record, the fast path reads from the payload's start to the
		// end of the line (FieldFrom): the same answer, or none.
		line := append(append([]byte(`{"timestamp":"t","type":"response_item","payload":`), pl...), "}\n"...)
		r := jsonl.NewReader(bytes.NewReader(line), "f")
		defer r.Close()
		rec, err := r.Next()
		if err != nil || rec.Line != 1 {
			return
		}
		if typ, exists, fast := payloadTypeFast(rec.FieldFrom("payload")); fast {
			if w, wok := payloadType(rec.Field("payload")); typ != w || exists != wok {
				t.Fatalf("in %q: from the payload's start %q, %v; from the payload %q, %v", line, typ, exists, w, wok)
			}
		}
	})
}
