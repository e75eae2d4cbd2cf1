package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// GCOptions are the flags of sandbox gc.
type GCOptions struct {
	Idle   time.Duration // stop running sessions idle this long (0: never)
	TTL    time.Duration // remove ended sessions older than this (0: never)
	DryRun bool
	Now    time.Time
	// ArchiveTo, when not nil, keeps the archives of removed sessions
	// there (object storage) instead of in $SANDBOX_HOME/archive.
	ArchiveTo Archiver
}

// Archiver keeps the archives of removed sessions somewhere else than the
// store's archive/ directory.
type Archiver interface {
	// Name is where the archive of session id taken at t goes.
	Name(id string, t time.Time) string
	// Write writes what fill writes at name, whole or not at all: a
	// session is removed only once its archive is kept.
	Write(ctx context.Context, name string, fill func(io.Writer) error) error
}

// GCAction is one thing gc did, or would do.
type GCAction struct {
	Session string `json:"session,omitempty"`
	Action  string `json:"action"` // stop, remove, remove-container
	Reason  string `json:"reason"`
	Archive string `json:"archive,omitempty"`
	// Container is the container a remove-container action removes.
	Container string `json:"container,omitempty"`
	Error     string `json:"error,omitempty"`
}

// GC stops idle sessions, removes expired ones (keeping their record,
// manifest and runtime log in archive/), and removes containers the
// harness left behind.
func (s *Store) GC(ctx context.Context, o GCOptions) ([]GCAction, error) {
	if !o.DryRun {
		s.removeStaleRestores() // left by a restore that was killed
	}
	sessions, _, err := s.List() // a damaged record is left alone: ps reports it
	if err != nil {
		return nil, err
	}
	var acts []GCAction
	live := map[string]bool{}
	for _, sess := range sessions {
		s.Check(ctx, sess)
		idle := o.Now.Sub(s.LastActive(sess))
		if s.Running(sess) {
			live[sess.ID] = true
			if o.Idle > 0 && idle >= o.Idle {
				a := GCAction{Session: sess.ID, Action: "stop", Reason: fmt.Sprintf("idle for %s", idle.Round(time.Second))}
				if !o.DryRun {
					if _, err := s.Stop(ctx, sess, 10*time.Second); err != nil {
						a.Error = err.Error()
					}
				}
				acts = append(acts, a)
			}
			continue
		}
		if o.TTL <= 0 || idle < o.TTL {
			continue
		}
		a := GCAction{Session: sess.ID, Action: "remove", Reason: fmt.Sprintf("ended, inactive for %s", idle.Round(time.Second))}
		if o.ArchiveTo != nil {
			a.Archive = o.ArchiveTo.Name(sess.ID, o.Now)
		} else {
			a.Archive = s.ArchivePathFree(sess.ID, o.Now)
		}
		if !o.DryRun {
			if err := s.archive(ctx, sess.ID, a.Archive, o.ArchiveTo); err != nil {
				a.Error = err.Error()
			} else if err := s.Remove(ctx, sess); err != nil {
				a.Error = err.Error()
			}
		}
		acts = append(acts, a)
	}
	for _, n := range []string{"docker", "podman"} {
		rt, _ := NewRuntime(n, s.Env)
		if rt.Available(ctx) != nil {
			continue
		}
		names, err := leftovers(ctx, rt, s.Root)
		if err != nil {
			continue
		}
		sort.Strings(names)
		for _, c := range names {
			id := sessionOfContainer(c)
			if live[id] {
				continue
			}
			a := GCAction{Session: id, Action: "remove-container", Reason: fmt.Sprintf("%s container of run %s left behind", n, runOfContainer(c)), Container: c}
			if !o.DryRun {
				if err := removeContainer(ctx, rt, c); err != nil {
					a.Error = err.Error()
				}
			}
			acts = append(acts, a)
		}
	}
	return acts, nil
}

// sessionOfContainer reads the session id out of sandbox-<id>-<run>.
func sessionOfContainer(name string) string {
	name = strings.TrimPrefix(name, "sandbox-")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

// runOfContainer reads the run number out of sandbox-<id>-<run>.
func runOfContainer(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[i+1:]
	}
	return "?"
}

// archive keeps what a removed session leaves: its record, manifest and
// logs, at path, or through to when it is not nil.
func (s *Store) archive(ctx context.Context, id, path string, to Archiver) error {
	keep := func(rel string) bool {
		return rel == "session.json" || rel == "manifest.json" || strings.HasPrefix(rel, "logs/")
	}
	fill := func(w io.Writer) error {
		_, err := s.Snapshot(id, w, keep)
		return err
	}
	if to != nil {
		return to.Write(ctx, path, fill)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return WriteFileAtomic(path, fill)
}

// ArchiveSession writes a whole session (record, workspace, logs,
// manifest) as a snapshot at path, which sandbox restore brings back: what
// rm keeps unless told to purge.
func (s *Store) ArchiveSession(ctx context.Context, id, path string) (*SnapshotResult, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	var res *SnapshotResult
	err := WriteFileAtomic(path, func(w io.Writer) error {
		var err error
		res, err = s.Snapshot(id, CtxWriter(ctx, w), nil)
		return err
	})
	return res, err
}

// CtxWriter fails its writes once ctx is done: a snapshot or archive being
// written stops at a ^C, and WriteFileAtomic leaves no partial file.
func CtxWriter(ctx context.Context, w io.Writer) io.Writer { return &ctxWriter{ctx, w} }

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// ArchivePathFree is ArchivePath, or with -2, -3… when that name is taken:
// two removals within one second each keep their own archive.
func (s *Store) ArchivePathFree(id string, t time.Time) string {
	p := s.ArchivePath(id, t)
	for n := 2; ; n++ {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p
		}
		p = strings.TrimSuffix(s.ArchivePath(id, t), ".tar.gz") + "-" + strconv.Itoa(n) + ".tar.gz"
	}
}

// ArchivePath is where an archive of a session taken at t goes.
func (s *Store) ArchivePath(id string, t time.Time) string {
	return filepath.Join(s.Root, "archive", id+"-"+t.UTC().Format("20060102T150405Z")+".tar.gz")
}

// Usage is how many files and bytes a session's directory holds, links
// not followed.
func (s *Store) Usage(id string) (files int, bytes int64) {
	_ = filepath.WalkDir(s.Dir(id), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			files++
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
			}
		}
		return nil
	})
	return files, bytes
}
