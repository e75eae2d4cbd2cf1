// Package review is the terminal UI of sandbox review (and recover -i):
// the sessions, their files and each file's diff against the host, in
// three panes, where the user takes or leaves each file and each hunk
// before anything is written. It decides nothing about recovery: it shows
// a prepared recovery's plans (package recover) and returns the choices,
// which the caller applies through the same plan and journal as recover.
package review

import (
	"context"
	"errors"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	recov "github.com/agentsandbox/sandbox/recover"
)

// Session is one row of the sessions pane.
type Session struct {
	ID, Agent string
	Start     time.Time
	// Project is where the session worked (its working directory).
	Project string
	// Verdict is how the session ended (clean, died-in-tool, …).
	Verdict string
}

// Data is what a review shows, and what it can ask for.
type Data struct {
	Sessions []Session
	// Plans are the prepared recovery's plans, in path order.
	Plans []*recov.FilePlan
	// Timeline returns a session's timeline as sandbox inspect prints it
	// (nil: not offered).
	Timeline func(ctx context.Context, id string) (string, error)
	// Report writes a session's HTML report and opens it, returning the
	// file and what opened it ("" when nothing could: the user opens it).
	Report func(ctx context.Context, id string) (file, opener string, err error)
	// Color says whether to colour (false under NO_COLOR).
	Color bool
}

// Outcome is how a review ended.
type Outcome struct {
	// Apply says the user confirmed writing Choices; false writes nothing.
	Apply   bool
	Choices map[*recov.FilePlan]recov.Choice
}

// Run shows the review full screen on the terminal in/out until the user
// applies (enter, then y) or quits (q, esc, ^C), and returns the choices.
// A cancelled ctx ends it as a quit.
func Run(ctx context.Context, in io.Reader, out io.Writer, d Data) (Outcome, error) {
	m := newModel(ctx, d)
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen(), tea.WithContext(ctx))
	end, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) || ctx.Err() != nil {
		return Outcome{}, ctx.Err()
	}
	if err != nil {
		return Outcome{}, err
	}
	return end.(*model).outcome(), nil
}
