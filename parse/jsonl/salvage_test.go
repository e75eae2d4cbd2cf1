package jsonl

import (
	"bytes"
	"encoding/json"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest/shellcmd"
)

// TestNames: the files a lost line names are found in a Claude Code call,
// in a Codex call's arguments (JSON in a string), in an apply_patch text
// and in a pi call, however the line was cut.
func TestNames(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{`{"file_path":"unterminated`, nil},
		{`not json at all`, nil},
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":"/w/a \"q\".go","content":"xxx`, []string{`/w/a "q".go`}},
		{`{"payload":{"arguments":"{\"path\": \"/w/g.txt\", \"content\": \"...`, []string{"/w/g.txt"}},
		{`{"message":{"content":[{"type":"toolCall","name":"edit","arguments":{"path":"h.ts","oldText":"`, []string{"h.ts"}},
		{`{"toolUseResult":{"filePath":"/w/i.go","originalFile":"`, []string{"/w/i.go"}},
		{`{"type":"tool_use","name":"Bash","input":{"command":"cd sub && rm a.txt && sed -i s/x/y/ b.txt","description":"x`, []string{"sub/a.txt", "sub/b.txt"}},
		{`{"payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cat <<'EOF' > late.txt\\nhi\\nEOF\"],\"workdir\":\"/ws\"}"`, []string{"/ws/late.txt"}},
		{`{"payload":{"input":"*** Begin Patch\n*** Add File: caf\u00e9.txt\n+x\n*** Update File: C:\\w\\b.txt\n`, []string{"café.txt", `C:\w\b.txt`}},
		{`{"arguments":"{\"input\":\"*** Update File: caf\\u00e9.txt\\n`, []string{"café.txt"}},
	}
	for _, c := range cases {
		if got, unnamed := names([]byte(c.line)); !slices.Equal(got, c.want) || unnamed {
			t.Errorf("Names(%.60q) = %q, %v; want %q, false", c.line, got, unnamed, c.want)
		}
	}
}

