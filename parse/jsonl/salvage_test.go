package jsonl

import (
	"slices"
	"testing"
)

// TestNames: the files a lost line names are found in a Claude Code call,
// in a Codex call's arguments (JSON in a string), in an apply_patch text
// and in a pi call, however the line was cut.
func TestNames(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":"/w/a \"q\".go","content":"xxx`, []string{`/w/a "q".go`}},
		{`{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Update File: src/b.go\\n@@\\n-x\\n+y\\n*** Add File: /abs/c.go\\n+z`, []string{"src/b.go", "/abs/c.go"}},
		{`{"payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Delete File: d.txt\n*** Update File: e.txt\n*** Move to: f.txt\n`, []string{"d.txt", "e.txt", "f.txt"}},
		{`{"payload":{"arguments":"{\"path\": \"/w/g.txt\", \"content\": \"...`, []string{"/w/g.txt"}},
		{`{"message":{"content":[{"type":"toolCall","name":"edit","arguments":{"path":"h.ts","oldText":"`, []string{"h.ts"}},
		{`{"toolUseResult":{"filePath":"/w/i.go","originalFile":"`, []string{"/w/i.go"}},
		{`{"type":"tool_use","name":"Bash","input":{"command":"cd sub && rm a.txt && sed -i s/x/y/ b.txt","description":"x`, []string{"sub/a.txt", "sub/b.txt"}},
		{`{"payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cat <<'EOF' > late.txt\\nhi\\nEOF\"],\"workdir\":\"/ws\"}"`, []string{"/ws/late.txt"}},
		{`{"payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Update File: a.txt\\n@@\",\"workdir\":\"/ws/sub\"`, []string{"/ws/sub/a.txt"}},
		{`{"payload":{"input":"*** Begin Patch\n*** Add File: caf\u00e9.txt\n+x\n*** Update File: C:\\w\\b.txt\n`, []string{"café.txt", `C:\w\b.txt`}},
		{`{"arguments":"{\"input\":\"*** Update File: caf\\u00e9.txt\\n`, []string{"café.txt"}},
		{`{"file_path":"unterminated`, nil},
		{`not json at all`, nil},
	}
	for _, c := range cases {
		if got := Names([]byte(c.line)); !slices.Equal(got, c.want) {
			t.Errorf("Names(%.60q) = %q, want %q", c.line, got, c.want)
		}
	}
}

// FuzzNames: whatever the bytes, Names does not panic, and every name is
// one line of at most 4096 bytes, never empty, never repeated.
func FuzzNames(f *testing.F) {
	f.Add([]byte(`{"file_path":"/a","x":"{\"path\":\"b\"}","y":"*** Add File: c\n"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		names := Names(line)
		if len(names) > maxNames {
			t.Fatalf("%d names", len(names))
		}
		seen := map[string]bool{}
		for _, n := range names {
			if n == "" || len(n) > 4096 || seen[n] {
				t.Fatalf("bad or repeated name %q", n)
			}
			seen[n] = true
		}
	})
}
