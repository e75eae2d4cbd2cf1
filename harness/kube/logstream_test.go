package kube

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// kubeletLog is the log as the kubelet serves it with timestamps: each
// line its time and a space. Lines i and i+1 of same share a time.
func kubeletLog(texts []string, times []time.Time) string {
	var b strings.Builder
	for i, text := range texts {
		b.WriteString(times[i].Format(time.RFC3339Nano) + " " + text)
	}
	return b.String()
}

// cutReader gives s, then fails as a dropped connection does.
type cutReader struct{ r io.Reader }

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// since is what the kubelet gives from t on (the API's whole second).
func since(texts []string, times []time.Time, t time.Time) ([]string, []time.Time) {
	t = t.Truncate(time.Second)
	for i := range times {
		if !times[i].Before(t) {
			return texts[i:], times[i:]
		}
	}
	return nil, nil
}

// TestLineWriterResumes: a stream cut anywhere (within a line, between
// lines, among lines of one time) and opened again from the last line's
// second gives every line once, in order, and the last line without its
// newline when the stream ends.
func TestLineWriterResumes(t *testing.T) {
	var texts []string
	var times []time.Time
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range 40 {
		texts = append(texts, fmt.Sprintf("line %d\n", i))
		if i%5 != 3 { // lines 3 and 4, 8 and 9 … share a time
			at = at.Add(170 * time.Millisecond)
		}
		times = append(times, at)
	}
	texts[17] = strings.Repeat("long ", 20000) + "\n" // past the reader's buffer
	texts[39] = "no newline at the end"
	want := strings.Join(texts, "")
	full := kubeletLog(texts, times)

	for cut := 1; cut < len(full); cut += 97 {
		if got := cutAndResume(t, texts, times, cut); got != want {
			t.Fatalf("cut at byte %d: the log is not each line once:\n%.300q\nwant\n%.300q", cut, got, want)
		}
	}
}

// cutAndResume is what a lineWriter writes of the log of texts at times
// cut at byte cut, then read again from the last line's second to its end.
func cutAndResume(t *testing.T, texts []string, times []time.Time, cut int) string {
	t.Helper()
	var out bytes.Buffer
	lw := &lineWriter{w: &out}
	if err := lw.copy(&cutReader{strings.NewReader(kubeletLog(texts, times)[:cut])}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut at %d: %v", cut, err)
	}
	lw.reopened()
	rt, rs := texts, times
	if !lw.last.IsZero() {
		rt, rs = since(texts, times, lw.last)
	}
	if err := lw.copy(strings.NewReader(kubeletLog(rt, rs))); err != nil {
		t.Fatal(err)
	}
	lw.flush()
	return out.String()
}

// TestLineWriterCutTwice: a stream cut twice in the same second loses and
// repeats nothing.
func TestLineWriterCutTwice(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	texts := []string{"a\n", "b\n", "c\n", "d\n", "e\n"}
	times := []time.Time{at, at, at.Add(time.Millisecond), at.Add(time.Millisecond), at.Add(2 * time.Millisecond)}
	var out bytes.Buffer
	lw := &lineWriter{w: &out}
	full := kubeletLog(texts, times)
	stop := strings.Index(full, "b\n") + 2
	_ = lw.copy(&cutReader{strings.NewReader(full[:stop])})
	lw.reopened()
	full = kubeletLog(since(texts, times, lw.last))
	stop = strings.Index(full, "d\n") + 1 // within d's line
	_ = lw.copy(&cutReader{strings.NewReader(full[:stop])})
	lw.reopened()
	_ = lw.copy(strings.NewReader(kubeletLog(since(texts, times, lw.last))))
	lw.flush()
	if out.String() != "a\nb\nc\nd\ne\n" {
		t.Errorf("got %q", out.String())
	}
}

// TestStampedRefusesText: a line that only looks stamped is written whole.
func TestStampedRefusesText(t *testing.T) {
	for _, line := range []string{"plain text\n", "2026-12-04 10:00 not a stamp\n", "\n", strings.Repeat("x", 100) + " y\n"} {
		if _, text, ok := stamped([]byte(line)); ok || string(text) != line {
			t.Errorf("%q read as stamped", line)
		}
	}
	if ts, text, ok := stamped([]byte("2026-12-04T10:00:00.123456789Z hi\n")); !ok || string(text) != "hi\n" || ts.Nanosecond() != 123456789 {
		t.Errorf("a kubelet line: %v %q %v", ts, text, ok)
	}
}

// FuzzLineWriter: any output, with any times (lines sharing one, lines
// a second or more apart), cut at any byte and read again from the last
// line's second, is written whole, each line once, in order.
func FuzzLineWriter(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte{0, 0, 5}, uint16(3))
	f.Add([]byte("one\n\ntwo 2026-12-04T10:00:00Z three\nno newline"), []byte{200, 0, 1, 255}, uint16(40))
	f.Add([]byte(strings.Repeat("x", 70000)+"\ny\n"), []byte{1}, uint16(65000))
	f.Fuzz(func(t *testing.T, out, steps []byte, cut uint16) {
		texts := strings.SplitAfter(string(out), "\n")
		if texts[len(texts)-1] == "" {
			texts = texts[:len(texts)-1]
		}
		if len(texts) == 0 {
			return
		}
		var times []time.Time
		at := time.Date(2026, 12, 4, 10, 0, 0, 999_000_000, time.UTC)
		for i := range texts {
			if len(steps) > 0 {
				at = at.Add(time.Duration(steps[i%len(steps)]) * 7 * time.Millisecond)
			}
			times = append(times, at)
		}
		at0 := int(cut) % (len(kubeletLog(texts, times)) + 1)
		if got, want := cutAndResume(t, texts, times, at0), strings.Join(texts, ""); got != want {
			t.Fatalf("cut at %d:\n%.400q\nwant\n%.400q", at0, got, want)
		}
	})
}
