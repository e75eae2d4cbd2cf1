package parse

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/parse/agent"
)

// byForEach is readRecord as it was: every field through a gjson ForEach,
// which parses each value to find the next key. readRecord must read the
// same.
func byForEach(line string) *agent.Record {
	r := agent.NewRecord()
	gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
		if key, ok := agent.KeyOf([]byte(k.Str)); ok {
			r.Set(key, v)
		}
		return true
	})
	return r
}

// sameRecord compares what two readings of a line give: the fields'
// types and values (not where gjson found them). For records glued on one
// line, readRecord reads the first (gjson's ForEach wanders into the next:
// a real session's line gave the type of the record after it), and for what
// is not JSON (a head cut short) each reading may see its own fields.
func sameRecord(t testing.TB, line string) {
	t.Helper()
	got := agent.NewRecord()
	readRecord(line, got)
	if !json.Valid([]byte(line)) {
		dec := json.NewDecoder(strings.NewReader(line))
		var first json.RawMessage
		if dec.Decode(&first) != nil || len(first) == 0 || first[0] != '{' {
			return
		}
		line = line[:dec.InputOffset()]
	}
	want := byForEach(line)
	if agent.Keys() < 15 {
		t.Fatalf("only %d keys declared: the agents' keys are missing", agent.Keys())
	}
	for i := range agent.Keys() {
		g, w := got.Get(agent.Key(i)), want.Get(agent.Key(i))
		if g.Type != w.Type || g.Raw != w.Raw || g.Str != w.Str || g.Num != w.Num {
			t.Fatalf("key %d of %.300q: got %v %q, ForEach gives %v %q", i, line, g.Type, g.Raw, w.Type, w.Raw)
		}
	}
}

// TestReadRecordSameAsForEach reads every line of the real and generated
// transcripts here, and the heads of each cut at every 997th byte, both
// ways.
func TestReadRecordSameAsForEach(t *testing.T) {
	var files []string
	for _, glob := range []string{"../fixtures/corpus/*/*", "../fixtures/sample/*", "../../shared/corpus/*/*", "../../shared/corpus/*/*/*"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	lines := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || len(data) == 0 || !strings.Contains(f, ".json") {
			continue
		}
		head := data[:min(len(data), 64<<10)]
		for cut := 1; cut < len(head); cut += 997 {
			eachLine(head[:cut], func(line string) { sameRecord(t, line) })
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 0 {
				sameRecord(t, string(line))
				lines++
			}
		}
	}
	if lines < 1000 {
		t.Fatalf("read %d lines of %d files: the transcripts were not found", lines, len(files))
	}
	t.Logf("%d lines of %d files", lines, len(files))
}

func FuzzReadRecord(f *testing.F) {
	for _, s := range []string{`{"type":"session_meta","payload":{"id":"x","cwd":"/w"},"timestamp":"2025-01-01T00:00:00Z"}`,
		`{"sessionId":"a","type":"user","type":"assistant","message":{"content":"hi"}}`, `{"t\u0079pe":"x", "id" : 3 ,"cwd":null}`,
		`{"$set":{"a":1},"projectHash":"p"}`, `{"id":"x","timestamp":"t"`, `{"a":[1,2,{"b":"}"}],"parentId":"\"q\""}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) { sameRecord(t, line) })
}

// TestHeadOwnsWhatItKeeps reads heads in place (no copy of their 64 KiB):
// what a head keeps (ids, the cwd) must be its own, not the reader's
// buffer, which the next read overwrites.
func TestHeadOwnsWhatItKeeps(t *testing.T) {
	for name, text := range map[string]string{
		"codex":  `{"timestamp":"2026-11-20T09:12:03Z","type":"session_meta","payload":{"id":"019e0001-0000-7000-8000-000000000001","cwd":"/workspace/a"}}` + "\n",
		"claude": `{"parentUuid":null,"sessionId":"5f0c1a2b-0000-4000-8000-000000000002","cwd":"/workspace/b","type":"user","timestamp":"2026-11-20T09:12:03Z"}` + "\n",
		"gemini": `{"sessionId":"g-1","projectHash":"abc","startTime":"2026-11-20T09:12:03Z"}` + "\n",
		"pi":     `{"type":"session","id":"p-1","cwd":"/workspace/c","timestamp":"2026-11-20T09:12:03Z"}` + "\n",
	} {
		buf := []byte(text)
		h := readHead(buf)
		kept := func() string { return strings.Join(append(append([]string{}, h.ids...), h.Cwd), "|") }
		before := strings.Clone(kept())
		for i := range buf {
			buf[i] = 'x'
		}
		if after := kept(); after != before || strings.Trim(before, "|") == "" {
			t.Fatalf("%s: read %q, then %q once the buffer was overwritten", name, before, after)
		}
	}
}
