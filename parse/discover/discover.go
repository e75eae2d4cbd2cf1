// Package discover finds agent transcripts: in the agents' default homes
// (each registered agent's, the harness's workspaces) and in whatever --from
// names (a directory tree, a zip or tar archive, a single file, standard
// input). It returns candidates with the hints that can be had without
// opening them (modification time, the Codex date folder, the session id in
// the file name), so that selection prunes before it opens anything.
//
// Archive members are read in place and never extracted: a member named
// "../x" or a symbolic link is only a name here.
package discover

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/manifest"
)

// File is an open transcript or archive.
type File interface {
	io.Reader
	io.ReaderAt
	io.Closer
}

// FS is how discovery reads the host. The real one is the operating system;
// tests count the files opened through theirs.
type FS interface {
	ReadDir(dir string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	Open(name string) (File, error)
}

// OS is the real filesystem.
type OS struct{}

// ReadDir implements FS.
func (OS) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }

// Stat implements FS.
func (OS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Open implements FS.
func (OS) Open(name string) (File, error) { return os.Open(name) }

// Candidate is a transcript that may be selected.
type Candidate struct {
	// Name says where it is: a path, or ARCHIVE!MEMBER.
	Name string
	// Path is the file on the host, when it is one (not an archive member).
	Path string
	// Agent is known from the location; empty means tell it by content.
	Agent   manifest.Agent
	ModTime time.Time
	Size    int64
	// Day is the local date of the Codex date folder it is in, if any.
	Day time.Time
	// ID is the session id read from the file name, if any.
	ID string
	// Harness is the harness session it belongs to, if any.
	Harness string
	// Store is the database (or the folder of a file store) that holds
	// the session, for a store's candidate.
	Store string
	// Listed is what a store of many sessions (an agent's database) said
	// of this one when it listed it; nil for a transcript file.
	Listed *Listed
	open   func() (io.ReadCloser, error)
	readAt func() (io.ReaderAt, int64, func(), error)
	// children lists the sessions a store holds whose parent is this one
	// (subagent sessions), when the candidate is a store's.
	children func() []Candidate
	// Homes are the agents' homes of the environment the candidate is
	// read in (DefaultHomes), for an agent that keeps more of a session
	// there than beside the transcript: Claude Code's file-history backups
	// of a transcript copied out of its projects folder. Without them
	// nothing is looked for there.
	Homes map[manifest.Agent]string
}

// Children returns the sessions started from this one that its store holds
// (a task's subagent sessions, and theirs), or none.
func (c *Candidate) Children() []Candidate {
	if c.children == nil {
		return nil
	}
	return c.children()
}

// Open opens the candidate's content (compressed, maybe).
func (c *Candidate) Open() (io.ReadCloser, error) { return c.open() }

// Tail returns up to n bytes from the end of the candidate's raw content,
// when it can be read without reading all of it (a plain file); ok is false
// otherwise.
func (c *Candidate) Tail(n int64) ([]byte, bool) {
	if c.readAt == nil {
		return nil, false
	}
	ra, size, done, err := c.readAt()
	if err != nil {
		return nil, false
	}
	defer done()
	off := size - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, size-off)
	k, err := ra.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	return buf[:k], true
}

// Listed is a session's working directory and time span, as the store that
// holds it lists them.
type Listed struct {
	Cwd         string
	First, Last time.Time
}

// Homes are the agents' and the harness's state directories.
type Homes struct {
	// Agents holds each agent's folder of sessions, by agent (an agent with
	// none, or an empty one, is not looked for).
	Agents map[manifest.Agent]string
	// Sandbox is the harness's state directory.
	Sandbox string
}

// DefaultHomes returns the homes env names: each registered agent's
// (Source.Home), and $SANDBOX_HOME or $XDG_STATE_HOME/sandbox or
// ~/.local/state/sandbox.
func DefaultHomes(env osenv.Env) Homes {
	home, _ := env.Home()
	h := Homes{Agents: map[manifest.Agent]string{}, Sandbox: env.Get("SANDBOX_HOME")}
	for _, s := range Sources() {
		h.Agents[s.Name()] = s.Home(env.Get, home)
	}
	if h.Sandbox == "" {
		if x := env.Get("XDG_STATE_HOME"); x != "" {
			h.Sandbox = filepath.Join(x, "sandbox")
		} else if home != "" {
			h.Sandbox = filepath.Join(home, ".local", "state", "sandbox")
		}
	}
	return h
}

// HomesIn returns the homes of the agents when workspace is their HOME.
func HomesIn(workspace string) Homes {
	h := Homes{Agents: map[manifest.Agent]string{}}
	for _, s := range Sources() {
		h.Agents[s.Name()] = s.HomeIn(workspace)
	}
	return h
}

