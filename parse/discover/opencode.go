package discover

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/opencode"
)

// MaxSpool bounds a database read from an archive or standard input, which
// SQLite can only open as a file and so is copied to a private temporary
// directory first.
var MaxSpool int64 = 8 << 30

// opencodeHome returns opencode's data directory: $XDG_DATA_HOME/opencode,
// else ~/.local/share/opencode.
func opencodeHome(home string) string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "opencode")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "opencode")
}

// opencodeDBName matches opencode.db and the per-channel opencode-<channel>.db.
var opencodeDBName = regexp.MustCompile(`^opencode(-[A-Za-z0-9._-]+)?\.db$`)

// opencodeHome lists the sessions of opencode's data directory: those of
// its databases, then those of the legacy file store that no database
// holds (the store is migrated into the database, and may remain).
func (f *Finder) opencodeHome(dir string, w Window, harness string) []Candidate {
	f.Looked = append(f.Looked, dir)
	var out []Candidate
	inDB := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.Type().IsRegular() || !opencodeDBName.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			continue
		}
		// The database file keeps its time while writes go to its log.
		mod := info.ModTime()
		if wal, err := os.Stat(p + "-wal"); err == nil && wal.ModTime().After(mod) {
			mod = wal.ModTime()
		}
		if !w.Since.IsZero() && mod.Before(w.Since) {
			continue
		}
		cands, err := f.opencodeDB(p, p, w.Since, harness)
		if err != nil {
			f.Problems = append(f.Problems, Skipped{p, err.Error()})
			continue
		}
		for _, c := range cands {
			inDB[c.ID] = true
		}
		out = append(out, cands...)
	}
	storage := filepath.Join(dir, "storage")
	if opencode.IsLegacy(storage) {
		for _, c := range f.opencodeLegacy(storage, w, harness) {
			if !inDB[c.ID] {
				out = append(out, c)
			}
		}
	}
	return out
}

// opencodeDB lists the sessions of an opencode database updated since the
// window's start; name is how the database is called in messages.
func (f *Finder) opencodeDB(path, name string, since time.Time, harness string) ([]Candidate, error) {
	db, err := opencode.OpenDB(path)
	if err != nil {
		return nil, err
	}
	sessions, err := db.Sessions(since)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, 0, len(sessions))
	for _, s := range sessions {
		s := s
		c := Candidate{Name: name + "#" + s.ID, Agent: manifest.AgentOpencode, ModTime: s.Updated, ID: s.ID, Harness: harness,
			Listed: &Listed{Cwd: s.Directory, First: s.Created, Last: s.Updated}}
		c.open = func() (io.ReadCloser, error) { return db.Records(s), nil }
		c.children = func() []Candidate {
			var kids []Candidate
			for _, k := range db.Descendants(s.ID) {
				k := k
				kc := Candidate{Name: name + "#" + k.ID, Agent: manifest.AgentOpencode, ModTime: k.Updated, ID: k.ID, Harness: harness,
					Listed: &Listed{Cwd: k.Directory, First: k.Created, Last: k.Updated}}
				kc.open = func() (io.ReadCloser, error) { return db.Records(k), nil }
				kids = append(kids, kc)
			}
			return kids
		}
		out = append(out, c)
	}
	return out, nil
}

