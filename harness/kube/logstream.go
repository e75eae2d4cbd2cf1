package kube

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// streamPatience is how long a cut output stream is tried again without
// a line coming before the harness gives up on it (the run and its exit
// record go on without it).
const streamPatience = 2 * time.Minute

// stream copies the agent's output (stdout and stderr, as the kubelet
// keeps them) to w until the container ends. A stream cut before that (the
// API server restarted, a proxy or the network dropped the connection) is
// opened again from the time of the last line written: the kubelet gives
// every line its time, so the lines already written are skipped and each
// line is in the log once.
func (k *session) stream(ctx context.Context, pod string, w io.Writer) {
	lw := &lineWriter{w: w}
	gaveUp := time.Now().Add(streamPatience)
	for wait := poll; ; wait = min(2*wait, 5*time.Second) {
		opts := &corev1.PodLogOptions{Container: agentName, Follow: true, Timestamps: true}
		if !lw.last.IsZero() {
			// The API sends whole seconds: the lines of that second
			// before the last one are skipped by lineWriter.
			since := metav1.NewTime(lw.last)
			opts.SinceTime = &since
		}
		rc, err := k.cs.CoreV1().Pods(k.namespace).GetLogs(pod, opts).Stream(ctx)
		if err == nil {
			before := lw.lines
			err = lw.copy(rc)
			_ = rc.Close()
			if lw.lines > before {
				gaveUp, wait = time.Now().Add(streamPatience), poll
			}
			if err == nil && k.agentEnded(ctx, pod) {
				// The end of a stream of a container that has ended is
				// the end of its output, the last line's newline or not.
				lw.flush()
				return
			}
		}
		switch {
		case apierrors.IsNotFound(err) || ctx.Err() != nil:
			lw.flush()
			return
		case time.Now().After(gaveUp):
			lw.flush()
			fmt.Fprintf(w, "sandbox: the pod's output could not be read on (the rest is in the pod's log until the pod goes): %v\n", err)
			return
		}
		lw.reopened()
		time.Sleep(wait)
	}
}

// agentEnded says whether the run's agent container has ended; false when
// that cannot be read.
func (k *session) agentEnded(ctx context.Context, pod string) bool {
	p, err := k.cs.CoreV1().Pods(k.namespace).Get(ctx, pod, metav1.GetOptions{})
	return apierrors.IsNotFound(err) || err == nil && ended(p) != nil
}

// lineWriter writes the lines of a pod's log, read with the kubelet's
// timestamps, to w without them, and skips the lines it has already
// written when the log is read again from an earlier time.
type lineWriter struct {
	w io.Writer
	// last is the time of the last line written, atLast how many lines
	// written had exactly that time, skip how many of them a reopened
	// stream has still to give again.
	last         time.Time
	atLast, skip int
	// part is a last line that has no newline yet: written only when
	// the stream ends for good, since a cut stream gives it again whole.
	part  []byte
	lines int
}

// copy writes r's lines; nil at the stream's clean end.
func (lw *lineWriter) copy(r io.Reader) error {
	br := bufio.NewReaderSize(r, 32<<10)
	lw.part = lw.part[:0]
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			lw.part = append(lw.part, line...)
			continue
		}
		if len(lw.part) > 0 || err != nil {
			lw.part = append(lw.part, line...)
			line = lw.part
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		lw.line(line)
		lw.part = lw.part[:0]
	}
}

// line writes one whole line ("TIME text\n") unless it was written before.
func (lw *lineWriter) line(line []byte) {
	t, text, ok := stamped(line)
	if ok {
		switch c := t.Compare(lw.last); {
		case c < 0:
			return
		case c == 0 && lw.skip > 0:
			lw.skip--
			return
		case c == 0:
			lw.atLast++
		default:
			lw.last, lw.atLast, lw.skip = t, 1, 0
		}
	}
	_, _ = lw.w.Write(text)
	lw.lines++
}

// reopened readies lw for the log read again from lw.last.
func (lw *lineWriter) reopened() {
	lw.skip = lw.atLast
	lw.part = lw.part[:0]
}

// flush writes the last line, if it has no newline.
func (lw *lineWriter) flush() {
	if len(lw.part) > 0 {
		lw.line(lw.part)
		lw.part = lw.part[:0]
	}
}

// stamped splits a line the kubelet prefixed with its time (RFC 3339 with
// nanoseconds, and a space).
func stamped(line []byte) (time.Time, []byte, bool) {
	i := bytes.IndexByte(line, ' ')
	if i < 0 || i > len("2006-01-02T15:04:05.999999999-07:00") {
		return time.Time{}, line, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(line[:i]))
	if err != nil {
		return time.Time{}, line, false
	}
	return t, line[i+1:], true
}
