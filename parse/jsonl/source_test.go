package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// longLines is a stream with lines around the sizes where a line is
// measured ahead (measuredLine) and gathered in blocks (keptLine), glued
// records, damage, and a last line with no newline.
func longLines() []byte {
	var b bytes.Buffer
	for i, n := range []int{10, measuredLine - 40, measuredLine + 1, 3 << 20, 10, keptLine + 5, 2 * blockSize, 100} {
		fmt.Fprintf(&b, `{"type":"line","n":%d,"s":"%s"}`+"\n", i, strings.Repeat("x", n))
		if i == 3 {
			fmt.Fprintf(&b, `{"type":"glued","s":"%s"}{"glued":2}`+"\n", strings.Repeat("g", 2<<20))
			fmt.Fprintf(&b, `{"type":"cut","s":"%s`+"\n", strings.Repeat("c", 2<<20))
		}
	}
	fmt.Fprintf(&b, `{"type":"last","s":"%s"}`, strings.Repeat("z", 3<<20))
	return b.Bytes()
}

// eachWith reads data with Each, the stream's bytes being src's from base on.
// eachMaxLine, when set, is the longest line eachWith's reader holds.
var eachMaxLine int64

func eachWith(t *testing.T, data []byte, src *bytes.Reader, base int64) (seen, []int) {
	t.Helper()
	rd := NewReader(bytes.NewReader(data), "t.jsonl")
	defer rd.Close()
	var s seen
	var spare []int // for each long record, its capacity past its length
	ctx := context.Background()
	if eachMaxLine > 0 {
		ctx = WithMaxLine(ctx, eachMaxLine)
	}
	if src != nil {
		ctx = WithSource(ctx, src, base)
	}
	err := rd.Each(ctx, func(rec Record) {
		s.Recs = append(s.Recs, recString(rec))
		if len(rec.Data) > measuredLine {
			spare = append(spare, cap(rec.Data)-len(rec.Data))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Warnings, s.Lines, s.Bytes = fmt.Sprint(rd.Warnings()), rd.Lines(), rd.Bytes()
	return s, spare
}

// TestSourceSizesLongLines: with the file to measure in, every long line
// is read into a buffer of its size (no spare capacity past a record that
// ends its line), and the records and warnings are those read without it.
func TestSourceSizesLongLines(t *testing.T) {
	data := longLines()
	want, _ := eachWith(t, data, nil, 0)
	got, spare := eachWith(t, data, bytes.NewReader(data), 0)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("with the source:\n%.3000v\nwithout:\n%.3000v", got, want)
	}
	if len(spare) != 6 {
		t.Fatalf("%d long records, want 6", len(spare))
	}
	for i, n := range spare {
		// The first is measured only if it is still being read past
		// measuredLine, not when its last read crosses it; the glued record
		// (the third) is followed on its line by another; the cut line is no
		// record. The others end their line.
		if i != 0 && i != 2 && n != 0 {
			t.Errorf("long record %d: %d bytes of capacity past it, want none", i, n)
		}
	}
	// The stream starting at byte 5 of the file.
	file := append([]byte("\n\n\n\n\n"), data...)
	if got, _ := eachWith(t, data, bytes.NewReader(file), 5); !reflect.DeepEqual(got, want) {
		t.Fatal("with a base offset: not the same records")
	}
}

// TestSourceThatDiffers: a file that is not what the stream reads (it
// changed under the reader, or the base is wrong) only sizes buffers
// wrongly; the records are still the stream's.
func TestSourceThatDiffers(t *testing.T) {
	data := longLines()
	want, _ := eachWith(t, data, nil, 0)
	for name, file := range map[string][]byte{
		"newlines everywhere": bytes.Repeat([]byte("\n"), len(data)),
		"no newline":          bytes.Repeat([]byte("x"), len(data)+keptLine),
		"shorter":             data[:len(data)/3],
		"empty":               nil,
	} {
		if got, _ := eachWith(t, data, bytes.NewReader(file), 0); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: not the same records", name)
		}
	}
	if got, _ := eachWith(t, data, bytes.NewReader(data), 1<<40); !reflect.DeepEqual(got, want) {
		t.Error("a base past the end: not the same records")
	}
}

// TestSourceRespectsMaxLine: a line past --max-line is not measured into a
// buffer (it is skipped unread), with or without the file.
func TestSourceRespectsMaxLine(t *testing.T) {
	eachMaxLine = 2 << 20
	defer func() { eachMaxLine = 0 }()
	data := longLines()
	want, _ := eachWith(t, data, nil, 0)
	got, _ := eachWith(t, data, bytes.NewReader(data), 0)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("with the source:\n%.3000v\nwithout:\n%.3000v", got, want)
	}
	if !strings.Contains(got.Warnings, "longer than --max-line") {
		t.Fatalf("no line skipped: %s", got.Warnings)
	}
}

// TestMappedLines reads long lines from a stream with nothing to measure
// them in, gathered in a mapping (bigBuf, on Linux) and in r.long and
// blocks (where no mapping can be made): the records, warnings and counts
// are the same either way, and the same as with the file to measure in; on
// Linux the mapping held each line past keptLine, and one grown past
// keptBig is let go when the next line starts.
func TestMappedLines(t *testing.T) {
	data := longLines()
	huge := make([]byte, keptLine+3*blockSize+7)
	for i := range huge {
		huge[i] = 'a' + byte(i%26)
	}
	data = append(data, "\n"+`{"type":"huge","s":"`+string(huge)+`"}{"glued":3}`+"\n"+`{"after":1}`+"\n"+`{"type":"huge2","s":"`+string(huge)+`"}`...)
	sized, _ := eachWith(t, data, bytes.NewReader(data), 0)
	mapped, _ := eachWith(t, data, nil, 0)
	defer func() { mapLines = true }()
	mapLines = false
	blocks, _ := eachWith(t, data, nil, 0)
	if !reflect.DeepEqual(mapped, blocks) || !reflect.DeepEqual(mapped, sized) {
		t.Fatalf("mapped, blocks and sized differ:\n%.2000v\n%.2000v\n%.2000v", mapped, blocks, sized)
	}
	if n := len(mapped.Recs); n < 4 || !strings.Contains(mapped.Recs[n-1], `{"type":"huge2"`) {
		t.Fatalf("last records %.200v", mapped.Recs[max(0, n-4):])
	}
	if runtime.GOOS != "linux" {
		return
	}
	mapLines = true
	rd := NewReader(bytes.NewReader(data), "t.jsonl")
	defer rd.Close()
	held := 0
	err := rd.Each(context.Background(), func(rec Record) {
		if len(rec.Data) > keptLine+blockSize { // past what r.long's capacity may hold
			if rd.big == nil || &rd.big.bytes()[0] != &rec.Data[0] && !bytes.Contains(rd.big.bytes(), rec.Data[:64]) {
				t.Errorf("line %d: a line of %d bytes is not in the mapping", rec.Line, len(rec.Data))
			}
			held++
		}
	})
	if err != nil || held != 2 {
		t.Fatalf("%d mapped lines, err %v", held, err)
	}
	if rd.big != nil {
		t.Errorf("the last line's mapping is still held after the end")
	}
}
