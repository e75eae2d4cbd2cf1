package claude

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/golden"
)

// FuzzParse checks that no transcript, however damaged, makes the Claude
// parser panic, lose a line number, or make an op without a file.
func FuzzParse(f *testing.F) {
	golden.Fuzz(f, "f.jsonl", func(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
		return stream(ctx, r, file, Options{}, h)
	}, "../../fixtures/corpus/claude/*.jsonl")
}

// FuzzReadTur checks readTur against the ForEach it replaces: every field
// it keeps has the same type, text, raw value and number, whatever the
// object (damage jsonl does not read whole goes to the ForEach).
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
		`{"type":"create","filePath":"/w/a.txt" "content":"written\n"}`, `{"type":"create",,"content":"w"}`,
		"{\"type\":\"create\",\f\"content\":\"w\"}", `{"replaceAll":tru"e","content":"w"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tur := gjson.Parse(raw)
		got := readTur(tur)
		want := readTurForEach(tur)
		for i, n := range turNames {
			g, w := got.fields[i], want.fields[i]
			if g.Type != w.Type || g.Str != w.Str || g.Raw != w.Raw || g.Num != w.Num || g.Exists() != w.Exists() {
				t.Fatalf("%s in %q: %#v, ForEach gave %#v", n, raw, g, w)
			}
		}
	})
}

// resultTextByGet and headByGet are resultText and head as they were,
// every field through gjson's Get.
func resultTextByGet(b gjson.Result) string {
	c := b.Get("content")
	if c.Type == gjson.String {
		return c.Str
	}
	var sb strings.Builder
	c.ForEach(func(_, x gjson.Result) bool {
		if x.Get("type").Str == "text" {
			sb.WriteString(x.Get("text").Str)
		}
		return true
	})
	return sb.String()
}

func headByGet(b gjson.Result, n int) string {
	c := b.Get("content")
	if c.Type == gjson.String {
		if len(c.Raw) > 6*n+2 {
			return boundedHead(c.Raw, n)
		}
		if len(c.Str) > n {
			return c.Str[:n]
		}
		return c.Str
	}
	t := resultTextByGet(b)
	if len(t) > n {
		t = t[:n]
	}
	return t
}

// FuzzResultText checks the head and the text of a tool result, read by
// jsonl, against gjson's Get on any input, long contents (past the
// bounded head) included. Heads of 2048 bytes
// (read from 12 KiB) and of 8 (from 50 bytes, which the fuzzer reaches).
func FuzzResultText(f *testing.F) {
	long := strings.Repeat(`line \"quoted\" \u00e9\n`, 520) // past head's bounded 12 KiB
	short := `a\"b\\c\u00e9d\nefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV`
	for _, s := range []string{
		`{"type":"tool_result","tool_use_id":"t1","content":"File created successfully at: /w/a.go"}`,
		`{"type":"tool_result","content":[{"type":"text","text":"one"},{"type":"image"},{"type":"text","text":"two"}],"is_error":false}`,
		`{"tool_use_id":"t","content":"` + long + `"}`,
		`{"tool_use_id":"t","content":"` + short + `"}`,
		`{"\u0063ontent":"escaped key","is_error":true}`,
		`{"content":null}`, `{"content":42}`, `"not an object"`, `{"content":"cut`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		b := gjson.Parse(raw)
		h, h8, txt := head(b), headN(b, 8), resultText(b)
		if want := headByGet(b, 2048); h != want {
			t.Fatalf("head(%.80q) = %.80q, gjson: %.80q", raw, h, want)
		}
		if want := headByGet(b, 8); h8 != want {
			t.Fatalf("headN(%q, 8) = %q, gjson: %q", raw, h8, want)
		}
		if want := resultTextByGet(b); txt != want {
			t.Fatalf("resultText(%.80q) = %.80q, gjson: %.80q", raw, txt, want)
		}
	})
}
