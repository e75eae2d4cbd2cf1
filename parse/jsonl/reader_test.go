package jsonl

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func readAll(t *testing.T, r io.Reader) ([]string, *Reader) {
	t.Helper()
	rd := NewReader(r, "t.jsonl")
	var out []string
	nextAll(t, rd, func(rec Record) { out = append(out, string(rec.Data)) })
	return out, rd
}

func TestDamage(t *testing.T) {
	in := `{"a":1}` + "\n" +
		"\n\n" +
		`not json` + "\n" +
		`{"b":"x}{y"}{"c":[1,{"d":2}]}` + "\n" +
		"\x00\x00\x00" + `{"e":"\"q\\"}` + "\r\n" +
		`{"f":"cut off`
	got, rd := readAll(t, strings.NewReader(in))
	want := []string{`{"a":1}`, `{"b":"x}{y"}`, `{"c":[1,{"d":2}]}`, `{"e":"\"q\\"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("records = %q, want %q", got, want)
	}
	var msgs []string
	for _, w := range rd.Warnings() {
		msgs = append(msgs, w.String())
	}
	for _, w := range []string{"t.jsonl:2: 2 blank lines from here", "t.jsonl:4: not a JSON object", "t.jsonl:5: 2 records glued on one line",
		"t.jsonl:6: 3 NUL bytes of padding", "t.jsonl:7: truncated last line"} {
		if !strings.Contains(strings.Join(msgs, "\n"), w) {
			t.Errorf("warnings %q lack %q", msgs, w)
		}
	}
	if rd.Lines() != 7 {
		t.Errorf("lines = %d", rd.Lines())
	}
}

// A crashed writer can leave half a record and then append a whole one on
// the same line: the whole one is still read.
func TestResync(t *testing.T) {
	got, _ := readAll(t, strings.NewReader(`{"timestamp":"x","payload":{"text":"half`+`{"timestamp":"y","type":"z"}`+"\n"))
	if len(got) != 1 || got[0] != `{"timestamp":"y","type":"z"}` {
		t.Errorf("got %q", got)
	}
}

// The last line is called truncated when the file ends inside a record,
// also when nested objects of it were read as records (after damage, an
// object that opens with "type" is read as one), and only then.
func TestTruncatedLastLine(t *testing.T) {
	for _, tc := range []struct {
		last      string
		truncated bool
	}{
		{`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell"}`, true},
		{`{"timestamp":"t","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"a"}],"enc`, true},
		{`{"timestamp":"t","payload":{"type":"x","a":[1,2`, true},
		{`{"a":1} {"timestamp":"t","pay`, true},
		// A whole record appended after half of one, as a crashed writer
		// leaves it: the file ends with a whole record.
		{`{"timestamp":"x","payload":{"text":"half{"timestamp":"y","type":"z"}`, false},
		{`not json {"type":"a"}`, false},
		{`{"type":"a"}`, false},
	} {
		for _, nl := range []string{"", "\n"} {
			_, rd := readAll(t, strings.NewReader(`{"type":"first"}`+"\n"+tc.last+nl))
			var ws []string
			for _, w := range rd.Warnings() {
				ws = append(ws, w.Message)
			}
			got := strings.HasPrefix(strings.Join(ws, "|"), "truncated last line")
			if got != tc.truncated {
				t.Errorf("%s (newline %v): warnings %q, truncated %v", tc.last, nl != "", ws, tc.truncated)
			}
		}
	}
}

func TestLongLine(t *testing.T) {
	big := `{"x":"` + strings.Repeat("a", 5<<20) + `"}`
	got, _ := readAll(t, strings.NewReader(`{"a":1}`+"\n"+big+"\n"+`{"b":2}`+"\n"))
	if len(got) != 3 || len(got[1]) != len(big) || got[2] != `{"b":2}` {
		t.Errorf("got %d records", len(got))
	}
}

// TestHugeLine reads lines longer than keptLine, which are gathered in
// blocks, whole and in order: with and without a final newline, and after a
// long line whose buffer is kept.
func TestHugeLine(t *testing.T) {
	body := make([]byte, keptLine+2*blockSize+12345)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	huge := `{"x":"` + string(body) + `"}`
	mid := `{"m":"` + strings.Repeat("b", keptLine-100) + `"}`
	for _, end := range []string{"\n", ""} {
		got, rd := readAll(t, strings.NewReader(mid+"\n"+huge+"\n"+`{"b":2}`+"\n"+huge+end))
		if len(got) != 4 || got[0] != mid || got[1] != huge || got[2] != `{"b":2}` || got[3] != huge {
			t.Fatalf("got %d records", len(got))
		}
		if w := rd.Warnings(); len(w) != 0 {
			t.Fatalf("warnings %v", w)
		}
	}
}

func TestDecompress(t *testing.T) {
	plain := `{"a":1}` + "\n"
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write([]byte(plain))
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write([]byte(plain))
	zw.Close()
	for name, data := range map[string][]byte{"plain": []byte(plain), "gzip": gz.Bytes(), "zstd": zs.Bytes()} {
		rc, err := Decompress(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		if string(got) != plain {
			t.Errorf("%s: got %q", name, got)
		}
	}
}

// A damaged line followed by more input must not be clobbered while the
// reader looks ahead for the end (regression: Peek refilled the buffer the
// line aliased).
func TestDamagedLineAtBufferEdge(t *testing.T) {
	var b strings.Builder
	for b.Len() < 3<<20 {
		b.WriteString(`{"k":"` + strings.Repeat("v", 1000) + `"}` + "\n")
		b.WriteString("oops\n")
	}
	got, rd := readAll(t, strings.NewReader(b.String()))
	for _, r := range got {
		if !strings.HasPrefix(r, `{"k":"vvv`) || !strings.HasSuffix(r, `vvv"}`) {
			t.Fatalf("clobbered record %.40q", r)
		}
	}
	for _, w := range rd.Warnings() {
		if w.Message != "not a JSON object: unexpected 'o' at byte 0" && !strings.HasPrefix(w.Message, "truncated last line") &&
			!strings.Contains(w.Message, "more warnings like the one before (last here: not a JSON object: unexpected 'o' at byte 0)") {
			t.Fatalf("unexpected warning %v", w)
		}
	}
}

// TestMaxLine skips a line longer than MaxLine without holding it, says
// which line it was, and reads on.
func TestMaxLine(t *testing.T) {
	input := `{"a":1}` + "\n" + `{"big":"` + strings.Repeat("x", 3<<20) + `"}` + "\n" + `{"b":2}` + "\n" + strings.Repeat("y", 1<<20)
	rd := NewReader(strings.NewReader(input), "t.jsonl")
	rd.maxLine = 64 << 10 // as Each would set it from WithMaxLine
	defer rd.Close()
	var got []string
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		got = append(got, string(rec.Data))
		if cap(rd.long) > int(rd.maxLine)+128<<10 {
			t.Fatalf("the reader holds %d bytes for one line", cap(rd.long))
		}
	}
	if fmt.Sprint(got) != `[{"a":1} {"b":2}]` {
		t.Errorf("records %v", got)
	}
	ws := rd.Warnings()
	if len(ws) != 2 || ws[0].Line != 2 || !strings.Contains(ws[0].Message, "longer than --max-line (65536 bytes): skipped") ||
		ws[1].Line != 4 || !strings.Contains(ws[1].Message, "1048576 bytes") {
		t.Errorf("warnings %v", ws)
	}
	if rd.Bytes() != int64(len(input)) {
		t.Errorf("read %d bytes of %d", rd.Bytes(), len(input))
	}
}

// TestWarningsPerKind keeps the first warnings of a kind and counts the
// rest: a million bad lines cost a constant.
func TestWarningsPerKind(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100000; i++ {
		b.WriteString("oops\n{\"ok\":1}\n")
	}
	_, rd := readAll(t, strings.NewReader(b.String()))
	ws := rd.Warnings()
	if len(ws) != keepPerKind+1 {
		t.Fatalf("%d warnings kept, want %d and a summary", len(ws), keepPerKind+1)
	}
	last := ws[len(ws)-1]
	if !strings.HasPrefix(last.Message, fmt.Sprintf("%d more warnings like the one before", 100000-keepPerKind)) || last.Line != 199999 {
		t.Errorf("summary %v", last)
	}
}
