package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/parse"
)

type logsOptions struct {
	runtimeLog bool
	tail       int
	follow     bool
	run        int
	since      string
}

func (a *app) logsCommand() *cobra.Command {
	var o logsOptions
	c := &cobra.Command{
		Use:   "logs SESSION [-f] [-n N] [--run K] [--since TIME] [--runtime-log]",
		Short: "Print a session's output, or its runtime log",
		Long: `sandbox logs prints what a session's agent wrote (logs/output.log), run by run: when
more than one run is printed, each starts with a header line
"==> run K: started TIME, ENDED <==". --run K prints only run K's output
(sandbox ps shows how many runs a session had), --since TIME only the runs
active since TIME (24h, "3 days ago", yesterday, 2026-11-20, RFC 3339), -n N
only the last N lines, and -f follows a running session's output until it
ends (like tail -f; ^C stops following, not the session).

--runtime-log prints the harness's events instead (logs/runtime.jsonl:
session_created, sandbox_started, interrupt, sandbox_stopped with exit code,
signal, OOM flag, error and last output, container_removed, agent_session,
exec_started, exec_ended, session_drop, …); --since, -n and -f apply to them
too.`,
		Example: `  sandbox logs fix-tests
  sandbox logs fix-tests -f
  sandbox logs fix-tests --run 2 -n 20
  sandbox logs fix-tests --runtime-log --since 1h`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.tail < 0 {
				return usagef("-n %d: want a number of lines, 0 for all", o.tail)
			}
			if o.run < 0 {
				return usagef("--run %d: runs are numbered from 1", o.run)
			}
			var since time.Time
			if o.since != "" {
				var err error
				if since, err = parse.ParseTime(o.since, a.now()); err != nil {
					return usagef("--since: %v", err)
				}
			}
			if a.json && o.follow {
				return usagef("-f and --json: a followed log is not one document; use --runtime-log -f for JSON lines")
			}
			st, s, err := a.loadSession(args[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.logsJSON(st, s, o, since)
			}
			if o.runtimeLog {
				return a.printRuntimeLog(cmd.Context(), st, s, o, since)
			}
			return a.printOutput(cmd.Context(), st, s, o, since)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.runtimeLog, "runtime-log", false, "print the runtime log (JSON lines) instead of the output")
	f.IntVarP(&o.tail, "tail", "n", 0, "print only the last `N` lines")
	f.BoolVarP(&o.follow, "follow", "f", false, "keep printing a running session's output until it ends")
	f.IntVar(&o.run, "run", 0, "print only run `K`")
	f.StringVar(&o.since, "since", "", "only runs (or events) since `TIME`")
	return c
}

// printOutput prints the selected runs' output.
func (a *app) printOutput(ctx context.Context, st *harness.Store, s *harness.Session, o logsOptions, since time.Time) error {
	f, err := st.OpenSessionFile(s.ID, harness.OutputLogName, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		if o.follow && st.Running(s) {
			return st.WaitAndFollow(ctx, s, harness.OutputLogName, a.stdout)
		}
		return nil // nothing written yet
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.ID, err)
	}
	defer f.Close()
	runs, err := st.Runs(s.ID)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %s: %w", s.ID, err)
	}
	if o.run > 0 && o.run > len(runs) {
		return &HintError{fmt.Errorf("session %s has %d run%s, not %d", s.ID, len(runs), plural.S(len(runs)), o.run), "sandbox ps shows each session's runs"}
	}
	var sel []harness.RunInfo
	for _, r := range runs {
		switch {
		case o.run > 0 && r.Run != o.run:
		case !since.IsZero() && !r.Ended.IsZero() && r.Ended.Before(since):
		default:
			sel = append(sel, r)
		}
	}
	size, _ := f.Seek(0, io.SeekEnd)
	if len(runs) == 0 {
		// A log older than the runtime log's offsets: one stretch.
		sel = []harness.RunInfo{{OutputTo: -1}}
	}
	if o.tail > 0 && o.run == 0 && len(sel) > 1 {
		// -n without --run: the last N lines of the log, as tail says them,
		// from the runs that hold them.
		sel = []harness.RunInfo{{OutputFrom: sel[0].OutputFrom, OutputTo: sel[len(sel)-1].OutputTo, Run: -1}}
	}
	headers := len(sel) > 1 || (len(sel) == 1 && len(runs) > 1 && o.run == 0 && sel[0].Run != -1)
	var end int64 = size
	for i, r := range sel {
		to := r.OutputTo
		if to < 0 || to > size {
			to = size
		}
		from := max(0, min(r.OutputFrom, to)) // a restored log is hostile
		if headers {
			if i > 0 {
				fmt.Fprintln(a.stdout)
			}
			fmt.Fprintln(a.stdout, runHeader(r))
		}
		if err := harness.TailLines(a.stdout, io.NewSectionReader(f, from, to-from), o.tail); err != nil {
			return err
		}
		end = to
	}
	if o.follow && (len(sel) == 0 || sel[len(sel)-1].OutputTo < 0) {
		return st.Follow(ctx, s, f, end, a.stdout)
	}
	return nil
}

