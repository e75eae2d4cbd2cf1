package recover

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// BusyError is a destination another sandbox process is writing to.
type BusyError struct {
	Root string
	// Holder describes the other process, as it wrote itself into the lock.
	Holder string
}

func (e *BusyError) Error() string {
	msg := "another sandbox is writing to " + e.Root
	if e.Holder != "" {
		msg += " (" + e.Holder + ")"
	}
	return msg + ": wait for it to finish, then try again"
}

type lockInfo struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// LockDests takes the write lock of every destination root, so that only
// one recover, apply or undo plans and writes into a destination at a time.
// The locks live in dir (the state directory, never the user's tree), one
// file per destination keyed by its absolute path; they are flock(2) locks,
// released by unlock or when the process ends, however it ends. A root
// another process holds is a *BusyError, and nothing is locked.
func LockDests(dir string, roots []string) (unlock func(), err error) {
	var abs []string
	seen := map[string]bool{}
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			abs = append(abs, a)
		}
	}
	sort.Strings(abs) // one order for every process: no deadlock
	if err := os.MkdirAll(filepath.Join(dir, "locks"), 0o700); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	var held []*os.File
	release := func() {
		for _, f := range held {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
	}
	for _, a := range abs {
		h := sha256.Sum256([]byte(a))
		name := filepath.Join(dir, "locks", hex.EncodeToString(h[:8])+".lock")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			release()
			return nil, fmt.Errorf("lock for %s: %w", a, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder := ""
			if errors.Is(err, syscall.EWOULDBLOCK) {
				var li lockInfo
				buf := make([]byte, 4096)
				n, _ := f.ReadAt(buf, 0)
				if json.Unmarshal(buf[:n], &li) == nil && li.PID > 0 {
					holder = fmt.Sprintf("pid %d, %s, since %s", li.PID, li.Command, li.Since.Format(time.RFC3339))
				}
				f.Close()
				release()
				return nil, &BusyError{Root: a, Holder: holder}
			}
			f.Close()
			release()
			return nil, fmt.Errorf("lock for %s: %w", a, err)
		}
		info, _ := json.Marshal(lockInfo{PID: os.Getpid(), Command: commandName(), Since: time.Now().UTC().Truncate(time.Second)})
		_ = f.Truncate(0)
		_, _ = f.WriteAt(append(info, '\n'), 0)
		held = append(held, f)
	}
	return release, nil
}

func commandName() string {
	if len(os.Args) > 1 {
		return filepath.Base(os.Args[0]) + " " + strings.Join(os.Args[1:2], " ")
	}
	return filepath.Base(os.Args[0])
}
