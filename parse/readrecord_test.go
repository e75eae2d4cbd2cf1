package parse

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// byForEach is readRecord as it was: every field through a gjson ForEach,
// which parses each value to find the next key. readRecord must read the
// same.
func byForEach(line string) record {
	var r record
	gjson.Parse(line).ForEach(func(k, v gjson.Result) bool {
		if f := r.field([]byte(k.Str)); f != nil {
			*f = v
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
	got := readRecord(line)
	if !json.Valid([]byte(line)) {
		dec := json.NewDecoder(strings.NewReader(line))
		var first json.RawMessage
		if dec.Decode(&first) != nil || len(first) == 0 || first[0] != '{' {
			return
		}
		line = line[:dec.InputOffset()]
	}
	want := byForEach(line)
	if reflect.TypeOf(got).NumField() != 15 {
		t.Fatal("record has new fields: compare them here")
	}
	g := []gjson.Result{got.typ, got.sessionID, got.parentUUID, got.recordType, got.id, got.timestamp, got.cwd, got.payload,
		got.snapshot, got.projectHash, got.set, got.rewindTo, got.startTime, got.message, got.parentID}
	w := []gjson.Result{want.typ, want.sessionID, want.parentUUID, want.recordType, want.id, want.timestamp, want.cwd, want.payload,
		want.snapshot, want.projectHash, want.set, want.rewindTo, want.startTime, want.message, want.parentID}
	for i := range g {
		if g[i].Type != w[i].Type || g[i].Raw != w[i].Raw || g[i].Str != w[i].Str || g[i].Num != w[i].Num {
			t.Fatalf("field %d of %.300q: got %v %q, ForEach gives %v %q", i, line, g[i].Type, g[i].Raw, w[i].Type, w[i].Raw)
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
		kept := func() string { return strings.Join([]string{h.claudeID, h.codexID, h.cwd, h.geminiID, h.piID}, "|") }
		before := strings.Clone(kept())
		for i := range buf {
			buf[i] = 'x'
		}
		if after := kept(); after != before || strings.Trim(before, "|") == "" {
			t.Fatalf("%s: read %q, then %q once the buffer was overwritten", name, before, after)
		}
	}
}