// runHeader introduces one run's output.
func runHeader(r harness.RunInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "==> run %d", r.Run)
	if !r.Started.IsZero() {
		fmt.Fprintf(&b, ": started %s", r.Started.Local().Format("2006-01-02 15:04:05 MST"))
	}
	switch {
	case r.Ended.IsZero():
		b.WriteString(", still running (or its end was not recorded)")
	case r.Signal != "":
		fmt.Fprintf(&b, ", %s by %s after %s (exit %d)", harness.StateWord(r.State), r.Signal, r.Ended.Sub(r.Started).Round(time.Second), r.ExitCode)
	default:
		fmt.Fprintf(&b, ", %s with code %d after %s", harness.StateWord(r.State), r.ExitCode, r.Ended.Sub(r.Started).Round(time.Second))
	}
	if len(r.Command) > 0 {
		fmt.Fprintf(&b, ": %s", shortCommand(r.Command, 60))
	}
	b.WriteString(" <==")
	return printable(b.String())
}

// printRuntimeLog prints the runtime log's events, those since a time.
func (a *app) printRuntimeLog(ctx context.Context, st *harness.Store, s *harness.Session, o logsOptions, since time.Time) error {
	f, err := st.OpenSessionFile(s.ID, harness.RuntimeLogName, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.ID, err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	err = harness.FilterEvents(f, harness.EventFilter{Since: since, Run: o.run, Tail: o.tail}, func(line []byte) error {
		_, err := w.Write(append(line, '\n'))
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return err
	}
	if o.follow {
		end, _ := f.Seek(0, io.SeekEnd)
		return st.Follow(ctx, s, f, end, a.stdout)
	}
	return nil
}

// maxJSONOutput is the most of one run's output logs --json holds; the
// rest is cut from the front (the end is where a failure is).
const maxJSONOutput = 4 << 20

// logsJSON is logs --json: the runs, each with its output (or the
// events), as one document.
func (a *app) logsJSON(st *harness.Store, s *harness.Session, o logsOptions, since time.Time) error {
	doc := map[string]any{"schema": "sandbox.logs/v1", "session": s.ID}
	if o.runtimeLog {
		events := []json.RawMessage{}
		if f, err := st.OpenSessionFile(s.ID, harness.RuntimeLogName, os.O_RDONLY); err == nil {
			defer f.Close()
			_ = harness.FilterEvents(f, harness.EventFilter{Since: since, Run: o.run, Tail: o.tail, Valid: true}, func(line []byte) error {
				events = append(events, json.RawMessage(bytes.Clone(line)))
				return nil
			})
		}
		doc["events"] = events
		return a.writeJSON(doc)
	}
	doc["runs"] = st.RunOutputs(s.ID, since, o.run, o.tail, maxJSONOutput)
	return a.writeJSON(doc)
}
