package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// seen is what a Reader gave: every record as fn or Next saw it (its bytes
// copied), then its warnings, lines and bytes.
type seen struct {
	Recs     []string
	Warnings string
	Lines    int
	Bytes    int64
}

func recString(rec Record) string {
	var keys []string
	for k := range rec.keys {
		keys = append(keys, fmt.Sprint(rec.keys[k]))
	}
	return fmt.Sprintf("%d@%d last=%v esc=%v keys=%v nil=%v %s", rec.Line, rec.Offset, rec.Last, rec.Escaped,
		strings.Join(keys, ","), rec.keys == nil, rec.Data)
}

// nextAll hands fn every record Next returns, to the end of the input.
func nextAll(t *testing.T, rd *Reader, fn func(Record)) {
	t.Helper()
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(rec)
	}
}

func byNext(t *testing.T, r io.Reader) seen {
	t.Helper()
	rd := NewReader(r, "t.jsonl")
	defer rd.Close()
	var s seen
	nextAll(t, rd, func(rec Record) { s.Recs = append(s.Recs, recString(rec)) })
	s.Warnings, s.Lines, s.Bytes = fmt.Sprint(rd.Warnings()), rd.Lines(), rd.Bytes()
	return s
}

func byEach(t *testing.T, r io.Reader) seen {
	t.Helper()
	rd := NewReader(r, "t.jsonl")
	defer rd.Close()
	var s seen
	if err := rd.Each(context.Background(), func(rec Record) {
		// The reader goes on reading while fn runs: the record's bytes
		// (in a chunk the batch holds, or copied) must not move under it.
		before := recString(rec)
		runtime.Gosched()
		if after := recString(rec); after != before {
			t.Errorf("record changed during fn: %.200q, then %.200q", before, after)
		}
		s.Recs = append(s.Recs, before)
	}); err != nil {
		t.Fatal(err)
	}
	s.Warnings, s.Lines, s.Bytes = fmt.Sprint(rd.Warnings()), rd.Lines(), rd.Bytes()
	return s
}

// sameAsNext checks that Each, which reads ahead on another goroutine in
// batches, hands fn exactly the records Next returns, and leaves the same
// warnings, whatever sizes the input's reads return.
func sameAsNext(t *testing.T, data []byte) {
	t.Helper()
	want := byNext(t, bytes.NewReader(data))
	for name, r := range map[string]io.Reader{
		"whole": bytes.NewReader(data),
		"half":  iotest.HalfReader(bytes.NewReader(data)),
		"bytes": iotest.OneByteReader(bytes.NewReader(data)),
	} {
		if name == "bytes" && len(data) > 1<<20 {
			continue
		}
		if got := byEach(t, r); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Each gave\n%.2000v\nNext gave\n%.2000v", name, got, want)
		}
	}
}

func TestEachSameAsNext(t *testing.T) {
	var long bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&long, `{"type":"a","n":%d,"s":"%s"}`+"\n", i, strings.Repeat("x", i%300))
		if i%500 == 7 {
			// Lines longer than the read buffer, and than maxCopied.
			fmt.Fprintf(&long, `{"type":"big","s":"%s"}{"glued":1}`+"\n", strings.Repeat("y", 100<<10))
			fmt.Fprintf(&long, `{"type":"huge","s":"%s"}{"glued":2}{"glued":3}`+"\n", strings.Repeat("z", maxCopied+10))
			long.WriteString("not json\n\n\n\x00\x00{}\r\n" + `{"t\u0079pe":"esc"}` + "\n")
		}
	}
	long.WriteString(`{"cut":"off`)
	for name, data := range map[string]string{
		"empty":   "",
		"one":     `{"a":1}`,
		"damage":  "{\"a\":1}\n\n\nnot json\n{\"b\":\"x}{y\"}{\"c\":[1,{\"d\":2}]}\n\x00\x00\x00{\"e\":\"\\\"q\\\\\"}\r\n{\"f\":\"cut off",
		"blank":   "\n\n\n",
		"many":    long.String(),
		"nolast":  "{\"a\":1}\n{\"b\":2}",
		"damaged": "{\"a\":1}\n{\"b\":",
		"tiny":    strings.Repeat("{}\n", 3*maxBatch+5) + "{}{}{}\n" + strings.Repeat(`{"a":1}`+"\n", maxBatch),
	} {
		t.Run(name, func(t *testing.T) { sameAsNext(t, []byte(data)) })
	}
}

// A record is handed on before the reader waits for more input: a stream
// written live (a pipe from a running agent) is parsed as it comes.
func TestEachDoesNotHoldRecords(t *testing.T) {
	pr, pw := io.Pipe()
	rd := NewReader(pr, "t.jsonl")
	defer rd.Close()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() { done <- rd.Each(context.Background(), func(rec Record) { got <- string(rec.Data) }) }()
	if _, err := io.WriteString(pw, "{\"a\":1}\n{\"b\":2}\n{\"c\":"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"a":1}`, `{"b":2}`} {
		select {
		case g := <-got:
			if g != want {
				t.Fatalf("got %s, want %s", g, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not handed on while the input waits", want)
		}
	}
	io.WriteString(pw, "3}\n")
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != `{"c":3}` {
		t.Fatalf("got %s", g)
	}
}

// A cancelled context stops Each with its error, even at the end of input.
func TestEachCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var in strings.Builder
	for range 5000 {
		in.WriteString(`{"a":1}` + "\n")
	}
	rd := NewReader(strings.NewReader(in.String()), "t.jsonl")
	defer rd.Close()
	n := 0
	err := rd.Each(ctx, func(Record) {
		n++
		if n == 10 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || n >= 5000 {
		t.Fatalf("err %v after %d records", err, n)
	}
}

// A panic in fn stops the reader before it goes on.
func TestEachPanic(t *testing.T) {
	rd := NewReader(strings.NewReader(strings.Repeat(`{"a":1}`+"\n", 5000)), "t.jsonl")
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
		rd.Close()
	}()
	rd.Each(context.Background(), func(Record) { panic("boom") })
}
