package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"
)

// EventFilter picks the events of a runtime log (sandbox logs
// --runtime-log): those since a time, of one run, the last few.
type EventFilter struct {
	Since time.Time // events at or after it (zero: all)
	Run   int       // events of this run (0: all)
	Tail  int       // only the last Tail (0: all)
	// Valid drops lines that are not events (damaged JSON) before Tail
	// counts; otherwise a damaged line is kept when neither Since nor Run
	// is asked (it has no time or run to pass them with).
	Valid bool
}

// FilterEvents calls fn with each line of the runtime log r that f keeps,
// in order, its line end cut.
func FilterEvents(r io.Reader, f EventFilter, fn func(line []byte) error) error {
	var ring [][]byte
	for line := range eventLines(r) {
		if f.Valid || f.Run > 0 || !f.Since.IsZero() {
			var e struct {
				Time time.Time `json:"time"`
				Run  int       `json:"run"`
			}
			if json.Unmarshal(line, &e) != nil && f.Valid {
				continue
			}
			if (!f.Since.IsZero() && e.Time.Before(f.Since)) || (f.Run > 0 && e.Run != f.Run) {
				continue
			}
		}
		line = bytes.TrimRight(line, "\r\n")
		if f.Tail > 0 {
			ring = append(ring, bytes.Clone(line))
			if len(ring) > f.Tail {
				ring = ring[1:]
			}
			continue
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	for _, l := range ring {
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}

// RunOutput is one run and its output (sandbox logs --json).
type RunOutput struct {
	RunInfo
	Output    string `json:"output"`
	Truncated bool   `json:"output_truncated,omitempty"`
}

// RunOutputs returns the session's runs, those of run (0: all) active
// since a time, each with its output: its last tail lines (0: all), at
// most limit bytes of it, cut from the front (the end is where a failure
// is).
func (st *Store) RunOutputs(id string, since time.Time, run, tail int, limit int64) []RunOutput {
	runs, _ := st.Runs(id)
	out := []RunOutput{}
	f, ferr := st.OpenSessionFile(id, OutputLogName, os.O_RDONLY)
	if ferr == nil {
		defer f.Close()
	}
	for _, r := range runs {
		if (run > 0 && r.Run != run) || (!since.IsZero() && !r.Ended.IsZero() && r.Ended.Before(since)) {
			continue
		}
		d := RunOutput{RunInfo: r}
		if ferr == nil {
			size, _ := f.Seek(0, io.SeekEnd)
			to := r.OutputTo
			if to < 0 || to > size {
				to = size
			}
			from := max(0, min(r.OutputFrom, to))
			if to-from > limit {
				from, d.Truncated = to-limit, true
			}
			var b strings.Builder
			_ = TailLines(&b, io.NewSectionReader(f, from, to-from), tail)
			d.Output = b.String()
		}
		out = append(out, d)
	}
	return out
}
