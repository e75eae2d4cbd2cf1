package recover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"
)

// ApplyError is a failed apply. The host was restored to its state before
// the apply; Rollback lists anything that could not be restored.
type ApplyError struct {
	Path     string
	Err      error
	Rollback []error
}

func (e *ApplyError) Error() string {
	// The file is named already: an fs error's own path is the temporary
	// file written through, a name that means nothing to the user.
	cause := e.Err
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(cause, &pe) {
		cause = pe.Err
	} else if errors.As(cause, &le) {
		cause = le.Err
	}
	msg := fmt.Sprintf("writing %s: %v", e.Path, cause)
	if len(e.Rollback) > 0 {
		msg += fmt.Sprintf(" (and %d file(s) could not be restored: %v)", len(e.Rollback), errors.Join(e.Rollback...))
	} else {
		msg += "; every change already made was rolled back"
	}
	return msg
}

func (e *ApplyError) Unwrap() error { return e.Err }

// JournalSet holds one journal per destination root.
type JournalSet struct {
	fsys   FS
	now    time.Time
	key    KeyFunc
	byRoot map[string]*Journal
}

// newJournalSet returns journals stamped with now and sealed by key.
func newJournalSet(fsys FS, now time.Time, key KeyFunc) *JournalSet {
	return &JournalSet{fsys: fsys, now: now, key: key, byRoot: map[string]*Journal{}}
}

func (s *JournalSet) forRoot(root string) *Journal {
	if s == nil {
		return nil
	}
	j, ok := s.byRoot[root]
	if !ok {
		j = newJournal(s.fsys, root, s.now, s.key)
		s.byRoot[root] = j
	}
	return j
}

// Written returns the journals that recorded something.
func (s *JournalSet) Written() []*Journal {
	if s == nil {
		return nil
	}
	var out []*Journal
	for _, j := range s.byRoot {
		if !j.empty {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Root < out[b].Root })
	return out
}

type undoStep struct {
	t       Target
	before  Content
	mode    fs.FileMode
	created bool // the write created the file (and maybe its directories)
}

// applier carries out plans one at a time. Every change is first recorded
// in the journal of its root (when there are journals), then made
// atomically and read back to check its sha256. On failure, rollback undoes
// what was done: from the journals' before-images on disk when there are
// journals (so memory does not grow with the apply), else from memory.
type applier struct {
	fsys     FS
	journals *JournalSet
	undo     []undoStep
}

// apply carries out plans on fsys; if any step fails, the steps already
// taken are undone, the journals discarded, and the host is left as it was.
func apply(ctx context.Context, plans []*FilePlan, fsys FS, journals *JournalSet) error {
	a := &applier{fsys: fsys, journals: journals}
	for _, p := range plans {
		if err := ctx.Err(); err != nil {
			return a.fail(p.Target, err)
		}
		err := a.apply(p)
		if errors.Is(err, errChanged) {
			changed(p)
			continue
		}
		if err != nil {
			return a.fail(p.Target, err)
		}
	}
	return nil
}

// errChanged is a host file that is no longer what the plan saw.
var errChanged = errors.New("changed on the host since the plan")

// changed turns the plan of a file that changed on the host between the
// plan and its write into a conflict: the host file is left as it is.
func changed(p *FilePlan) {
	p.Action, p.Write, p.Backup = ActConflict, Content{}, nil
	p.Reason = "changed on the host after the plan was made (by another program): left as it is"
}

// recheck reads a host file again just before it is written: another
// program may have changed it since the plan.
func (a *applier) recheck(t Target, want Content) error {
	data, _, exists, err := a.fsys.ReadFile(t)
	if err != nil {
		return err
	}
	if exists != want.Exists || (exists && string(data) != want.Text) {
		return fmt.Errorf("%s: %w", t.Path(), errChanged)
	}
	return nil
}