// Window is a time window; a zero bound is open.
type Window struct {
	Since, Until time.Time
}

// Finder walks homes and sources.
type Finder struct {
	FS FS
	// Vaults, when not nil, reads what From is given when it names a vault
	// of transcripts (ok), as the versions it keeps.
	Vaults func(f *Finder, name string) (cands []Candidate, skipped []Skipped, ok bool, err error)
	// Looked lists the places looked in, for "not found" messages.
	Looked []string
	// Problems are stores in the homes that could not be read (a damaged
	// agent's database), for the command to report.
	Problems []Skipped
	// S3 reaches object storage for s3:// sources; nil is the AWS
	// configuration of the environment.
	S3 *S3
	// Window, when set, lets From leave out what its metadata alone shows
	// to be outside it (an object last modified before its start), so that
	// nothing of it is read.
	Window Window
	// Spools keep the private copies of databases read from archives and
	// standard input, which the caller removes when it is done with the
	// candidates (Spools.Remove). Nil: the finder keeps its own
	// (Finder.RemoveSpools).
	Spools *Spools
}

func (f *Finder) spools() *Spools {
	if f.Spools == nil {
		f.Spools = &Spools{}
	}
	return f.Spools
}

// RemoveSpools removes the private copies of databases the finder made.
func (f *Finder) RemoveSpools() { f.spools().Remove() }

func (f *Finder) fs() FS {
	if f.FS == nil {
		return OS{}
	}
	return f.FS
}

var (
	uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
)

// iDFromName returns the session id in a transcript's file name: the
// right-most UUID (Codex's rollout-<time>-<uuid>, Claude's <uuid>.jsonl).
func iDFromName(name string) string {
	all := uuidRe.FindAllString(path.Base(filepath.ToSlash(name)), -1)
	if len(all) == 0 {
		return ""
	}
	return strings.ToLower(all[len(all)-1])
}

func isTranscriptName(name string) bool {
	for _, ext := range []string{".jsonl", ".jsonl.zst", ".jsonl.gz", ".json", ".json.gz", ".json.zst"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Homes finds the transcripts in the homes, pruning by the window
// before opening anything: a Codex date folder after the window's end
// cannot hold a session in it, and a file not modified since the window's
// start cannot hold activity after it.
func (f *Finder) Homes(h Homes, w Window) []Candidate {
	var out []Candidate
	for _, s := range Sources() {
		if dir := h.Agents[s.Name()]; dir != "" {
			out = append(out, s.Scan(f, dir, w, "")...)
		}
	}
	if h.Sandbox != "" {
		out = append(out, f.harness(h.Sandbox, w)...)
	}
	return out
}

func (f *Finder) fileCandidate(p string, info fs.FileInfo, agent manifest.Agent, harness string) Candidate {
	fsys := f.fs()
	c := Candidate{Name: p, Path: p, Agent: agent, ModTime: info.ModTime(), Size: info.Size(), ID: iDFromName(p), Harness: harness}
	c.open = func() (io.ReadCloser, error) { return fsys.Open(p) }
	c.readAt = func() (io.ReaderAt, int64, func(), error) {
		fh, err := fsys.Open(p)
		if err != nil {
			return nil, 0, nil, err
		}
		return fh, info.Size(), func() { fh.Close() }, nil
	}
	return c
}

// keep applies the modification-time prune.
func keep(info fs.FileInfo, w Window) bool {
	return w.Since.IsZero() || !info.ModTime().Before(w.Since)
}

// harness finds the transcripts in the harness's session workspaces:
// $SANDBOX_HOME/sessions/<id>/home, each agent's home in it.
func (f *Finder) harness(home string, w Window) []Candidate {
	var out []Candidate
	root := filepath.Join(home, "sessions")
	f.Looked = append(f.Looked, root)
	ids, _ := f.fs().ReadDir(root)
	for _, s := range ids {
		if !s.IsDir() {
			continue
		}
		name := s.Name()
		if b, err := readSmall(f.fs(), filepath.Join(root, s.Name(), "session.json")); err == nil {
			if n := gjson.GetBytes(b, "name"); n.Type == gjson.String && n.Str != "" {
				name = n.Str
			}
		}
		ws := filepath.Join(root, s.Name(), "home")
		n := len(f.Looked)
		for _, src := range Sources() {
			out = append(out, src.Scan(f, src.HomeIn(ws), w, name)...)
		}
		f.Looked = f.Looked[:n] // the harness root stands for its workspaces
	}
	return out
}

func readSmall(fsys FS, name string) ([]byte, error) {
	fh, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return io.ReadAll(io.LimitReader(fh, 64<<10))
}

// sortCandidates orders candidates by name, for stable output.
func sortCandidates(c []Candidate) {
	sort.SliceStable(c, func(a, b int) bool { return c[a].Name < c[b].Name })
}
