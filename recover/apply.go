package recover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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

// Apply carries out plans on fsys. Every write is atomic and read back to
// check its sha256; if any step fails, the steps already taken are undone
// from the before-images held in the plans, so the host is left as it was.
func Apply(ctx context.Context, plans []*FilePlan, fsys FS) error {
	var undo []undoStep
	fail := func(t Target, err error) error {
		ae := &ApplyError{Path: t.Path(), Err: err}
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
		if err := fsys.WriteFile(t, []byte(c.Text), mode); err != nil {
			return err
		}
		undo = append(undo, undoStep{t: t, before: host, mode: mode, created: !host.Exists})
		return verify(fsys, t, c.Text)
	}
	remove := func(t Target, host Content, mode fs.FileMode) error {
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