// fail rolls back and returns the apply error.
func (a *applier) fail(t Target, err error) error {
	ae := &ApplyError{Path: t.Path(), Err: err}
	if written := a.journals.Written(); len(written) > 0 {
		for _, j := range written {
			res, uerr := Undo(a.fsys, j.Root, j.Name, j.key, false)
			for _, r := range res {
				if r.Action == "refused" {
					ae.Rollback = append(ae.Rollback, fmt.Errorf("%s: %s", r.Path, r.Reason))
				}
			}
			if uerr != nil {
				ae.Rollback = append(ae.Rollback, uerr)
			}
			if len(ae.Rollback) == 0 {
				if derr := j.discard(); derr != nil {
					ae.Rollback = append(ae.Rollback, fmt.Errorf("journal %s: %w", j.Dir(), derr))
				}
			}
		}
		return ae
	}
	// Created files go first: on a full disk, their space is what lets the
	// before-images be written back.
	for pass := 0; pass < 2; pass++ {
		for i := len(a.undo) - 1; i >= 0; i-- {
			u := a.undo[i]
			var rerr error
			switch {
			case pass == 0 && u.created:
				rerr = a.fsys.Remove(u.t)
				a.fsys.RemoveEmptyDirs(u.t)
			case pass == 1 && !u.created && u.before.Exists:
				rerr = a.fsys.WriteFile(u.t, []byte(u.before.Text), u.mode)
			}
			if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				ae.Rollback = append(ae.Rollback, fmt.Errorf("%s: %w", u.t.Path(), rerr))
			}
		}
	}
	return ae
}

func (a *applier) write(t Target, c Content, host Content, mode fs.FileMode) error {
	if mode == 0 {
		mode = 0o644
	}
	if j := a.journals.forRoot(t.Root); j != nil {
		tmp, err := j.record(t.Rel, host, mode, c)
		if err != nil {
			return err
		}
		if err := a.fsys.WriteFileVia(t, tmp, []byte(c.Text), mode); err != nil {
			return err
		}
	} else {
		a.undo = append(a.undo, undoStep{t: t, before: host, mode: mode, created: !host.Exists})
		if err := a.fsys.WriteFile(t, []byte(c.Text), mode); err != nil {
			return err
		}
	}
	return verify(a.fsys, t, c.Text)
}

func (a *applier) remove(t Target, host Content, mode fs.FileMode) error {
	if j := a.journals.forRoot(t.Root); j != nil {
		if _, err := j.record(t.Rel, host, mode, Content{Known: true}); err != nil {
			return err
		}
	} else {
		a.undo = append(a.undo, undoStep{t: t, before: host, mode: mode})
	}
	return a.fsys.Remove(t)
}

// apply carries out one plan.
func (a *applier) apply(p *FilePlan) error {
	if !p.Mapped || !p.Written() {
		return nil
	}
	if p.Host.Known && p.Backup == nil {
		if err := a.recheck(p.Target, p.Host); err != nil {
			return err
		}
	}
	if p.From != nil && p.FromHost.Known {
		if err := a.recheck(*p.From, p.FromHost); err != nil {
			return err
		}
	}
	switch {
	case p.Backup != nil:
		_, _, exists, err := a.fsys.ReadFile(*p.Backup)
		if err == nil && exists {
			err = fmt.Errorf("%s already exists: not overwriting it", p.Backup.Path())
		}
		if err != nil {
			return err
		}
		return a.write(*p.Backup, p.File.Final, Content{Known: true}, p.HostMode)
	case p.Action == ActMove:
		src := *p.From
		data, mode, exists, err := a.fsys.ReadFile(src)
		if err != nil {
			return err
		}
		if err := a.write(p.Target, p.Write, p.Host, mode); err != nil {
			return err
		}
		if exists {
			return a.remove(src, Content{Known: true, Exists: true, Text: string(data)}, mode)
		}
		return nil
	case p.Write.Known && !p.Write.Exists:
		return a.remove(p.Target, p.Host, p.HostMode)
	case p.Write.Known:
		return a.write(p.Target, p.Write, p.Host, p.HostMode)
	}
	return nil
}

// verify reads a written file back and checks its content.
func verify(fsys FS, t Target, want string) error {
	if _, ok := fsys.(*DryRunFS); ok {
		return nil
	}
	data, _, exists, err := fsys.ReadFile(t)
	if err != nil {
		return fmt.Errorf("reading back: %w", err)
	}
	if !exists || sum(string(data)) != sum(want) {
		return fmt.Errorf("read back a different sha256 than was written")
	}
	return nil
}
