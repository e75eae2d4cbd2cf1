package inspect

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// WriteMarkdown writes the report as GitHub-flavoured Markdown for a
// ticket: the verdict, the summary, what needs checking, every file with
// its net diff in a fenced block, and the failures. Transcript text is
// never markup here: running text is escaped, and code goes in spans and
// fences longer than any run of backticks it holds.
func WriteMarkdown(out io.Writer, r *Report) error {
	w := bufio.NewWriter(out)
	in := r.In
	fmt.Fprintf(w, "# Session report: %s\n\n", mdText(r.Title))
	for _, s := range in.Sessions {
		fmt.Fprintf(w, "- %s %s, session %s, in %s, %s → %s (%s)\n", mdText(string(s.Agent)), mdText(s.AgentVersion), mdCode(s.ID),
			mdCode(s.Cwd), stamp(s.Start), stamp(s.End), mdCode(s.Transcript))
	}
	fmt.Fprintf(w, "- Times are in %s.\n\n", r.Zone)

	fmt.Fprintf(w, "## Verdict: %s\n\n%s\n\n", mdText(in.Verdict.State), mdText(in.Verdict.Summary))
	if r.Died != "" {
		fmt.Fprintf(w, "**The call it died in:** %s\n\n", mdText(r.DiedText))
	}
	for _, e := range in.Verdict.Evidence {
		fmt.Fprintf(w, "- evidence: %s\n", mdCode(e))
	}
	for _, e := range in.Sandbox {
		fmt.Fprintf(w, "- sandbox: %s\n", mdText(e.String()))
	}
	w.WriteString("\n")

	c := in.Counts
	w.WriteString("## Summary\n\n")
	fmt.Fprintf(w, "| | |\n|---|---|\n| duration | %s (%s → %s) |\n| turns | %d |\n| tool calls | %d (%d failed, %d rejected, %d unknown) |\n| file operations | %d (%d applied) |\n| files | %d |\n| drift | %d |\n",
		r.Duration, r.Start, r.End, c.Turns, c.Calls, c.Failed, c.Rejected, c.Unknown, c.FileOps, c.OpsApplied, c.Files, c.Drift)
	if len(r.Lanes) > 1 {
		fmt.Fprintf(w, "| subagents | %d |\n", len(r.Lanes)-1)
	}
	if r.Model != "" {
		fmt.Fprintf(w, "| model | %s |\n", mdText(r.Model))
	}
	if r.Tokens != "" {
		fmt.Fprintf(w, "| tokens | %s |\n", r.Tokens)
	}
	w.WriteString("\n")

	var asked []row
	for _, rw := range r.Rows {
		if rw.Kind == string(manifest.EventTurn) {
			asked = append(asked, rw)
		}
	}
	if len(asked) > 0 {
		w.WriteString("## What was asked\n\n")
		for i, rw := range asked {
			if i == 20 {
				fmt.Fprintf(w, "- … %d more turns\n", len(asked)-20)
				break
			}
			fmt.Fprintf(w, "- %s %s\n", rw.Time, mdText(rw.Head+" "+rw.More))
		}
		w.WriteString("\n")
	}

	if len(r.Flags) > 0 {
		fmt.Fprintf(w, "## Needs checking (%d)\n\n", len(r.Flags))
		for _, f := range r.Flags {
			fmt.Fprintf(w, "- %s **%s**: %s", mdCode(f.Path), mdText(f.Grade), mdText(f.Reason))
			if f.Check != "" {
				fmt.Fprintf(w, "  \n  Check: %s", mdText(f.Check))
			}
			w.WriteString("\n")
		}
		w.WriteString("\n")
	}

	w.WriteString("## Files\n\n")
	if len(r.Files) == 0 && len(r.FailedWrites) == 0 {
		w.WriteString("The session changed no files.\n\n")
	} else {
		w.WriteString("| file | grade | what the session did | ends as | ops |\n|---|---|---|---|---|\n")
		for _, f := range r.Files {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %d |\n", mdCell(f.Path), mdText(f.Confidence), mdText(f.Change), mdText(f.Final), len(f.Steps))
		}
		for _, f := range r.FailedWrites {
			fmt.Fprintf(w, "| %s | failed | %s | not written | |\n", mdCell(f.Path), mdText(f.Check))
		}
		w.WriteString("\n")
	}
	for _, f := range r.Files {
		fmt.Fprintf(w, "### %s\n\n%s; ends as %s; %d operation(s); grade **%s**.\n\n", mdCode(f.Path), mdText(f.Change), mdText(f.Final), len(f.Steps), mdText(f.Confidence))
		if f.Flag != "" {
			fmt.Fprintf(w, "> **Needs checking** (%s): %s\n\n", mdText(f.Confidence), mdText(f.Flag))
		}
		switch {
		case f.NetDiff != "":
			fence(w, "diff", f.NetDiff)
		case !f.StartKnown:
			w.WriteString("No net diff: the content at the session's start is not known.\n\n")
		case f.Final == "unknown":
			w.WriteString("No net diff: the content at the end is not known.\n\n")
		default:
			w.WriteString("No net diff: the file ends as it began.\n\n")
		}
		for _, s := range f.Steps {
			if s.Failed != "" {
				fmt.Fprintf(w, "- %s %s: %s — %s\n", clock(s.Time), mdText(s.Tool), mdCode(strings.TrimPrefix(s.Diff, "$ ")), mdText(s.Failed))
			}
		}
	}

	var fails []row
	for _, rw := range r.Rows {
		if rw.Bad {
			fails = append(fails, rw)
		}
	}
	if len(fails) > 0 {
		fmt.Fprintf(w, "## Failures (%d)\n\n", len(fails))
		for _, rw := range fails {
			who := ""
			if rw.Side {
				who = " (" + mdText(rw.Lane) + ")"
			}
			switch rw.Kind {
			case string(manifest.EventCall):
				fmt.Fprintf(w, "- %s%s **%s** %s: %s", rw.Time, who, mdText(rw.Tool), mdCode(rw.Target), mdText(rw.Outcome))
				if rw.Died {
					w.WriteString(" — **the session died in this call**")
				}
				if rw.Detail != "" {
					fmt.Fprintf(w, " — %s", mdText(rw.Detail))
				}
				w.WriteString("\n")
				if out := strings.TrimSpace(rw.Head); out != "" {
					w.WriteString("\n")
					fenceIndent(w, "", out, "  ")
				}
			default:
				fmt.Fprintf(w, "- %s%s %s: %s\n", rw.Time, who, mdText(rw.Kind), mdText(rw.Head))
			}
		}
		w.WriteString("\n")
	}
	if len(in.Warnings) > 0 {
		fmt.Fprintf(w, "## Warnings (%d)\n\n", len(in.Warnings))
		for i, wr := range in.Warnings {
			if i == 50 {
				fmt.Fprintf(w, "- … %d more (--json lists them all)\n", len(in.Warnings)-50)
				break
			}
			fmt.Fprintf(w, "- %s\n", mdCode(wr.String()))
		}
		w.WriteString("\n")
	}
	if r.Redact {
		w.WriteString("## Redacted\n\n")
		if len(in.Redactions) == 0 {
			w.WriteString("--redact found nothing that looks like a secret.\n\n")
		}
		for _, x := range in.Redactions {
			fmt.Fprintf(w, "- %d %s in %s\n", x.Count, mdText(x.Kind), mdCode(x.Where))
		}
		if len(in.Redactions) > 0 {
			w.WriteString("\n")
		}
	}
	fmt.Fprintf(w, "---\n\n*Written by sandbox inspect %s on %s by %s at %s.*\n", mdText(r.Footer.Version), mdText(r.Footer.Host),
		mdText(r.Footer.User), mdText(r.Footer.Generated))
	return w.Flush()
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			if n > best {
				best = n
			}
		} else {
			n = 0
		}
	}
	return best
}

