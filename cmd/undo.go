package cmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	recov "github.com/agentsandbox/sandbox/recover"
)

type undoOptions struct {
	Dest     string
	Journal  string
	List     bool
	DryRun   bool
	Wide     bool
	Unsealed bool
}

func (a *app) undoCommand() *cobra.Command {
	var o undoOptions
	c := &cobra.Command{
		Use:   "undo [--dest DIR] [JOURNAL]",
		Short: "Reverse the last apply, from its journal",
		Long: `sandbox undo reverses an apply made by recover or apply, from the journal it left under
the destination (DIR/.sandbox/journal/<time>/): every file it changed or deleted
gets its before-image back (content and mode), and every file it created is
removed, last change first. A file that changed again since the apply is
refused and left as it is; the others are still restored.

Without JOURNAL, the newest journal not yet undone is used. --dest is the
destination root (default the current directory). --list shows the
journals there (time, state, files); --dry-run says what undo would do to
each file and changes nothing.

Journals are kept out of version control: .sandbox/.gitignore holds "*", so
git add -A never takes one. A journal whose every file was put back is
removed, and so is .sandbox once it holds nothing else; a journal with a
refused file is kept, since its before-image is the only copy of what that
file was.

Every journal entry is sealed with a key kept in the state directory
($SANDBOX_HOME/journal.key, made on first use): undo refuses a journal whose
entries do not carry this user's seal (one planted in a cloned repository,
or written by another user), changing nothing. --unsealed undoes one anyway,
for a journal you know the origin of (one written before journals were
sealed).`,
		Example: `  sandbox undo --dest ./proj --list
  sandbox undo --dest ./proj --dry-run
  sandbox undo --dest ./proj
  sandbox undo --dest ./proj 20261121T120000.000000000Z`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Journal = args[0]
			}
			return a.runUndo(cmd.Context(), o)
		},
	}
	c.Flags().StringVar(&o.Dest, "dest", ".", "the destination root `DIR` the apply wrote into")
	c.Flags().BoolVar(&o.List, "list", false, "list the journals under the destination, undo nothing")
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "say what undo would do to each file, change nothing")
	c.Flags().BoolVar(&o.Unsealed, "unsealed", false, "undo a journal that does not carry this user's seal (see above)")
	c.Flags().BoolVar(&o.Wide, "wide", false, "with --list, every path and every cell whole")
	return c
}

// undoReport is the --json document of undo.
type undoReport struct {
	Schema  string             `json:"schema"`
	DryRun  bool               `json:"dry_run,omitempty"`
	Journal string             `json:"journal"`
	Files   []recov.UndoResult `json:"files"`
}

// listJournals is undo --list.
func (a *app) listJournals(fsys recov.FS, root string, wide bool) error {
	list, err := recov.ListJournals(fsys, root)
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(map[string]any{"schema": "sandbox.undo-list/v1", "dest": root, "journals": list})
	}
	if len(list) == 0 {
		a.note("no journals under %s", printable(filepath.Join(root, recov.JournalDir)))
		return nil
	}
	rows := [][]string{{"JOURNAL", "TIME", "STATE", "FILES", "PATHS"}}
	for _, j := range list {
		when := "-"
		if t, err := time.Parse(time.RFC3339, j.Time); err == nil {
			when = a.timeCell(t)
		}
		paths := shortList(j.Paths, 3)
		if wide {
			paths = strings.Join(j.Paths, ",")
		}
		rows = append(rows, []string{j.Name, when, j.State, strconv.Itoa(j.Files), printable(paths)})
	}
	return a.writeTable(rows, 4, wide)
}

// shortList joins the first n items, saying how many more there are.
func shortList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ",")
	}
	return strings.Join(items[:n], ",") + fmt.Sprintf(",+%d", len(items)-n)
}

func (a *app) runUndo(_ context.Context, o undoOptions) error {
	root, err := filepath.Abs(o.Dest)
	if err != nil {
		return err
	}
	unlock, err := recov.LockDests(a.stateRoot(), []string{root})
	if err != nil {
		return err
	}
	defer unlock()
	fsys := recov.NewOSFS()
	defer fsys.Close()
	if o.List {
		return a.listJournals(fsys, root, o.Wide)
	}
	var target recov.FS = fsys
	if o.DryRun {
		target = &recov.DryRunFS{Read: fsys}
	}
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
	res, err := recov.Undo(target, root, name, a.journalKey, o.Unsealed)
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
		if err := a.writeJSON(undoReport{Schema: "sandbox.undo/v1", DryRun: o.DryRun, Journal: filepath.Join(root, recov.JournalDir, name), Files: res}); err != nil {
			return err
		}
	} else {
		tw := a.table()
		fmt.Fprintln(tw, "ACTION\tPATH\tREASON")
		for _, r := range res {
			action := r.Action
			if o.DryRun {
				action = "would " + map[string]string{"restored": "restore", "removed": "remove", "unchanged": "leave", "refused": "refuse", "failed": "fail"}[r.Action]
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", action, printable(r.Path), printable(r.Reason))
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
