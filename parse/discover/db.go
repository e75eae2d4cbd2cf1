package discover

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// maxSpool bounds a database read from an archive or standard input, which
// SQLite can only open as a file and so is copied to a private temporary
// directory first.
var maxSpool int64 = 8 << 30

// sqliteMagic is how every SQLite database file begins.
var sqliteMagic = []byte("SQLite format 3\x00")

// isSQLite tells a database by its first bytes.
func isSQLite(head []byte) bool { return bytes.HasPrefix(head, sqliteMagic) }

// Spools are the private copies of databases a finder made of those read
// from archives and standard input. The command removes them on its way
// out, when nothing of theirs is read any more.
type Spools struct {
	mu   sync.Mutex
	dirs []string
}

func (s *Spools) add(dir string) {
	s.mu.Lock()
	s.dirs = append(s.dirs, dir)
	s.mu.Unlock()
}

// Remove removes the copies.
func (s *Spools) Remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.dirs {
		os.RemoveAll(d)
	}
	s.dirs = nil
}

// spoolDB copies a database (and its write-ahead log, when wal is not nil)
// into a private temporary directory, bounded by MaxSpool, and lists its
// sessions under name.
func (f *Finder) spoolDB(name string, r io.Reader, wal io.Reader) ([]Candidate, error) {
	dir, err := os.MkdirTemp("", "sandbox-db-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.spools().add(dir)
	p := filepath.Join(dir, "spooled.db")
	if err := spoolFile(p, r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if wal != nil {
		if err := spoolFile(p+"-wal", wal); err != nil {
			return nil, fmt.Errorf("%s-wal: %w", name, err)
		}
	}
	return f.storeDB(p, name, time.Time{}, "")
}

func spoolFile(p string, r io.Reader) error {
	out, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(r, maxSpool+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxSpool {
		err = fmt.Errorf("database larger than %d bytes: not read", maxSpool)
	}
	return err
}

// walOf says whether a member is the write-ahead log of another.
func walOf(name string) (string, bool) {
	return strings.CutSuffix(name, "-wal")
}

// dbSpools collects the databases (and their logs) found among an
// archive's members, copied out, to be opened once every member is seen.
type dbSpools struct {
	spools *Spools
	dir    string
	dbs    []string          // member names, in order
	path   map[string]string // member name -> spooled file
}

// offer looks at a member's first bytes: a database or a database's log is
// spooled (done is true); anything else is left for the caller.
func (d *dbSpools) offer(member string, r io.Reader) (done bool, err error) {
	base, isWAL := walOf(member)
	head := make([]byte, len(sqliteMagic))
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	if !isWAL && !isSQLite(head) {
		return false, nil
	}
	if isWAL && !strings.HasSuffix(base, ".db") {
		return false, nil
	}
	if d.dir == "" {
		dir, err := os.MkdirTemp("", "sandbox-db-*")
		if err != nil {
			return true, err
		}
		d.spools.add(dir)
		d.dir, d.path = dir, map[string]string{}
	}
	p := filepath.Join(d.dir, fmt.Sprintf("m%d", len(d.path)))
	if err := spoolFile(p, io.MultiReader(bytes.NewReader(head), r)); err != nil {
		return true, err
	}
	d.path[member] = p
	if !isWAL {
		d.dbs = append(d.dbs, member)
	}
	return true, nil
}

// open lists the sessions of every database spooled, each with its log
// when the archive had one.
func (d *dbSpools) open(f *Finder, skipped *[]Skipped) []Candidate {
	var out []Candidate
	for _, m := range d.dbs {
		p := d.path[m]
		if wal, ok := d.path[m+"-wal"]; ok {
			if err := os.Rename(wal, p+"-wal"); err != nil {
				*skipped = append(*skipped, Skipped{m + "-wal", err.Error()})
			}
		}
		cands, err := f.storeDB(p, m, time.Time{}, "")
		if err != nil {
			*skipped = append(*skipped, Skipped{m, strings.ReplaceAll(err.Error(), p, m)})
			continue
		}
		out = append(out, cands...)
	}
	return out
}