// fence writes text as a fenced code block whose fence is longer than any
// run of backticks in it, so no content can close it.
func fence(w *bufio.Writer, lang, text string) {
	fenceIndent(w, lang, text, "")
	w.WriteString("\n")
}

func fenceIndent(w *bufio.Writer, lang, text, indent string) {
	n := longestRun(text, '`') + 1
	if n < 3 {
		n = 3
	}
	f := strings.Repeat("`", n)
	text = strings.TrimSuffix(strings.ToValidUTF8(text, "\uFFFD"), "\n")
	fmt.Fprintf(w, "%s%s%s\n", indent, f, lang)
	for _, l := range strings.Split(text, "\n") {
		w.WriteString(indent)
		w.WriteString(l)
		w.WriteString("\n")
	}
	fmt.Fprintf(w, "%s%s\n", indent, f)
}

// mdCode is s as an inline code span: on one line, delimited by more
// backticks than any run inside it (and padded when it starts or ends
// with one), so it shows as written and nothing in it is markup.
func mdCode(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "` `"
	}
	d := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return d + s + d
}

// mdCell is s as a code span in a table cell, where a pipe ends the cell
// even inside a code span unless escaped (GitHub removes the backslash).
func mdCell(s string) string { return strings.ReplaceAll(mdCode(s), "|", `\|`) }

// mdText is running text on one line with every character that Markdown
// or HTML could take as markup escaped.
func mdText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	var b strings.Builder
	for i, r := range s {
		if r == '.' && i >= 3 && s[i-3:i] == "www" {
			b.WriteString(`\.`) // www.example.com would be a link
			continue
		}
		switch r {
		case '\\', '`', '*', '_', '[', ']', '#', '|', '~', '!', '{', '}', '@':
			// '@' too: GitHub turns bare addresses into links, and a
			// transcript's links are not the report's.
			b.WriteByte('\\')
			b.WriteRune(r)
		case '/':
			// The slashes of a scheme (https://): GitHub turns bare URLs
			// into links.
			if i > 0 && (s[i-1] == ':' || s[i-1] == '/') {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
