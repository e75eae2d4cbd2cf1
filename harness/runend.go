package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// RunEnd is how a session's run ended, as its runtime log records it
// (the sandbox_stopped or session_drop event).
type RunEnd struct {
	Session    string   `json:"session"`
	Event      string   `json:"event"` // sandbox_stopped or session_drop
	Time       string   `json:"time"`
	Run        int      `json:"run"`
	State      string   `json:"state,omitempty"`
	ExitCode   int      `json:"exit_code"`
	Signal     string   `json:"signal,omitempty"`
	OOM        bool     `json:"oom,omitempty"`
	Error      string   `json:"error,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Node       string   `json:"node,omitempty"`
	LastOutput []string `json:"last_output,omitempty"`
}

func (e RunEnd) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "harness session %s, last run (%d) at %s: ", e.Session, e.Run, e.Time)
	switch {
	case e.Event == "session_drop" && e.Error == "":
		b.WriteString("dropped (the harness died)")
	case e.Event == "session_drop":
		b.WriteString("dropped")
	case e.OOM:
		b.WriteString("killed: out of memory")
	case e.Signal != "":
		fmt.Fprintf(&b, "killed by %s (exit %d)", e.Signal, e.ExitCode)
	default:
		fmt.Fprintf(&b, "%s with code %d", StateWord(e.State), e.ExitCode)
	}
	if e.Error != "" {
		b.WriteString(": " + e.Error)
	}
	return b.String()
}

// StateWord is how a run that ended in state s is said: its state, or
// "exited" when none was recorded.
func StateWord(s string) string {
	if s == "" {
		return "exited"
	}
	return s
}

// LastEnd returns how the last run of session name ended, from its runtime
// log; false when the log records no end (or cannot be read).
func (st *Store) LastEnd(name string) (RunEnd, bool) {
	f, err := st.OpenSessionFile(name, RuntimeLogName, os.O_RDONLY)
	if err != nil {
		return RunEnd{}, false
	}
	defer f.Close()
	var last RunEnd
	found := false
	for line := range eventLines(f) {
		var e RunEnd
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(line, &m) != nil || (m.Message != "sandbox_stopped" && m.Message != "session_drop") {
			continue
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		e.Session, e.Event = name, m.Message
		last, found = e, true
	}
	return last, found
}

// maxEventLine is the longest runtime-log line EventLines yields; an event
// holds at most the last 64 KiB of output.
const maxEventLine = 4 << 20

// eventLines yields the lines of a runtime log, one at a time, blank ones
// aside; a line longer than maxEventLine is skipped without being held.
func eventLines(r io.Reader) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		var line []byte
		long := false
		for {
			chunk, err := br.ReadSlice('\n')
			if !long {
				line = append(line, chunk...)
				if len(line) > maxEventLine {
					long, line = true, line[:0]
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if !long && len(bytes.TrimRight(line, "\r\n")) > 0 && !yield(line) {
				return
			}
			line, long = line[:0], false
			if err != nil {
				return
			}
		}
	}
}
