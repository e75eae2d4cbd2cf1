package cmd

import (
	"time"

	"github.com/agentsandbox/sandbox/internal/progress"
	"github.com/agentsandbox/sandbox/parse"
)

// A command's reading shows one progress bar (internal/progress) on stderr
// when it is a terminal (never under --quiet or --json: stderr stays clean
// for machines).

// progressDelay is how long a command reads before its bar appears;
// SANDBOX_PROGRESS_DELAY (a duration) sets another (0: at once).
const progressDelay = 400 * time.Millisecond

// startProgress starts a bar over total bytes, or returns nil when no bar
// is wanted here.
func (a *app) startProgress(what string, total int64) *progress.Bar {
	if a.quiet || !isTerminal(a.stderr) || total <= 0 {
		return nil
	}
	delay := progressDelay
	if d, err := time.ParseDuration(a.env.Get("SANDBOX_PROGRESS_DELAY")); err == nil && d >= 0 {
		delay = d
	}
	return progress.Start(a.stderr, what, total, delay)
}

// counting starts a bar over the selected transcripts and makes their
// reading move it. The caller ends it.
func (a *app) counting(what string, sel []parse.Selected) *progress.Bar {
	var total int64
	for _, s := range sel {
		total += s.Size
	}
	p := a.startProgress(what, total)
	if p == nil {
		return nil
	}
	for i := range sel {
		sel[i].Candidate = sel[i].Candidate.Counted(p.Add)
	}
	return p
}
