package discover

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/internal/fskind"
	"github.com/agentsandbox/sandbox/manifest"
)

// A Source is how discovery finds one agent's sessions: where its home is,
// and how its sessions lie in it. Each agent's package implements it (with
// the rest of the agent, parse/agent.Agent) and registers it; discovery
// names no agent.
type Source interface {
	// Name is the agent's name.
	Name() manifest.Agent
	// Home returns the agent's folder of sessions as the environment names
	// it (getenv reads a variable; home is the user's home directory, maybe
	// empty), or "" when there is none.
	Home(getenv func(string) string, home string) string
	// HomeIn returns the agent's folder when workspace is its HOME (a
	// harness session's workspace).
	HomeIn(workspace string) string
	// Scan lists the sessions in the agent's folder dir whose activity may
	// fall in w (pruning by what the folder layout and modification times
	// show); harness names the harness session dir belongs to, if any.
	Scan(f *Finder, dir string, w Window, harness string) []Candidate
}

// A Store is a Source whose sessions live in a database or a file store of
// many sessions rather than one file each. Discovery asks the
// registered stores about each SQLite database and folder it meets in a
// --from tree or archive.
type Store interface {
	Source
	// DB lists the sessions of the SQLite database at path, updated since
	// since (zero: all); name is how the database is called in messages.
	// ErrNotMine says the database is not the agent's.
	DB(f *Finder, path, name string, since time.Time, harness string) ([]Candidate, error)
	// StoreDir lists the sessions of dir, a folder met in a --from tree,
	// when it is a file store of the agent's (ok).
	StoreDir(f *Finder, dir string) (cands []Candidate, ok bool)
}

// A FileStore is a Store whose sessions live in a folder of many small
// files rather than a database (opencode's legacy storage/): StoreOf says,
// for a file's slash path, the path of the store folder it lies in. A
// vault, which keeps files one by one, brings such a folder back whole to
// read it (Finder.KeptStore).
type FileStore interface {
	StoreOf(path string) (root string, ok bool)
}

// StoreOf asks the registered file stores which store folder the file at
// path (a slash path) lies in, if any.
func StoreOf(path string) (string, bool) {
	for _, s := range Sources() {
		if fs, ok := s.(FileStore); ok {
			if root, ok := fs.StoreOf(path); ok {
				return root, true
			}
		}
	}
	return "", false
}

// ErrNotMine is a Store's answer for a database of another program.
var ErrNotMine = errors.New("not a database of this agent")

var (
	regMu   sync.RWMutex
	sources []Source
)

// Register adds agents' sources, in the order discovery lists homes (and
// detection breaks ties). parse/agent.Register calls it.
func Register(s ...Source) {
	regMu.Lock()
	defer regMu.Unlock()
	sources = append(sources, s...)
}

// Sources returns the registered sources, in order.
func Sources() []Source {
	regMu.RLock()
	defer regMu.RUnlock()
	return sources
}

func stores() []Store {
	var out []Store
	for _, s := range Sources() {
		if st, ok := s.(Store); ok {
			out = append(out, st)
		}
	}
	return out
}

// storeDB lists the sessions of a SQLite database through the first
// registered store that owns it.
func (f *Finder) storeDB(path, name string, since time.Time, harness string) ([]Candidate, error) {
	var first error
	for _, st := range stores() {
		c, err := st.DB(f, path, name, since, harness)
		if err == nil {
			return c, nil
		}
		if first == nil || errors.Is(first, ErrNotMine) {
			first = err
		}
	}
	if first == nil {
		first = errors.New("a SQLite database of no agent sandbox reads")
	}
	return nil, first
}

// storeDir lists the sessions of a folder that is a registered agent's file
// store.
func (f *Finder) storeDir(dir string) ([]Candidate, bool) {
	for _, st := range stores() {
		if c, ok := st.StoreDir(f, dir); ok {
			return c, true
		}
	}
	return nil, false
}

// Files returns the filesystem discovery reads.
func (f *Finder) Files() FS { return f.fs() }

// Look records a place looked in, for "not found" messages.
func (f *Finder) Look(dir ...string) { f.Looked = append(f.Looked, dir...) }

// Problem records a store in a home that could not be read.
func (f *Finder) Problem(name string, err error) {
	f.Problems = append(f.Problems, Skipped{name, err.Error()})
}

// FileCandidate makes the candidate of a transcript file of agent.
func (f *Finder) FileCandidate(p string, info fs.FileInfo, agent manifest.Agent, harness string) Candidate {
	return f.fileCandidate(p, info, agent, harness)
}

// Keep applies the modification-time prune: a file not modified since the
// window's start holds no activity in it.
func Keep(info fs.FileInfo, w Window) bool { return keep(info, w) }

// IDFromName is the session id a transcript's file name carries (the last
// UUID in it), or "".
func IDFromName(name string) string { return iDFromName(name) }

// IsTranscriptName says whether a file name has a transcript's extension
// (.jsonl or .json, plain or compressed).
func IsTranscriptName(name string) bool { return isTranscriptName(name) }

// Regular takes a file a home's folder lists only when it is a regular
// file or a symbolic link to one, and returns what it is (the link's
// target, for a link). Anything else named like a transcript (a named pipe,
// which would block its reader forever; a socket; a device) is not read,
// and is said as a problem.
func (f *Finder) Regular(p string, info fs.FileInfo) (fs.FileInfo, bool) {
	if info.Mode().IsRegular() {
		return info, true
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := f.fs().Stat(p)
		if err != nil {
			return nil, false // a dangling link: nothing to read
		}
		if target.Mode().IsRegular() {
			return target, true
		}
		info = target
	}
	if info.IsDir() {
		return nil, false
	}
	f.Problem(p, errors.New(fskind.Of(info.Mode())+", not a file: not read"))
	return nil, false
}

// ScanFiles lists the transcript files directly in dir that name accepts,
// as candidates of agent, pruned by w.
func (f *Finder) ScanFiles(dir string, agent manifest.Agent, w Window, harness string, accept func(name string) bool) []Candidate {
	var out []Candidate
	entries, _ := f.fs().ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() || !accept(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			continue
		}
		if info, ok := f.Regular(p, info); ok && keep(info, w) {
			out = append(out, f.fileCandidate(p, info, agent, harness))
		}
	}
	return out
}

// ScanSubdirs looks in root (recording it for "not found" messages) and
// lists, in each folder directly under it, the transcript files accept
// takes, as candidates of agent pruned by w: the layout most agents keep
// their sessions in (one folder per project).
func (f *Finder) ScanSubdirs(root string, agent manifest.Agent, w Window, harness string, accept func(name string) bool) []Candidate {
	f.Look(root)
	var out []Candidate
	for _, d := range f.Subdirs(root) {
		out = append(out, f.ScanFiles(filepath.Join(root, d), agent, w, harness, accept)...)
	}
	return out
}

// Subdirs lists the folders in dir.
func (f *Finder) Subdirs(dir string) []string {
	var out []string
	entries, _ := f.fs().ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// StoreCandidate makes the candidate of a session a store holds: open reads
// its records; children, when not nil, lists the sessions started from it.
func StoreCandidate(c Candidate, open func() (io.ReadCloser, error), children func() []Candidate) Candidate {
	c.open, c.children = open, children
	return c
}
