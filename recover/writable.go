package recover

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// NotWritableError is an apply refused before its first write: some of
// its files are in directories this user cannot write (the journal and
// every atomic write need the directory). Nothing was written.
type NotWritableError struct {
	Paths []string // the files, as the report names them
	Dirs  []string // the directories that refuse, one per distinct one
	Why   string   // set when it is not a permission
}

func (e *NotWritableError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("%d file(s) cannot be written: %s; nothing was written", len(e.Paths), e.Why)
	}
	return fmt.Sprintf("%d file(s) cannot be written: %s is not writable by you (permission denied); nothing was written",
		len(e.Paths), e.Dirs[0])
}

// unwritable lists the plans whose write would be refused for want of
// permission: a file is replaced by a rename in its directory, and a new
// one is created in its nearest existing directory, so it is that
// directory that must be writable (and searchable). Only the real file
// system is asked; other file systems (tests, dry runs of them) are not.
func unwritable(plans []*FilePlan, fsys FS) *NotWritableError {
	if _, ok := fsys.(*OSFS); !ok {
		if d, ok := fsys.(*DryRunFS); !ok || !isOS(d.Read) {
			return nil
		}
	}
	var e NotWritableError
	seen := map[string]bool{}
	checked := map[string]bool{}
	blocked := map[string]bool{} // roots whose .sandbox is not a directory
	near := map[string]string{}  // directories looked up: the nearest that exists
	for _, p := range plans {
		if !p.Mapped || !p.Written() {
			continue
		}
		// The journal goes in ROOT/.sandbox: something else there (a file)
		// would stop the apply at its first step.
		j := filepath.Join(p.Target.Root, ".sandbox")
		if _, known := blocked[j]; !known {
			st, err := os.Lstat(j)
			blocked[j] = err == nil && !st.IsDir()
			if blocked[j] {
				e.Dirs = append(e.Dirs, j)
				e.Why = j + " is not a directory (sandbox keeps its journal there)"
			}
		}
		if blocked[j] {
			e.Paths = append(e.Paths, p.Path())
			continue
		}
		targets := []Target{p.Target}
		if p.From != nil {
			targets = append(targets, *p.From)
		}
		for _, t := range targets {
			dir := nearestDir(filepath.Dir(t.Path()), near)
			ok, known := checked[dir]
			if !known {
				ok = syscall.Access(dir, 0x2|0x1) == nil // W_OK|X_OK
				checked[dir] = ok
			}
			if !ok {
				e.Paths = append(e.Paths, p.Path())
				if !seen[dir] {
					seen[dir] = true
					e.Dirs = append(e.Dirs, dir)
				}
				break
			}
		}
	}
	if len(e.Paths) == 0 {
		return nil
	}
	return &e
}

func isOS(f FS) bool {
	_, ok := f.(*OSFS)
	return ok
}

// nearestDir is dir, or its nearest ancestor that exists.
func nearestDir(dir string, known map[string]string) string {
	// Files share directories, and new ones their missing ancestors: each
	// directory is asked once, and every one walked up from takes the
	// answer.
	var missing []string
	found := dir
	for {
		if near, ok := known[dir]; ok {
			found = near
			break
		}
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			found = dir
			break
		} else if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			found = dir // unreadable: Access says why
			break
		}
		missing = append(missing, dir)
		up := filepath.Dir(dir)
		if up == dir {
			found = dir
			break
		}
		dir = up
	}
	known[dir] = found
	for _, d := range missing {
		known[d] = found
	}
	return found
}
