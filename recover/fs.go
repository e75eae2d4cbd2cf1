package recover

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// Target is a file on the host: a root directory and a path inside it.
type Target struct {
	Root string
	Rel  string // slash-separated, local to Root
}

// Path returns the target's host path.
func (t Target) Path() string { return filepath.Join(t.Root, filepath.FromSlash(t.Rel)) }

// FS is how recovery reads and writes the host. Every path is confined to
// its root: the real implementation goes through os.Root, which refuses
// "..", absolute paths and symlinks that lead out of the root.
type FS interface {
	// ReadFile returns a file's content and mode; exists is false when it
	// is absent. A directory or symlink at the path is an error.
	ReadFile(t Target) (data []byte, mode fs.FileMode, exists bool, err error)
	// WriteFile replaces a file atomically, creating parent directories.
	WriteFile(t Target, data []byte, mode fs.FileMode) error
	// WriteFileVia is WriteFile through the temporary file tmp (relative
	// to the root, in t's directory), named beforehand so that a journal
	// can record it before it exists.
	WriteFileVia(t Target, tmp string, data []byte, mode fs.FileMode) error
	// Remove removes a file.
	Remove(t Target) error
	// RemoveEmptyDirs removes rel's parent directories up to the root while
	// they are empty (used to undo the directories a write created).
	RemoveEmptyDirs(t Target)
	// AppendFile appends to a file (creating it and its parents) and syncs.
	AppendFile(t Target, data []byte) error
	// ReadDir lists a directory's entries by name; a missing one is empty.
	ReadDir(t Target) ([]string, error)
}

// OSFS is the real filesystem.
type OSFS struct {
	mu    sync.Mutex
	roots map[string]*os.Root
}

// NewOSFS returns the real filesystem.
func NewOSFS() *OSFS { return &OSFS{roots: map[string]*os.Root{}} }

// Close releases the open roots.
func (o *OSFS) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.roots {
		r.Close()
	}
	o.roots = map[string]*os.Root{}
	return nil
}

func (o *OSFS) root(dir string, create bool) (*os.Root, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.roots[dir]; ok {
		return r, nil
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	o.roots[dir] = r
	return r, nil
}

func checkRel(t Target) error {
	if !filepath.IsLocal(filepath.FromSlash(t.Rel)) {
		return fmt.Errorf("%s: path is not inside the destination root %s", t.Rel, t.Root)
	}
	return nil
}

// ReadFile implements FS.
func (o *OSFS) ReadFile(t Target) ([]byte, fs.FileMode, bool, error) {
	if err := checkRel(t); err != nil {
		return nil, 0, false, err
	}
	r, err := o.root(t.Root, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	rel := filepath.FromSlash(t.Rel)
	st, err := r.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil, 0, false, nil
	}
	if isEscape(err) {
		return nil, 0, false, &EscapeError{Target: t}
	}
	if err != nil {
		return nil, 0, false, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, 0, true, notAFile(t.Path() + " is a symbolic link: refusing to read or replace it")
	}
	if st.IsDir() {
		return nil, 0, true, fmt.Errorf("%s: %w", t.Path(), ErrIsDir)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, true, notAFile(t.Path() + " is not a regular file")
	}
	data, err := r.ReadFile(rel)
	if err != nil {
		return nil, 0, true, err
	}
	return data, st.Mode() & keptModes, true, nil
}

// ErrIsDir is returned for a directory where a file was expected.
var ErrIsDir = errors.New("is a directory")

// ErrNotAFile is what ReadFile's error is (errors.Is) when the path holds
// a symbolic link, a device or a pipe (a directory is ErrIsDir). Unlike an
// I/O or permission error, which may pass, it is a fact about the host.
var ErrNotAFile = errors.New("not a regular file")

// notAFile is an ErrNotAFile with a message of its own.
type notAFile string

func (e notAFile) Error() string      { return string(e) }
func (notAFile) Is(target error) bool { return target == ErrNotAFile }

// isNotAFile reports whether a ReadFile error says the path holds
// something other than a regular file, or leads out of its root through a
// link.
func isNotAFile(err error) bool {
	var esc *EscapeError
	return errors.Is(err, ErrNotAFile) || errors.Is(err, ErrIsDir) || errors.As(err, &esc)
}

// EscapeError is a path that leads out of its root through a symbolic
// link: os.Root refuses to follow it, and recovery never writes there.
type EscapeError struct{ Target Target }

func (e *EscapeError) Error() string {
	return fmt.Sprintf("%s passes through a symbolic link that leads outside the destination root %s", e.Target.Rel, e.Target.Root)
}

// isEscape tells os.Root's refusal of a path that escapes the root (its
// error value is not exported).
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// WriteFile implements FS: a temporary file in the same directory, fsync,
// rename over the target, fsync of the directory.
func (o *OSFS) WriteFile(t Target, data []byte, mode fs.FileMode) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir := path.Dir(t.Rel)
	return o.WriteFileVia(t, path.Join(dir, "."+path.Base(t.Rel)+".sandbox-"+hex.EncodeToString(rnd[:])), data, mode)
}

