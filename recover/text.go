package recover

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/internal/termsafe"
)

// The text reports of a recovery: what sandbox recover prints. Every
// string from a transcript or a file is made printable (termsafe): file
// content never drives the terminal.

// ANSI styles of the text reports, when color is asked for.
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiBold  = "\x1b[1m"
	ansiReset = "\x1b[0m"
)

// Bold is s in bold when color, else s.
func Bold(s string, color bool) string {
	if color {
		return ansiBold + s + ansiReset
	}
	return s
}

// WritePlan writes one file's plan: its action, grade, base, reasons and
// diff.
func WritePlan(out io.Writer, p *FilePlan, color bool) {
	fmt.Fprintln(out, Bold(fmt.Sprintf("%s %s  (%s, %d op%s)", p.Action, termsafe.Printable(p.Path()), p.Grade(), p.File.Ops, plural.S(p.File.Ops)), color))
	if p.Reason != "" {
		fmt.Fprintf(out, "  %s\n", termsafe.Printable(p.Reason))
	}
	fmt.Fprintf(out, "  base: %s\n", baseOrUnknown(p.File.Base))
	if g := p.File.Confidence; (g == Stale || g == UnknownOutcome || g == Redacted) && p.File.Reason != "" && p.File.Reason != p.Reason {
		fmt.Fprintf(out, "  %s: %s\n", g, termsafe.Printable(p.File.Reason))
	}
	for _, d := range p.File.Drift {
		fmt.Fprintf(out, "  drift: %s\n", termsafe.Printable(d))
	}
	for _, d := range p.File.Fuzz {
		fmt.Fprintf(out, "  fuzz: %s\n", termsafe.Printable(d))
	}
	for _, n := range p.File.Notes {
		fmt.Fprintf(out, "  note: %s\n", termsafe.Printable(n))
	}
	WriteDiff(out, diff(p), color)
}

// WriteFiles writes the report's files as a table, one tab-separated row a
// file under a header (tw aligns it, or not).
func WriteFiles(tw io.Writer, r Report) {
	fmt.Fprintln(tw, "ACTION\tPATH\tCONFIDENCE\tOPS\tREASON\tBASE")
	for _, f := range r.Files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", f.Action, termsafe.Printable(f.Path), f.Confidence, f.Ops, termsafe.Printable(f.Reason), baseOrUnknown(f.Base))
	}
}

// WriteSummary writes the summary line: operations, then files by action.
func WriteSummary(out io.Writer, s Summary, dry bool) {
	verb := "written"
	if dry {
		verb = "to write (dry run: nothing was written)"
	}
	fmt.Fprintf(out, "%d op%s (%d applied, %d failed in the session, %d shell, %d unknown); %d file%s: %d %s, %d unchanged, %d conflict%s, %d outside root, %d unrecoverable",
		s.Ops, plural.S(s.Ops), s.OpsApplied, s.OpsFailedInSession, s.OpsShell, s.OpsUnknown, s.Files, plural.S(s.Files),
		s.Written, verb, s.Unchanged, s.Conflicts, plural.S(s.Conflicts), s.OutsideRoot, s.Unrecoverable)
	if s.Skipped > 0 {
		fmt.Fprintf(out, ", %d skipped", s.Skipped)
	}
	if s.Left > 0 {
		fmt.Fprintf(out, ", %d left in review", s.Left)
	}
	if s.Stale+s.UnknownOutcome > 0 {
		fmt.Fprintf(out, "; %d stale, %d of unknown outcome", s.Stale, s.UnknownOutcome)
	}
	if s.Redacted > 0 {
		fmt.Fprintf(out, "; %d redacted", s.Redacted)
	}
	if s.LostCalls > 0 {
		fmt.Fprintf(out, "; %d lost call%s may have changed files not named here", s.LostCalls, plural.S(s.LostCalls))
	}
	fmt.Fprintln(out)
}

// WriteDiff writes a unified diff, coloured when color: its lines made
// inert (termsafe), CRLF line ends kept.
func WriteDiff(w io.Writer, diff string, color bool) {
	if diff == "" {
		return
	}
	for _, l := range strings.SplitAfter(diff, "\n") {
		body := strings.TrimSuffix(l, "\n")
		end := l[len(body):]
		if strings.HasSuffix(body, "\r") {
			body, end = body[:len(body)-1], "\r"+end // CRLF content: the line end stays
		}
		body = termsafe.Inert(body) // file content never drives the terminal
		if !color {
			io.WriteString(w, body+end)
			continue
		}
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			io.WriteString(w, ansiBold+body+ansiReset+end)
		case strings.HasPrefix(l, "+"):
			io.WriteString(w, ansiGreen+body+ansiReset+end)
		case strings.HasPrefix(l, "-"):
			io.WriteString(w, ansiRed+body+ansiReset+end)
		case strings.HasPrefix(l, "@@"):
			io.WriteString(w, ansiCyan+body+ansiReset+end)
		default:
			io.WriteString(w, body+end)
		}
	}
}

// StartWouldHelp reports whether a start commit could have lifted some file
// of the report: one with no start to rebuild from, or built on the host's.
func (r Report) StartWouldHelp() bool {
	for _, f := range r.Files {
		if f.Confidence == string(Unrecoverable) || f.Confidence == string(HostBased) {
			return true
		}
	}
	return false
}

// baseOrUnknown names a file's base for the text report.
func baseOrUnknown(b string) string {
	if b == "" {
		return "unknown"
	}
	return b
}
