package cursor

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParse reads a 32 MiB transcript of turns as Cursor CLI writes
// them: prompts, long assistant texts, reads and greps, and every
// twentieth call a Write or a StrReplace.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	text := strings.Repeat("The user wants the parser faster; reading the code first. ", 40)
	for i := 0; buf.Len() < 32<<20; i++ {
		switch {
		case i%20 == 0:
			fmt.Fprintf(&buf, `{"role":"assistant","message":{"content":[{"type":"text","text":"Writing."},{"type":"tool_use","name":"Write","input":{"path":"/w/app/src/f%d.go","contents":%q}}]}}`+"\n", i%50, strings.Repeat("func f() int { return 1 }\n", 60))
		case i%20 == 10:
			fmt.Fprintf(&buf, `{"role":"assistant","message":{"content":[{"type":"tool_use","name":"StrReplace","input":{"path":"/w/app/src/f%d.go","old_string":"return 1","new_string":"return %d"}}]}}`+"\n", i%50, i)
		case i%4 == 0:
			fmt.Fprintf(&buf, `{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\ngo on %d\n</user_query>"}]}}`+"\n", i)
		case i%4 == 1:
			fmt.Fprintf(&buf, `{"role":"assistant","message":{"content":[{"type":"text","text":%q},{"type":"tool_use","name":"Read","input":{"path":"/w/app/src/g%d.go"}}]}}`+"\n", text, i)
		default:
			fmt.Fprintf(&buf, `{"role":"assistant","message":{"content":[{"type":"text","text":%q},{"type":"tool_use","name":"Grep","input":{"pattern":"parse","path":"/w/app"}}]}}`+"\n", text)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := parse(context.Background(), bytes.NewReader(data), "/h/.cursor/projects/w-app/agent-transcripts/x.jsonl"); err != nil {
			b.Fatal(err)
		}
	}
}