// opencodeLegacy lists the sessions of a legacy opencode file store whose
// activity is not older than the window.
func (f *Finder) opencodeLegacy(storage string, w Window, harness string) []Candidate {
	l := opencode.Legacy{Root: storage}
	sessions := l.Sessions()
	// The store's family tree, built once for all its sessions.
	var once sync.Once
	var kids map[string][]opencode.SessionInfo
	byID := map[string]opencode.LegacySession{}
	family := func(id string) []opencode.SessionInfo {
		once.Do(func() {
			infos := make([]opencode.SessionInfo, len(sessions))
			for i, a := range sessions {
				infos[i] = a.SessionInfo
				byID[a.ID] = a
			}
			kids = opencode.ChildrenOf(infos)
		})
		return opencode.Descendants(id, kids)
	}
	var out []Candidate
	for _, s := range sessions {
		s := s
		if !w.Since.IsZero() && s.ModTime.Before(w.Since) {
			continue
		}
		c := legacyCandidate(l, s, harness)
		c.children = func() []Candidate {
			var out []Candidate
			for _, k := range family(s.ID) {
				out = append(out, legacyCandidate(l, byID[k.ID], harness))
			}
			return out
		}
		out = append(out, c)
	}
	return out
}

func legacyCandidate(l opencode.Legacy, s opencode.LegacySession, harness string) Candidate {
	last := s.Updated
	if last.IsZero() {
		last = s.ModTime
	}
	first := s.Created
	if first.IsZero() {
		first = last
	}
	c := Candidate{Name: filepath.Join(l.Root, "session") + "#" + s.ID, Agent: manifest.AgentOpencode, ModTime: s.ModTime, ID: s.ID,
		Harness: harness, Listed: &Listed{Cwd: s.Directory, First: first, Last: last}}
	c.open = func() (io.ReadCloser, error) { return l.Records(s), nil }
	return c
}

// isSQLite tells a database by its first bytes.
func isSQLite(head []byte) bool { return bytes.HasPrefix(head, opencode.SQLiteMagic) }

var (
	spoolMu   sync.Mutex
	spoolDirs []string
)

// RemoveSpools removes the private copies of databases read from archives
// and standard input. The command calls it on its way out.
func RemoveSpools() {
	spoolMu.Lock()
	defer spoolMu.Unlock()
	for _, d := range spoolDirs {
		os.RemoveAll(d)
	}
	spoolDirs = nil
}

// spoolDB copies a database (and its write-ahead log, when wal is not nil)
// into a private temporary directory, bounded by MaxSpool, and lists its
// sessions under name.
func (f *Finder) spoolDB(name string, r io.Reader, wal io.Reader) ([]Candidate, error) {
	dir, err := os.MkdirTemp("", "sandbox-opencode-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	spoolMu.Lock()
	spoolDirs = append(spoolDirs, dir)
	spoolMu.Unlock()
	p := filepath.Join(dir, "opencode.db")
	if err := spoolFile(p, r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if wal != nil {
		if err := spoolFile(p+"-wal", wal); err != nil {
			return nil, fmt.Errorf("%s-wal: %w", name, err)
		}
	}
	return f.opencodeDB(p, name, time.Time{}, "")
}

func spoolFile(p string, r io.Reader) error {
	out, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(r, MaxSpool+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxSpool {
		err = fmt.Errorf("database larger than %d bytes: not read", MaxSpool)
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
	dir  string
	dbs  []string          // member names, in order
	path map[string]string // member name -> spooled file
}

// offer looks at a member's first bytes: a database or a database's log is
// spooled (done is true); anything else is left for the caller.
func (d *dbSpools) offer(member string, r io.Reader) (done bool, err error) {
	base, isWAL := walOf(member)
	head := make([]byte, len(opencode.SQLiteMagic))
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	if !isWAL && !isSQLite(head) {
		return false, nil
	}
	if isWAL && !strings.HasSuffix(base, ".db") {
		return false, nil
	}
	if d.dir == "" {
		dir, err := os.MkdirTemp("", "sandbox-opencode-*")
		if err != nil {
			return true, err
		}
		spoolMu.Lock()
		spoolDirs = append(spoolDirs, dir)
		spoolMu.Unlock()
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
		cands, err := f.opencodeDB(p, m, time.Time{}, "")
		if err != nil {
			*skipped = append(*skipped, Skipped{m, strings.ReplaceAll(err.Error(), p, m)})
			continue
		}
		out = append(out, cands...)
	}
	return out
}
