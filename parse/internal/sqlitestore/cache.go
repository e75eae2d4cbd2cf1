package sqlitestore

import (
	"runtime"
	"sync"
)

// Cache keeps, per process, one handle of each database an agent's reader
// opened, with what the reader made of it (S: the database checked, its
// statements): every session of a database shares them. A database that
// changed since it was opened (a long-running process that looks again) is
// opened anew, since an immutable handle must never see its file change;
// the old handle stays with whoever still reads it. The zero value is ready.
type Cache[S any] struct {
	mu sync.Mutex
	m  map[string]cached[S]
}

type cached[S any] struct {
	db *DB
	s  S
}

// Open returns the handle of the database at path: the one kept while the
// database has not changed, else one opened now (Open) and made into S by
// check, which refuses a database that is not the agent's. cursors is how
// many statements a session's read holds open at once: that many
// connections per processor stay open between sessions, since opening one
// reads the schema again.
func (c *Cache[S]) Open(path string, cursors int, check func(*DB) (S, error)) (S, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[path]; ok && e.db.Sig == Signature(path) {
		return e.s, nil
	}
	var zero S
	db, err := Open(path)
	if err != nil {
		return zero, err
	}
	db.SetMaxIdleConns(cursors*runtime.GOMAXPROCS(0) + 2)
	s, err := check(db)
	if err != nil {
		db.Close()
		return zero, err
	}
	if c.m == nil {
		c.m = map[string]cached[S]{}
	}
	c.m[path] = cached[S]{db, s}
	return s, nil
}

// Forget closes the database opened at path, if any, and drops it: the
// next Open opens it again. Tests that open many databases call it.
func (c *Cache[S]) Forget(path string) {
	c.mu.Lock()
	e, ok := c.m[path]
	delete(c.m, path)
	c.mu.Unlock()
	if ok {
		e.db.Close()
	}
}