// TestNamesCut: a lost call to a tool that writes, cut before or inside its
// path, command or patch header, is unnamed: it may have changed a file
// whose name is gone. A command cut short still names what its whole
// commands before the cut write (not the word the cut split). A call that
// cannot write, a result, or a call whose names are all whole is not.
func TestNamesCut(t *testing.T) {
	cases := []struct {
		line    string
		want    []string
		unnamed bool
	}{
		{`{"type":"tool_use","name":"Write","input":{"file_path":"/w/ab`, nil, true},
		{`{"type":"tool_use","name":"Write","input":{"file_pa`, nil, true},
		{`{"type":"tool_use","id":"toolu_1","na`, nil, true},
		{`{"type":"tool_use","id":"toolu_1","name":"Wri`, nil, true},
		{`{"type":"tool_use","name":"Bash","input":{"command":"sed -i s/a/b/ x.txt && rm y.t`, []string{"x.txt"}, true},
		{`{"type":"tool_use","name":"Bash","input":{"command":"cat > notes.md <<'EOF'\nline one\nline tw`, []string{"notes.md"}, true},
		{`{"payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"echo hi > a.txt; rm b.t`, []string{"a.txt"}, true},
		{`{"payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"echo hi > a\\u00e9.txt; rm b.t`, []string{"a\u00e9.txt"}, true},
		{`{"payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: src/ma`, nil, true},
		{`{"payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: src/main.go\n@@\n-a\n+b\n*** Add File: x/y`, []string{"src/main.go"}, true},
		{`{"payload":{"type":"function_call","name":"apply_patch","argu`, nil, true},
		{`{"type":"local_shell_call","action":{"type":"exec","comm`, nil, true},
		{`{"type":"toolCall","name":"write","arguments":{"path":"/p/q`, nil, true},
		// A cut command ending in an operator or a redirection with nothing
		// after it still names what its whole commands write.
		{`{"type":"tool_use","name":"Bash","input":{"command":"rm kept.txt &&`, []string{"kept.txt"}, true},
		{`{"type":"tool_use","name":"Bash","input":{"command":"echo hi > out.txt |`, []string{"out.txt"}, true},
		{`{"type":"tool_use","name":"Bash","input":{"command":"rm a.txt; echo hi > `, []string{"a.txt"}, true},
		// A workdir cut: the names it resolves are in doubt.
		{`{"payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"rm kept.txt\"],\"workdir\":\"/ws/su`, []string{"kept.txt"}, true},
		// apply_patch calls cut before their patch's end.
		{`{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Update File: src/b.go\\n@@\\n-x\\n+y\\n*** Add File: /abs/c.go\\n+z`, []string{"src/b.go", "/abs/c.go"}, true},
		{`{"payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Delete File: d.txt\n*** Update File: e.txt\n*** Move to: f.txt\n`, []string{"d.txt", "e.txt", "f.txt"}, true},
		{`{"payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Update File: a.txt\\n@@\",\"workdir\":\"/ws/sub\"`, []string{"/ws/sub/a.txt"}, true},
		// Cut inside a type that is, or holds, a call's.
		{`{"type":"assistant","message":{"content":[{"type":"too`, nil, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"resp`, nil, true},
		// Not unnamed.
		{`{"type":"user","message":{"content":[{"type":"tool_res`, nil, false},
		{`{"type":"summ`, nil, false},
		// Keys in a file's content name nothing: only a call's arguments held
		// in a string are searched inside.
		{`{"type":"tool_use","name":"Write","input":{"file_path":"/w/tasks.json","content":"{\"tasks\":[{\"command\":\"rm -rf dist && echo done > log.txt\",\"path\":\"/usr/local/lib/x`, []string{"/w/tasks.json"}, false},
		{`{"type":"tool_use","name":"Read","input":{"file_path":"/w/ab`, nil, false},
		{`{"type":"tool_use","name":"Bash","input":{"command":"ls -la","description":"li`, nil, false},
		{`{"type":"tool_use","name":"Bash","input":{"command":"echo x > k.txt","description":"li`, []string{"k.txt"}, false},
		{`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok`, nil, false},
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"I will now write`, nil, false},
		{`{"payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"do`, nil, false},
		{`{"payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"touch z.txt\"],\"timeout_ms\":10`, []string{"z.txt"}, false},
	}
	for _, c := range cases {
		got, unnamed := names([]byte(c.line))
		if !slices.Equal(got, c.want) || unnamed != c.unnamed {
			t.Errorf("Names(%q) = %q, %v; want %q, %v", c.line, got, unnamed, c.want, c.unnamed)
		}
	}
}

// FuzzNames: whatever the bytes, Names does not panic, and every name is
// one line of at most 4096 bytes, never empty, never repeated.
func FuzzNames(f *testing.F) {
	f.Add([]byte(`{"file_path":"/a","x":"{\"path\":\"b\"}","y":"*** Add File: c\n"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		names, _ := names(line)
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

// FuzzNamesCut: a call's line cut anywhere names no file that the whole
// line does not (a cut never invents a name from a split word or an
// escape cut in half; but a prefix of a script that does not parse, or
// that the reader finds vague (>A>()), may be read, and name what its
// whole commands write), the whole line is never unnamed, and a cut inside
// the path of a call to a tool that writes always is. Both a Claude Code
// call and a Codex call (its arguments JSON held in a string) are cut.
func FuzzNamesCut(f *testing.F) {
	f.Add("Write", "/w/a.txt", "echo hi > b.txt; rm c.txt", uint(60), false)
	f.Add("shell", "d \"q\".txt", "cat > e.txt <<'EOF'\nx\nEOF\nmv e.txt f\\u00e9.txt", uint(150), true)
	f.Add("Bash", "caf\u00e9", "sed -i s/a/b/ g.txt && cd sub && touch h.txt", uint(90), false)
	f.Fuzz(func(t *testing.T, tool, file, command string, cut uint, codex bool) {
		// The keys stand in the order the agents write them: the call's
		// type and tool before its input.
		q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		var line []byte
		if codex {
			args := `{"path":` + q(file) + `,"command":["bash","-lc",` + q(command) + `],"workdir":"/ws"}`
			line = []byte(`{"type":"response_item","payload":{"type":"function_call","name":` + q(tool) + `,"arguments":` + q(args) + `,"call_id":"c1"}}`)
		} else {
			line = []byte(`{"type":"tool_use","id":"t1","name":` + q(tool) + `,"input":{"file_path":` + q(file) + `,"command":` + q(command) + `,"content":"zzz"}}`)
		}
		whole, unnamed := names(line)
		if unnamed {
			t.Fatalf("the whole line %s is unnamed", line)
		}
		k := int(cut % uint(len(line)+1))
		got, unnamed := names(line[:k])
		for _, n := range got {
			if r := shellcmd.Parse(command); r.Err != nil || len(r.Vague) > 0 {
				break // a prefix of a script that does not parse, or is vague, may
			}
			// The cut may come before the workdir, which Codex's
			// arguments hold after the command.
			if !slices.Contains(whole, n) && !(codex && slices.Contains(whole, path.Join("/ws", n))) {
				t.Fatalf("cut at %d of %s names %q, which the whole line (%q) does not", k, line, n, whole)
			}
		}
		if !vocabulary.writeTools[strings.ToLower(tool)] || strings.ContainsAny(tool, `"\`) || len(whole) >= maxNames {
			return
		}
		key := []byte(`"file_path":"`)
		body := mustQuote(file, false)
		if codex {
			key = []byte(`\"path\":\"`)
			body = mustQuote(file, true)
			body = body[2 : len(body)-2]
		} else {
			body = body[1 : len(body)-1]
		}
		start := bytes.Index(line, key) + len(key)
		if k >= start && k <= start+len(body) && !unnamed {
			t.Fatalf("cut at %d inside the path of %s is not unnamed (names %q)", k, line, got)
		}
	})
}

// mustQuote is file as it stands quoted in the line: once, or, in JSON held
// in a string, twice (without the outer quotes of the second).
func mustQuote(file string, twice bool) []byte {
	b, _ := json.Marshal(file)
	if twice {
		b, _ = json.Marshal(string(b))
		b = b[1 : len(b)-1]
	}
	return b
}

// TestWholeWords: a cut script keeps its whole words, and loses the word the
// cut split and any operator or redirection left with nothing after it; an
// escaped blank or operator is part of a word.
func TestWholeWords(t *testing.T) {
	for in, want := range map[string]string{
		"rm a.txt b.t":          "rm a.txt",
		"rm a.txt &&":           "rm a.txt",
		"echo hi > ":            "echo hi",
		"echo hi > out.txt |":   "echo hi > out.txt",
		`>000\&&00`:             `>000\&`,
		`rm a\ b c`:             `rm a\ b`,
		`rm a\\ b`:              `rm a\\`,
		"cat > f <<'EOF'\nx\ny": "cat > f <<'EOF'\nx",
		"rm 000<0":              "rm",
		"echo x 2>":             "echo x",
		"echo x2>":              "echo x2",
		"single":                "",
	} {
		if got := wholeWords(in); got != want {
			t.Errorf("wholeWords(%q) = %q, want %q", in, got, want)
		}
	}
}
