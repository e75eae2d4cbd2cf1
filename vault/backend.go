package vault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/internal/flock"
	"github.com/agentsandbox/sandbox/internal/fskind"
	"github.com/agentsandbox/sandbox/objstore"
)

// errExists is a create refused because the key is taken.
var errExists = errors.New("exists")

// entry is a key a listing found.
type entry struct {
	key  string
	size int64
	// mod is when the object was written: a key is written once, so this
	// is when the vault first held it.
	mod time.Time
	// odd, when not empty, says what the entry is instead of an object:
	// a folder vault met something no sync writes there (a symbolic
	// link, a named pipe). Readers pass it over; Planted reports it.
	odd string
}

// backend is where a vault's objects live: a local directory or an S3
// prefix. Keys are slash-separated paths under the vault's root. No method
// overwrites or removes an object, but remove (which only prune calls).
type backend interface {
	// create writes data at key unless something is there (errExists):
	// the object appears whole or not at all.
	create(ctx context.Context, key string, data []byte) error
	// has says whether key holds an object.
	has(ctx context.Context, key string) (bool, error)
	// get reads the object at key (fs.ErrNotExist when there is none).
	get(ctx context.Context, key string) ([]byte, error)
	// list returns every key under prefix (a folder, ending in "/").
	list(ctx context.Context, prefix string) ([]entry, error)
	// lock waits until this is the only sync of the vault; the function
	// it returns lets the next one go.
	lock(ctx context.Context) (func(), error)
	// remove deletes an object (prune only).
	remove(ctx context.Context, key string) error
	String() string
}

// dirBackend is a vault in a local directory. An object is written to a
// private temporary file, flushed to disk, then linked at its key: link(2)
// fails when the key is taken, so two writers never overwrite each other
// and a reader never sees half an object, even after a kill -9 (which
// leaves at most a temporary file, removed by the next sync). Every path
// is resolved inside the root (os.Root): a symbolic link planted in the
// vault cannot send a write, a read or a removal outside it.
type dirBackend struct {
	root string
	// opened keeps the root open once it exists: a read of many versions
	// opens it once, not once a key.
	opened *openRoot
}

type openRoot struct {
	mu sync.Mutex
	r  *os.Root
}

func (d dirBackend) String() string { return d.root }

func (d dirBackend) path(key string) string {
	return filepath.Join(d.root, filepath.FromSlash(key))
}

// open opens the vault's folder for reading, as the root every key is
// resolved in; the root stays open for the vault's life (its Close does
// nothing).
func (d dirBackend) open() (keptRoot, error) {
	if d.opened == nil {
		r, err := os.OpenRoot(d.root)
		return keptRoot{r, true}, err
	}
	d.opened.mu.Lock()
	defer d.opened.mu.Unlock()
	if d.opened.r == nil {
		r, err := os.OpenRoot(d.root)
		if err != nil {
			return keptRoot{}, err
		}
		d.opened.r = r
	}
	return keptRoot{d.opened.r, false}, nil
}

// fresh opens the vault's folder for one call: a write goes to the folder
// the path names now (a --watch that outlives a vault moved or made anew
// writes into the new one).
func (d dirBackend) fresh() (keptRoot, error) {
	r, err := os.OpenRoot(d.root)
	return keptRoot{r, true}, err
}

// keptRoot is the vault's root, closed by Close only when it was opened
// for one call.
type keptRoot struct {
	*os.Root
	own bool
}

func (k keptRoot) Close() error {
	if k.own {
		return k.Root.Close()
	}
	return nil
}

// escaped says in the vault's terms an error of a path that left the
// root through a symbolic link planted in it. os.Root's error for this has
// no exported value; its text is stable ("path escapes from parent").
func (d dirBackend) escaped(key string, err error) error {
	if err != nil && strings.Contains(err.Error(), "escapes from parent") {
		return fmt.Errorf("%s: a symbolic link in the vault leads out of it; nothing is written or read through it (sandbox vault verify lists such links): %w", d.path(key), err)
	}
	return err
}

func (d dirBackend) create(ctx context.Context, key string, data []byte) error {
	return d.escaped(key, d.create1(ctx, key, data))
}

func (d dirBackend) create1(_ context.Context, key string, data []byte) error {
	if err := os.MkdirAll(d.root, 0o700); err != nil {
		return err
	}
	r, err := d.fresh()
	if err != nil {
		return err
	}
	defer r.Close()
	name := filepath.FromSlash(key)
	if _, err := r.Lstat(name); err == nil {
		return errExists
	}
	if err := r.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", d.path(key), err)
	}
	if err := r.MkdirAll("tmp", 0o700); err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join("tmp", hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer r.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", d.path(key), err)
	}
	if err := r.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errExists
		}
		return fmt.Errorf("writing %s: %w", d.path(key), err)
	}
	// The linked object survives a crash of the machine once its folder's
	// entries are flushed (best effort: not every system can open a folder).
	if dir, err := r.Open(filepath.Dir(name)); err == nil {
		_ = dir.Sync()
		dir.Close()
	}
	return nil
}

