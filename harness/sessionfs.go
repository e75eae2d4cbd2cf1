package harness

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentsandbox/sandbox/internal/fskind"
)

// Every file sandbox reads or writes inside a session directory (its
// record, logs, manifest, lock and events) is opened here, through an
// os.Root and without following a symbolic link at any step. A session may
// hold links the agent made, or that came from elsewhere; os.Root alone
// keeps a link from leading out of the directory, but still follows one
// inside it (logs/runtime.jsonl -> ../session.json), so each step is also
// checked with Lstat and the opened file compared with what Lstat saw.

// LinkError is a path in a session that is a symbolic link (or not the
// kind of file it must be) where sandbox expects its own file: sandbox
// never follows a link there.
type LinkError struct {
	Path string // slash path inside the session directory
	What string // "a symbolic link", "not a directory", …
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is %s; sandbox never follows a link in a session, nor writes through one", e.Path, e.What)
}

// kindOf says what a file is, for a LinkError.
func kindOf(fi fs.FileInfo) string { return fskind.Of(fi.Mode()) }

// openSession opens a session's directory as an os.Root. The store above
// it is the user's own (SANDBOX_HOME may well be a link), but the session
// directory itself must be a real directory. With create, the directory
// (and sessions/) is made if missing.
func (s *Store) openSession(id string, create bool) (*os.Root, error) {
	if err := ValidName(id); err != nil {
		return nil, err
	}
	sessions := filepath.Join(s.Root, "sessions")
	if create {
		if err := os.MkdirAll(sessions, 0o755); err != nil {
			return nil, err
		}
	}
	top, err := os.OpenRoot(sessions)
	if err != nil {
		return nil, err
	}
	defer top.Close()
	r, err := openDir(top, id, create)
	if err != nil {
		var le *LinkError
		if errors.As(err, &le) {
			le.Path = filepath.Join(sessions, le.Path)
		}
		return nil, err
	}
	return r, nil
}

// openDir opens dir (a slash path under root) as an os.Root, each step a
// real directory, never a link; with create, missing steps are made.
func openDir(root *os.Root, dir string, create bool) (*os.Root, error) {
	cur, owned := root, false
	done := ""
	for _, c := range strings.Split(dir, "/") {
		next, err := openStep(cur, c, create, path.Join(done, c))
		if owned {
			cur.Close()
		}
		if err != nil {
			return nil, err
		}
		cur, owned, done = next, true, path.Join(done, c)
	}
	return cur, nil
}

// openStep opens one directory entry of dir as a root, after checking it
// is a directory and not a link, and that what was opened is what was
// checked (a swap in between is refused, not followed).
func openStep(dir *os.Root, name string, create bool, shown string) (*os.Root, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, fmt.Errorf("%q: not a plain name", shown)
	}
	fi, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := dir.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fi, err = dir.Lstat(name)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &LinkError{Path: shown, What: kindOf(fi) + ", not a directory"}
	}
	r, err := dir.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	st, err := r.Stat(".")
	if err != nil || !os.SameFile(fi, st) {
		r.Close()
		return nil, &LinkError{Path: shown, What: "a directory that changed while it was opened"}
	}
	return r, nil
}

// openFile opens name (a slash path under root) with flag, never following
// a link at any step: the directories on the way must be real directories
// and the file a regular file. With os.O_CREATE a missing file is created
// (O_EXCL, which never follows a link either) and a missing directory
// above it made. flag must not hold os.O_TRUNC: the file is checked after
// it is opened.
func openFile(root *os.Root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	dir, base := path.Split(name)
	r := root
	if dir != "" {
		sub, err := openDir(root, strings.TrimSuffix(dir, "/"), flag&os.O_CREATE != 0)
		if err != nil {
			return nil, err
		}
		defer sub.Close()
		r = sub
	}
	for try := 0; ; try++ {
		fi, err := r.Lstat(base)
		if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
			f, err := r.OpenFile(base, flag|os.O_EXCL, perm)
			if errors.Is(err, fs.ErrExist) && try < 3 {
				continue // made meanwhile: look at it again
			}
			return f, err
		}
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, &LinkError{Path: name, What: kindOf(fi)}
		}
		f, err := r.OpenFile(base, flag&^os.O_CREATE, perm)
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
			f.Close()
			return nil, &LinkError{Path: name, What: "a file that changed while it was opened"}
		}
		return f, nil
	}
}

// lstatFile is Lstat of name under root, with the directories on the way
// checked as openFile does.
func lstatFile(root *os.Root, name string) (fs.FileInfo, error) {
	dir, base := path.Split(name)
	if dir == "" {
		return root.Lstat(base)
	}
	sub, err := openDir(root, strings.TrimSuffix(dir, "/"), false)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	return sub.Lstat(base)
}

// maxRecord is the largest session.json sandbox reads: a record is a few
// hundred bytes, and one from a snapshot is not to be trusted with memory.
const maxRecord = 1 << 20

// readRecord reads a small file under root (no links), refusing one larger
// than maxRecord.
func readRecord(root *os.Root, name string) ([]byte, error) {
	f, err := openFile(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecord {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a session record", name, maxRecord)
	}
	return b, nil
}

// writeAtomic writes name (a file directly in root) through a temporary
// file beside it, synced and renamed into place: a failure leaves the old
// file or none, and a link named name is replaced, never written through.
func writeAtomic(root *os.Root, name string, perm fs.FileMode, write func(io.Writer) error) error {
	if strings.ContainsRune(name, '/') {
		return fmt.Errorf("writeAtomic %q: not a plain name", name)
	}
	var tmp string
	var f *os.File
	for try := 0; ; try++ {
		var b [6]byte
		_, _ = rand.Read(b[:])
		tmp = "." + name + "." + hex.EncodeToString(b[:])
		var err error
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || try > 3 {
			return err
		}
	}
	defer root.Remove(tmp)
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return root.Rename(tmp, name)
}

// ReplaceHome replaces a session's home/ with what fill writes into a new
// folder (an os.Root: nothing it writes can land outside), swapped in by
// renames once fill is done. A fill that fails leaves home/ as it was.
func (s *Store) ReplaceHome(id string, fill func(root *os.Root) error) error {
	root, err := s.openSession(id, true)
	if err != nil {
		return err
	}
	defer root.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp, old := homeName+".new-"+hex.EncodeToString(b[:]), homeName+".old-"+hex.EncodeToString(b[:])
	if err := root.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	dir, err := root.OpenRoot(tmp)
	if err != nil {
		return err
	}
	err = fill(dir)
	dir.Close()
	if err != nil {
		_ = root.RemoveAll(tmp)
		return err
	}
	if fi, err := root.Lstat(homeName); err == nil {
		if !fi.IsDir() {
			_ = root.RemoveAll(tmp)
			return &LinkError{Path: homeName, What: kindOf(fi) + ", not a directory"}
		}
		if err := root.Rename(homeName, old); err != nil {
			_ = root.RemoveAll(tmp)
			return err
		}
	}
	if err := root.Rename(tmp, homeName); err != nil {
		_ = root.Rename(old, homeName)
		return err
	}
	return root.RemoveAll(old)
}
