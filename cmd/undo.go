package cmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agentsandbox/sandbox/harness"
	recov "github.com/agentsandbox/sandbox/recover"
	"github.com/spf13/cobra"
)

type undoOptions struct {
	Dest    string
	Journal string
}

func (a *app) undoCommand() *cobra.Command {
	var o undoOptions
	c := &cobra.Command{
		Use:   "undo [--dest DIR] [JOURNAL]",
		Short: "Reverse the last apply, from its journal",
		Long: `Undo reverses an apply made by recover or apply, from the journal it left under
the destination (DIR/.sandbox/journal/<time>/): every file it changed or deleted
gets its before-image back (content and mode), and every file it created is
removed, last change first. A file that changed again since the apply is
refused and left as it is; the others are still restored.

Without JOURNAL, the newest journal not yet undone is used. --dest is the
destination root (default the current directory).`,
		Example: `  sandbox undo --dest ./proj
  sandbox undo --dest ./proj 20261121T120000.000000000Z`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Journal = args[0]
			}
			return a.runUndo(cmd.Context(), o)
		},
	}
	c.Flags().StringVar(&o.Dest, "dest", ".", "the destination root the apply wrote into")
	return c
}

// undoReport is the --json document of undo.
type undoReport struct {
	Schema  string             `json:"schema"`
	Journal string             `json:"journal"`
	Files   []recov.UndoResult `json:"files"`
}

func (a *app) runUndo(_ context.Context, o undoOptions) error {
	root, err := filepath.Abs(o.Dest)
	if err != nil {
		return err
	}
	unlock, err := recov.LockDests(harness.DefaultRoot(), []string{root})
	if err != nil {
		return err
	}
	defer unlock()
	fsys := recov.NewOSFS()
	defer fsys.Close()
	name := o.Journal
	if name == "" {
		if name, err = recov.LatestJournal(fsys, root); errors.Is(err, recov.ErrNothingToUndo) {
			// Nothing to do is a success (exit 0), said once.
			if a.json {
				return a.writeJSON(undoReport{Schema: "sandbox.undo/v1", Files: []recov.UndoResult{}})
			}
			if !a.quiet {
				fmt.Fprintf(a.stderr, "sandbox: nothing to undo under %s\n", printable(filepath.Join(root, recov.JournalDir)))
			}
			return nil
		} else if err != nil {
			return err
		}
	}
	name = filepath.Base(name)
	res, err := recov.Undo(fsys, root, name)
	var ie *recov.IncompleteError
	if err != nil && !errors.As(err, &ie) {
		return err
	}
	refused := 0
	for _, r := range res {
		if r.Action == "refused" {
			refused++
		}
	}
	if a.json {
		if err := a.writeJSON(undoReport{Schema: "sandbox.undo/v1", Journal: filepath.Join(root, recov.JournalDir, name), Files: res}); err != nil {
			return err
		}
	} else {
		tw := a.table()
		fmt.Fprintln(tw, "ACTION\tPATH\tREASON")
		for _, r := range res {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Action, printable(r.Path), printable(r.Reason))
		}
		tw.Flush()
	}
	if ie != nil {
		return ie // exit 1: the journal is kept, undo again finishes it
	}
	if refused > 0 {
		return &PartialError{fmt.Sprintf("%d file(s) changed since the apply were left as they are", refused)}
	}
	return nil
}