func (d dirBackend) has(_ context.Context, key string) (bool, error) {
	r, err := d.open()
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer r.Close()
	_, err = r.Lstat(filepath.FromSlash(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (d dirBackend) get(_ context.Context, key string) ([]byte, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := r.ReadFile(filepath.FromSlash(key))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A link that leaves the vault, say, in the vault's own terms.
		if e := d.escaped(key, err); e != err {
			return nil, e
		}
		return nil, fmt.Errorf("%s: %w", d.path(key), err)
	}
	return data, err
}

func (d dirBackend) list(_ context.Context, prefix string) ([]entry, error) {
	var out []entry
	root := d.path(prefix)
	// WalkDir follows no symbolic link below root, and root itself (a
	// folder of the vault) is taken only when it is a real folder.
	if info, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	} else if !info.IsDir() {
		return []entry{{key: strings.TrimSuffix(prefix, "/"), odd: fskind.Of(info.Mode())}}, nil
	}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		if !e.Type().IsRegular() {
			rel, _ := filepath.Rel(d.root, p)
			out = append(out, entry{key: filepath.ToSlash(rel), odd: fskind.Of(e.Type())})
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil // gone since the folder was read
		}
		rel, _ := filepath.Rel(d.root, p)
		out = append(out, entry{key: filepath.ToSlash(rel), size: info.Size(), mod: info.ModTime()})
		return nil
	})
	return out, err
}

func (d dirBackend) lock(context.Context) (func(), error) {
	if err := os.MkdirAll(d.root, 0o700); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(d.root, "lock")
	if info, err := os.Lstat(lockPath); err == nil && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("locking %s: %s is not a regular file", d.root, lockPath)
	}
	unlock, err := flock.Lock(lockPath)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", d.root, err)
	}
	// Only the lock's holder writes temporary files: what is left there
	// was a killed sync's.
	if r, err := d.fresh(); err == nil {
		if dir, err := r.Open("tmp"); err == nil {
			old, _ := dir.ReadDir(-1)
			dir.Close()
			for _, e := range old {
				_ = r.Remove(filepath.Join("tmp", e.Name()))
			}
		}
		r.Close()
	}
	return unlock, nil
}

func (d dirBackend) remove(_ context.Context, key string) error {
	r, err := d.fresh()
	if err != nil {
		return err
	}
	defer r.Close()
	err = r.Remove(filepath.FromSlash(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// s3Backend is a vault under an S3 prefix. Every write is conditional
// (If-None-Match: *): two machines syncing into one vault never overwrite
// each other's objects.
type s3Backend struct {
	client *objstore.Client
	at     objstore.Loc // Key is the prefix, ending in "/" or empty
}

func (s s3Backend) String() string { return s.at.String() }

func (s s3Backend) loc(key string) objstore.Loc {
	return objstore.Loc{Bucket: s.at.Bucket, Key: s.at.Key + key}
}

func (s s3Backend) create(ctx context.Context, key string, data []byte) error {
	err := s.client.Create(ctx, s.loc(key), data)
	if errors.Is(err, objstore.ErrExists) {
		return errExists
	}
	return err
}

func (s s3Backend) has(ctx context.Context, key string) (bool, error) {
	_, err := s.client.Head(ctx, s.loc(key))
	if errors.Is(err, objstore.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s s3Backend) get(ctx context.Context, key string) ([]byte, error) {
	data, err := s.client.Get(ctx, s.loc(key))
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return data, err
}

func (s s3Backend) list(ctx context.Context, prefix string) ([]entry, error) {
	objs, err := s.client.List(ctx, s.loc(prefix))
	if err != nil {
		return nil, err
	}
	out := make([]entry, 0, len(objs))
	for _, o := range objs {
		out = append(out, entry{key: strings.TrimPrefix(o.Key, s.at.Key), size: o.Size, mod: o.LastModified})
	}
	return out, nil
}

// lockTTL is how long an S3 vault's lock holds without its holder: a lock
// object older than this was left by a sync that died.
const lockTTL = 10 * time.Minute

// lock takes the vault's lock object, created only when absent; a lock
// left by a dead sync (older than lockTTL) is taken over.
func (s s3Backend) lock(ctx context.Context) (func(), error) {
	host, _ := os.Hostname()
	body := fmt.Appendf(nil, `{"host":%q,"pid":%d,"since":%q}`, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))
	l := s.loc("lock")
	for {
		err := s.client.Create(ctx, l, body)
		if err == nil {
			return func() { _ = s.client.Delete(context.WithoutCancel(ctx), l) }, nil
		}
		if !errors.Is(err, objstore.ErrExists) {
			return nil, err
		}
		if info, herr := s.client.Head(ctx, l); herr == nil && time.Since(info.LastModified) > lockTTL {
			_ = s.client.Delete(ctx, l)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s s3Backend) remove(ctx context.Context, key string) error {
	return s.client.Delete(ctx, s.loc(key))
}
