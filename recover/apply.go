package recover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	msg := fmt.Sprintf("writing %s: %v", e.Path, e.Err)
	if len(e.Rollback) > 0 {
		msg += fmt.Sprintf(" (and %d file(s) could not be restored: %v)", len(e.Rollback), errors.Join(e.Rollback...))
	} else {
		msg += "; every change already made was rolled back"
	}
	return msg
}

func (e *ApplyError) Unwrap() error { return e.Err }

type undoStep struct {
	t       Target
	before  Content
	mode    fs.FileMode
	created bool // the write created the file (and maybe its directories)
}

// JournalSet holds one journal per destination root.
type JournalSet struct {
	fsys   FS
	now    time.Time
	byRoot map[string]*Journal
}

// NewJournalSet returns journals stamped with now.
func NewJournalSet(fsys FS, now time.Time) *JournalSet {
	return &JournalSet{fsys: fsys, now: now, byRoot: map[string]*Journal{}}
}

func (s *JournalSet) forRoot(root string) *Journal {
	if s == nil {
		return nil
	}
	j, ok := s.byRoot[root]
	if !ok {
		j = NewJournal(s.fsys, root, s.now)
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

// Apply carries out plans on fsys. Every change is first recorded in the
// journal of its root (when journals is not nil), then made atomically and
// read back to check its sha256; if any step fails, the steps already taken
// are undone, the journals are marked rolled back, and the host is left as
// it was.
func Apply(ctx context.Context, plans []*FilePlan, fsys FS, journals *JournalSet) error {
	var undo []undoStep
	fail := func(t Target, err error) error {
		ae := &ApplyError{Path: t.Path(), Err: err}
		defer func() {
			for _, j := range journals.Written() {
				if err := j.discard(); err != nil {
					// Keep what could not be removed, marked so undo leaves it be.
					_ = j.mark("rolled-back")
					ae.Rollback = append(ae.Rollback, fmt.Errorf("journal %s: %w", j.Dir(), err))
				}
			}
		}()
		for i := len(undo) - 1; i >= 0; i-- {
			u := undo[i]
			var rerr error
			switch {
			case u.created:
				rerr = fsys.Remove(u.t)
				fsys.RemoveEmptyDirs(u.t)
			case u.before.Exists:
				rerr = fsys.WriteFile(u.t, []byte(u.before.Text), u.mode)
			}
			if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				ae.Rollback = append(ae.Rollback, fmt.Errorf("%s: %w", u.t.Path(), rerr))
			}
		}
		return ae
	}
	write := func(t Target, c Content, host Content, mode fs.FileMode) error {
		if mode == 0 {
			mode = 0o644
		}
		if j := journals.forRoot(t.Root); j != nil {
			if err := j.record(t.Rel, host, mode, c); err != nil {
				return err
			}
		}
		if err := fsys.WriteFile(t, []byte(c.Text), mode); err != nil {
			return err
		}
		undo = append(undo, undoStep{t: t, before: host, mode: mode, created: !host.Exists})
		return verify(fsys, t, c.Text)
	}
	remove := func(t Target, host Content, mode fs.FileMode) error {
		if j := journals.forRoot(t.Root); j != nil {
			if err := j.record(t.Rel, host, mode, Content{Known: true}); err != nil {
				return err
			}
		}
		if err := fsys.Remove(t); err != nil {
			return err
		}
		undo = append(undo, undoStep{t: t, before: host, mode: mode})
		return nil
	}
	for _, p := range plans {
		if err := ctx.Err(); err != nil {
			return fail(p.Target, err)
		}
		if !p.Mapped || !p.Written() {
			continue
		}
		var err error
		switch {
		case p.Backup != nil:
			_, _, exists, rerr := fsys.ReadFile(*p.Backup)
			if rerr == nil && exists {
				rerr = fmt.Errorf("%s already exists: not overwriting it", p.Backup.Path())
			}
			err = rerr
			if err == nil {
				err = write(*p.Backup, p.File.Final, Content{Known: true}, p.HostMode)
			}
		case p.Action == ActMove:
			src := *p.From
			data, mode, exists, rerr := fsys.ReadFile(src)
			err = rerr
			if err == nil {
				err = write(p.Target, p.Write, p.Host, mode)
			}
			if err == nil && exists {
				err = remove(src, Content{Known: true, Exists: true, Text: string(data)}, mode)
			}
		case p.Write.Known && !p.Write.Exists:
			err = remove(p.Target, p.Host, p.HostMode)
		case p.Write.Known:
			err = write(p.Target, p.Write, p.Host, p.HostMode)
		}
		if err != nil {
			return fail(p.Target, err)
		}
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