// WriteFileVia implements FS.
func (o *OSFS) WriteFileVia(t Target, tmpRel string, data []byte, mode fs.FileMode) error {
	if err := checkRel(t); err != nil {
		return err
	}
	if path.Dir(tmpRel) != path.Dir(t.Rel) || !filepath.IsLocal(filepath.FromSlash(tmpRel)) {
		return fmt.Errorf("%s: temporary file %s is not beside it", t.Path(), tmpRel)
	}
	r, err := o.root(t.Root, true)
	if err != nil {
		return err
	}
	rel := filepath.FromSlash(t.Rel)
	if st, err := r.Lstat(rel); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		// Replacing a link would change what it points to or escape the root.
		return fmt.Errorf("%s is a symbolic link: refusing to replace it", t.Path())
	}
	dir := filepath.Dir(rel)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.FromSlash(tmpRel)
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = r.Rename(tmp, rel)
	}
	if werr != nil {
		_ = r.Remove(tmp)
		return werr
	}
	if d, err := r.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Remove implements FS.
func (o *OSFS) Remove(t Target) error {
	if err := checkRel(t); err != nil {
		return err
	}
	r, err := o.root(t.Root, false)
	if err != nil {
		return err
	}
	return r.Remove(filepath.FromSlash(t.Rel))
}

// RemoveEmptyDirs implements FS.
func (o *OSFS) RemoveEmptyDirs(t Target) {
	r, err := o.root(t.Root, false)
	if err != nil {
		return
	}
	for dir := filepath.Dir(filepath.FromSlash(t.Rel)); dir != "." && dir != string(filepath.Separator); dir = filepath.Dir(dir) {
		if r.Remove(dir) != nil { // fails unless empty
			return
		}
	}
}

// AppendFile implements FS.
func (o *OSFS) AppendFile(t Target, data []byte) error {
	if err := checkRel(t); err != nil {
		return err
	}
	r, err := o.root(t.Root, true)
	if err != nil {
		return err
	}
	rel := filepath.FromSlash(t.Rel)
	if err := r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	f, err := r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadDir implements FS.
func (o *OSFS) ReadDir(t Target) ([]string, error) {
	r, err := o.root(t.Root, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d, err := r.Open(filepath.FromSlash(t.Rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// DryRunFS reads through to the host and records writes without making
// them, so a dry run is safe by construction.
type DryRunFS struct {
	Read    FS
	Actions []string
}

// ReadFile implements FS.
func (d *DryRunFS) ReadFile(t Target) ([]byte, fs.FileMode, bool, error) { return d.Read.ReadFile(t) }

// WriteFile implements FS; it writes nothing.
func (d *DryRunFS) WriteFile(t Target, data []byte, _ fs.FileMode) error {
	if err := checkRel(t); err != nil {
		return err
	}
	d.Actions = append(d.Actions, fmt.Sprintf("write %s (%d bytes)", t.Path(), len(data)))
	return nil
}

// WriteFileVia implements FS; it writes nothing.
func (d *DryRunFS) WriteFileVia(t Target, _ string, data []byte, mode fs.FileMode) error {
	return d.WriteFile(t, data, mode)
}

// Remove implements FS; it removes nothing.
func (d *DryRunFS) Remove(t Target) error {
	d.Actions = append(d.Actions, "remove "+t.Path())
	return nil
}

// RemoveEmptyDirs implements FS; it removes nothing.
func (d *DryRunFS) RemoveEmptyDirs(Target) {}

// AppendFile implements FS; it writes nothing.
func (d *DryRunFS) AppendFile(t Target, _ []byte) error { return nil }

// ReadDir implements FS.
func (d *DryRunFS) ReadDir(t Target) ([]string, error) { return d.Read.ReadDir(t) }
