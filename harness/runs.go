package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"time"
)

// RunInfo is one run of a session, from its runtime log.
type RunInfo struct {
	Run        int       `json:"run"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended,omitzero"`
	State      string    `json:"state,omitempty"`
	ExitCode   int       `json:"exit_code"`
	Signal     string    `json:"signal,omitempty"`
	Command    []string  `json:"command,omitempty"`
	OutputFrom int64     `json:"output_from"`
	// OutputTo is where the run's output ends in logs/output.log: the next
	// run's start, or -1 for the end of the file.
	OutputTo int64 `json:"output_to"`
}

// maxRunLogLine is the longest runtime-log line Runs reads; a stop event
// holds at most a few KiB of output.
const maxRunLogLine = 4 << 20

// Runs lists a session's runs from its runtime log, oldest first. A run
// recorded before output offsets were logged starts where the previous one
// ends, or at 0.
func (s *Store) Runs(id string) ([]RunInfo, error) {
	f, err := s.OpenSessionFile(id, RuntimeLogName, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var runs []RunInfo
	var known []bool // whether the run's output_from was logged
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxRunLogLine)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"sandbox_`)) && !bytes.Contains(line, []byte(`"session_drop"`)) {
			continue
		}
		var e struct {
			Message    string    `json:"message"`
			Time       time.Time `json:"time"`
			Run        int       `json:"run"`
			State      string    `json:"state"`
			ExitCode   int       `json:"exit_code"`
			Signal     string    `json:"signal"`
			Command    []string  `json:"command"`
			OutputFrom *int64    `json:"output_from"`
		}
		if json.Unmarshal(line, &e) != nil || e.Run <= 0 {
			continue
		}
		switch e.Message {
		case "sandbox_started":
			r := RunInfo{Run: e.Run, Started: e.Time, Command: e.Command, OutputTo: -1}
			if e.OutputFrom != nil {
				r.OutputFrom = max(0, *e.OutputFrom) // a restored log is hostile
			}
			runs = append(runs, r)
			known = append(known, e.OutputFrom != nil)
		case "sandbox_stopped", "session_drop":
			for i := len(runs) - 1; i >= 0; i-- {
				if runs[i].Run == e.Run {
					runs[i].Ended, runs[i].ExitCode, runs[i].Signal = e.Time, e.ExitCode, e.Signal
					runs[i].State = e.State
					if e.Message == "session_drop" {
						runs[i].State = string(StateDropped)
					}
					break
				}
			}
		}
	}
	// A run logged before offsets were starts where the one before it
	// did: their output is one stretch, given to both.
	for i := 1; i < len(runs); i++ {
		if !known[i] {
			runs[i].OutputFrom = runs[i-1].OutputFrom
		}
	}
	for i := range runs {
		if i+1 < len(runs) && known[i+1] && runs[i+1].OutputFrom >= runs[i].OutputFrom {
			runs[i].OutputTo = runs[i+1].OutputFrom
		}
	}
	return runs, sc.Err()
}
