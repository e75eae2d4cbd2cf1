package cmd

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/inspect"
	"github.com/agentsandbox/sandbox/parse"
)

type inspectOptions struct {
	selectOptions
	HTML   string
	Base   string
	Format string
	Redact bool
}

func (a *app) inspectCommand() *cobra.Command {
	var o inspectOptions
	c := &cobra.Command{
		Use:   "inspect SESSION",
		Short: "Tell what an agent session did, what failed, and how it ended",
		Long: `sandbox inspect is post-incident analysis of one session (an id prefix, a harness session
name, or a transcript path): a timeline of every turn and tool call with its
time, tool, target and outcome (applied, failed with its error, rejected,
unknown) and the file operations it made; the end of the session stated
plainly with its evidence (ended cleanly, transcript cut off mid-line, died
while a tool call was running and how long after it started, turn aborted,
interrupted by the user); and what cannot be recovered and why (shell commands
that wrote files, deletions without recorded content, edits whose base is
unknown), so an engineer knows what to check by hand.

Text on a terminal; --json (or --format json) for tools; --format md for
GitHub-flavoured Markdown to paste into a ticket (the verdict, the summary,
the files that need checking, every file's net diff in a fenced block, and
the failures); --html FILE writes one self-contained page (nothing loaded
from anywhere) to attach to an incident report: the verdict and the files
that need checking first, a chart of the session drawn inline (one lane for
the agent and one per subagent, every call coloured by its outcome), a file
index, each file's net diff from the session's start to its end and then
the diff of every operation (open, and kept when printed to PDF), and the
timeline with the agent's text, tool outputs and filters.

--redact replaces likely secrets (private keys, common token formats, .env
assignments) in the report with [REDACTED:kind], as export --redact does,
and lists what it replaced (on stderr, and in the report). --base DIR gives
the files' starting content (the session's directory re-rooted there); by
default the session's own directory is read when it exists here.`,
		Example: `  sandbox inspect 019c7bdb
  sandbox inspect ~/.claude/projects/-workspace/5c0375b4-….jsonl --html incident.html
  sandbox inspect task1 --format md --redact > incident.md
  sandbox inspect task1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runInspect(cmd.Context(), args[0], o)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.From, "from", nil, "look for the session in `PATH` (a tree, an archive, a file, a vault) instead of the homes")
	f.StringVar(&o.Version, "version", "", "from a vault, read version `N|TIME` of the transcript (default: the longest)")
	f.StringVar(&o.HomeCodex, "home-codex", "", "the Codex home `DIR` to look in")
	f.StringVar(&o.HomeClaude, "home-claude", "", "the Claude Code home `DIR` to look in")
	f.StringVar(&o.HTML, "html", "", "write a self-contained HTML report to `FILE` (- for standard output)")
	f.StringVar(&o.Base, "base", "", "read the files' starting content from `DIR`")
	f.StringVar(&o.Format, "format", "text", "what to print on stdout: `text`, json or md (GitHub-flavoured Markdown)")
	f.BoolVar(&o.Redact, "redact", false, "replace likely secrets in the report with placeholders, and list them")
	return c
}

func (a *app) runInspect(ctx context.Context, target string, o inspectOptions) error {
	if st, err := os.Stat(target); target == "-" || (err == nil && !st.IsDir()) {
		o.Transcripts = []string{target} // - is standard input
	} else {
		o.Sessions = []string{target}
	}
	sel, _, err := a.selectSessions(ctx, o.selectOptions, nil, true)
	if err != nil {
		return err
	}
	if len(sel) == 0 {
		return fmt.Errorf("no session %q", target)
	}
	switch o.Format {
	case "text", "json", "md":
	default:
		return usagef("--format is text, json or md, not %q", o.Format)
	}
	if o.HTML == "-" && (a.json || o.Format != "text") {
		return usagef("--html - writes the page to standard output: it goes with no other --format or --json")
	}
	sel = append(sel, parse.SelectedCompanions(sel)...)
	var sp *inspect.Spool
	if o.HTML == "" && o.Format != "md" && !o.Redact && inspect.Spooled(sel) {
		// The JSON and text reports read the timeline once, in order: a
		// large one waits in a file. (The HTML and Markdown reports
		// arrange it, and --redact rewrites it, in memory.)
		if sp, err = inspect.NewSpool(); err != nil {
			return err
		}
		defer sp.Close()
	}
	bar := a.counting("reading transcripts", sel)
	in, err := inspect.Build(ctx, sel, o.Base, true, sp)
	bar.End()
	if err != nil {
		return err
	}
	in.Sandbox = a.sandboxEnds(sel)
	if o.Redact {
		inspect.Redact(in)
		for _, r := range in.Redactions {
			fmt.Fprintf(a.stderr, "sandbox: redacted %d %s in %s\n", r.Count, r.Kind, r.Where)
		}
	}
	if o.HTML == "-" {
		// --html -: the page on standard output, instead of the text.
		w := bufio.NewWriterSize(a.stdout, 1<<16)
		if err := inspect.RenderHTML(w, inspect.NewReport(in, o.Redact, reportMeta())); err != nil {
			return err
		}
		return w.Flush()
	}
	if o.HTML != "" {
		if err := writeHTMLReport(o.HTML, inspect.NewReport(in, o.Redact, reportMeta())); err != nil {
			return err
		}
		if !a.quiet {
			fmt.Fprintf(a.stderr, "sandbox: wrote %s\n", printable(o.HTML))
		}
	}
	switch {
	case a.json || o.Format == "json":
		return a.writeInspectionJSON(in)
	case o.Format == "md":
		return inspect.WriteMarkdown(a.stdout, inspect.NewReport(in, o.Redact, reportMeta()))
	case o.HTML != "":
		return nil
	}
	inspect.WriteText(a.stdout, a.table(), in)
	return in.Err()
}

// writeInspectionJSON writes the inspection as the --json document.
func (a *app) writeInspectionJSON(in *inspect.Inspection) error {
	a.wroteJSON = true
	return inspect.WriteJSON(a.stdout, in)
}
