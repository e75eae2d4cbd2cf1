package inspect

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/internal/termsafe"
	"github.com/agentsandbox/sandbox/manifest"
)

// Table is a writer that aligns tab-separated columns once flushed
// (text/tabwriter's Writer, or one that writes the tabs as they are).
type Table interface {
	io.Writer
	Flush() error
}

// WriteText writes the inspection for people: the sessions, the verdict
// with its evidence, the counts, the timeline (through tw, which aligns
// its columns), what cannot be recovered, the files and the warnings.
// Everything a transcript says is made safe for a terminal.
func WriteText(out io.Writer, tw Table, in *Inspection) {
	for _, s := range in.Sessions {
		fmt.Fprintf(out, "session %s  %s %s  %s\n  %s → %s  (%s)\n", s.ID, s.Agent, s.AgentVersion, s.Cwd,
			s.Start.Local().Format("2006-01-02 15:04:05"), s.End.Local().Format("15:04:05"), s.Transcript)
		if s.Model != "" {
			fmt.Fprintf(out, "  model %s\n", termsafe.Printable(s.Model))
		}
		if s.Tokens != nil {
			fmt.Fprintf(out, "  tokens: %s\n", tokenWords(*s.Tokens))
		}
	}
	if len(in.Sessions) > 0 {
		name, off := in.Sessions[0].Start.In(time.Local).Zone()
		fmt.Fprintf(out, "  times in %s (UTC%s)\n", name, zoneOffset(off))
	}
	fmt.Fprintf(out, "\nverdict: %s\n  %s\n", in.Verdict.State, in.Verdict.Summary)
	for _, e := range in.Verdict.Evidence {
		fmt.Fprintf(out, "  evidence: %s\n", e)
	}
	for _, e := range in.Sandbox {
		fmt.Fprintf(out, "  sandbox: %s\n", e)
		for _, l := range e.LastOutput {
			fmt.Fprintf(out, "    | %s\n", l)
		}
	}
	c := in.Counts
	fmt.Fprintf(out, "\n%d turns, %d tool calls (%d failed, %d rejected, %d unknown); %d file ops (%d applied); %d files; %d drift\n",
		c.Turns, c.Calls, c.Failed, c.Rejected, c.Unknown, c.FileOps, c.OpsApplied, c.Files, c.Drift)
	fmt.Fprintln(out, "\ntimeline:")
	for e := range in.Entries() {
		t := e.Time.Local().Format("15:04:05")
		switch e.Kind {
		case manifest.EventTurn:
			fmt.Fprintf(tw, "%s\tturn\t\t%s\n", t, termsafe.Printable(e.Text))
		case manifest.EventAborted:
			fmt.Fprintf(tw, "%s\tstop\t\t%s\n", t, termsafe.Printable(e.Text))
		case manifest.EventMessage:
			fmt.Fprintf(tw, "%s\tsays\t\t%s\n", t, termsafe.Printable(oneLine(e.Text, 120)))
		case manifest.EventCompact:
			fmt.Fprintf(tw, "%s\tcompact\t\t%s\n", t, termsafe.Printable(e.Text))
		default:
			line := fmt.Sprintf("%s\t%s\t%s\t%s", t, termsafe.Printable(e.Tool), e.Outcome, termsafe.Printable(e.Target))
			if e.Outcome != manifest.OutcomeApplied && e.Detail != "" {
				line += "  — " + termsafe.Printable(e.Detail)
			}
			for _, o := range e.Ops {
				if len(o.Paths) == 0 && len(o.Runs)+len(o.Tasks) > 0 {
					line += fmt.Sprintf("  [%s: runs %s]", o.Kind, termsafe.Printable(strings.Join(append(o.Runs, o.Tasks...), ", ")))
					continue
				}
				if len(o.Paths) == 0 {
					line += fmt.Sprintf("  [%s: files it does not name]", o.Kind)
					continue
				}
				line += fmt.Sprintf("  [%s %s]", o.Kind, termsafe.Printable(strings.Join(o.Paths, " ")))
			}
			fmt.Fprintln(tw, line)
		}
	}
	tw.Flush()
	if len(in.Unrecoverable) > 0 {
		fmt.Fprintln(out, "\ncannot be recovered:")
		for _, u := range in.Unrecoverable {
			fmt.Fprintf(out, "  %s\n    why: %s\n    check: %s\n", termsafe.Printable(u.Path), termsafe.Printable(u.Why), u.Check)
		}
	}
	if len(in.FailedWrites) > 0 {
		fmt.Fprintln(out, "\nwritten only by calls that failed:")
		for _, u := range in.FailedWrites {
			fmt.Fprintf(out, "  %s\n    why: %s\n    %s\n", termsafe.Printable(u.Path), termsafe.Printable(u.Why), u.Check)
		}
	}
	if len(in.Files) > 0 {
		fmt.Fprintln(out, "\nfiles:")
		for _, f := range in.Files {
			fmt.Fprintf(out, "  %s  %s, %s, %d op(s)\n", termsafe.Printable(f.Path), f.Confidence, f.Final, len(f.Steps))
			for _, d := range f.Drift {
				fmt.Fprintf(out, "    drift: %s\n", termsafe.Printable(d))
			}
		}
	}
	if len(in.Warnings) > 0 {
		fmt.Fprintf(out, "\n%d warning(s):\n", len(in.Warnings))
		for i, w := range in.Warnings {
			if i == 20 {
				fmt.Fprintf(out, "  … %d more (--json lists them all)\n", len(in.Warnings)-20)
				break
			}
			fmt.Fprintf(out, "  %s\n", termsafe.Printable(w.String()))
		}
	}
}
