// Package discover finds agent transcripts: in the agents' default homes
// (Codex, Claude Code, the harness's workspaces) and in whatever --from
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
	"strconv"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/tidwall/gjson"
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
	// Listed is what a store of many sessions (an opencode database) said
	// of this one when it listed it; nil for a transcript file.
	Listed *Listed
	open   func() (io.ReadCloser, error)
	readAt func() (io.ReaderAt, int64, func(), error)
	// children lists the sessions a store holds whose parent is this one
	// (opencode's subagent sessions), when the candidate is a store's.
	children func() []Candidate
}

// Children returns the sessions started from this one that its store holds
// (an opencode task's subagent sessions, and theirs), or none.
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
	Codex, Claude, Sandbox string
	Opencode               string
	// Gemini is Gemini CLI's directory ($GEMINI_CLI_HOME/.gemini or
	// ~/.gemini); Pi is pi's agent directory ($PI_CODING_AGENT_DIR or
	// ~/.pi/agent).
	Gemini, Pi string
}

// DefaultHomes returns the homes named by the environment: $CODEX_HOME or
// ~/.codex, $CLAUDE_CONFIG_DIR or ~/.claude, $SANDBOX_HOME or
// $XDG_STATE_HOME/sandbox or ~/.local/state/sandbox.
func DefaultHomes() Homes {
	home, _ := os.UserHomeDir()
	h := Homes{Codex: os.Getenv("CODEX_HOME"), Claude: os.Getenv("CLAUDE_CONFIG_DIR"), Sandbox: os.Getenv("SANDBOX_HOME")}
	if h.Codex == "" && home != "" {
		h.Codex = filepath.Join(home, ".codex")
	}
	if h.Claude == "" && home != "" {
		h.Claude = filepath.Join(home, ".claude")
	}
	h.Opencode = opencodeHome(home)
	if g := os.Getenv("GEMINI_CLI_HOME"); g != "" {
		h.Gemini = filepath.Join(g, ".gemini")
	} else if home != "" {
		h.Gemini = filepath.Join(home, ".gemini")
	}
	if h.Pi = os.Getenv("PI_CODING_AGENT_DIR"); h.Pi == "" && home != "" {
		h.Pi = filepath.Join(home, ".pi", "agent")
	}
	if h.Sandbox == "" {
		if x := os.Getenv("XDG_STATE_HOME"); x != "" {
			h.Sandbox = filepath.Join(x, "sandbox")
		} else if home != "" {
			h.Sandbox = filepath.Join(home, ".local", "state", "sandbox")
		}
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
	// Looked lists the places looked in, for "not found" messages.
	Looked []string
	// Problems are stores in the homes that could not be read (a damaged
	// opencode database), for the command to report.
	Problems []Skipped
	// S3 reaches object storage for s3:// sources; nil is the AWS
	// configuration of the environment.
	S3 *S3
	// Window, when set, lets From leave out what its metadata alone shows
	// to be outside it (an object last modified before its start), so that
	// nothing of it is read.
	Window Window
}

func (f *Finder) fs() FS {
	if f.FS == nil {
		return OS{}
	}
	return f.FS
}

var (
	uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	yearRe = regexp.MustCompile(`^\d{4}$`)
	twoRe  = regexp.MustCompile(`^\d{2}$`)
)

// IDFromName returns the session id in a transcript's file name: the
// right-most UUID (Codex's rollout-<time>-<uuid>, Claude's <uuid>.jsonl).
func IDFromName(name string) string {
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

// Homes finds the transcripts in the default homes, pruning by the window
// before opening anything: a Codex date folder after the window's end
// cannot hold a session in it, and a file not modified since the window's
// start cannot hold activity after it.
func (f *Finder) Homes(h Homes, w Window) []Candidate {
	var out []Candidate
	if h.Codex != "" {
		out = append(out, f.codexHome(h.Codex, w, "")...)
	}
	if h.Claude != "" {
		out = append(out, f.claudeHome(h.Claude, w, "")...)
	}
	if h.Opencode != "" {
		out = append(out, f.opencodeHome(h.Opencode, w, "")...)
	}
	if h.Gemini != "" {
		out = append(out, f.geminiHome(h.Gemini, w, "")...)
	}
	if h.Pi != "" {
		out = append(out, f.piHome(h.Pi, w, "")...)
	}
	if h.Sandbox != "" {
		out = append(out, f.harness(h.Sandbox, w)...)
	}
	return out
}

// geminiHome finds Gemini CLI sessions: tmp/<project>/chats/session-*.json
// and .jsonl (<project> is the sha256 of the project root in the old
// layout, a short name in the new one), and subagent sessions in
// chats/<parent session>/.
func (f *Finder) geminiHome(home string, w Window, harness string) []Candidate {
	var out []Candidate
	tmp := filepath.Join(home, "tmp")
	f.Looked = append(f.Looked, tmp)
	projects, _ := f.fs().ReadDir(tmp)
	for _, d := range projects {
		if !d.IsDir() {
			continue
		}
		chats := filepath.Join(tmp, d.Name(), "chats")
		add := func(dir string, sub bool) {
			entries, _ := f.fs().ReadDir(dir)
			for _, e := range entries {
				name := e.Name()
				// A subagent's file is named by its id; a main session's
				// starts with "session-".
				if e.IsDir() || !isTranscriptName(name) || (!sub && !strings.HasPrefix(name, "session-")) {
					continue
				}
				info, err := e.Info()
				if err != nil || !keep(info, w) {
					continue
				}
				out = append(out, f.fileCandidate(filepath.Join(dir, name), info, manifest.AgentGemini, harness))
			}
		}
		add(chats, false)
		subs, _ := f.fs().ReadDir(chats)
		for _, s := range subs {
			if s.IsDir() {
				add(filepath.Join(chats, s.Name()), true)
			}
		}
	}
	return out
}

// piHome finds pi sessions: sessions/--<cwd>--/<time>_<id>.jsonl.
func (f *Finder) piHome(home string, w Window, harness string) []Candidate {
	var out []Candidate
	sessions := filepath.Join(home, "sessions")
	f.Looked = append(f.Looked, sessions)
	dirs, _ := f.fs().ReadDir(sessions)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		entries, _ := f.fs().ReadDir(filepath.Join(sessions, d.Name()))
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			info, err := e.Info()
			if err != nil || !keep(info, w) {
				continue
			}
			out = append(out, f.fileCandidate(filepath.Join(sessions, d.Name(), e.Name()), info, manifest.AgentPi, harness))
		}
	}
	return out
}

func (f *Finder) fileCandidate(p string, info fs.FileInfo, agent manifest.Agent, harness string) Candidate {
	fsys := f.fs()
	c := Candidate{Name: p, Path: p, Agent: agent, ModTime: info.ModTime(), Size: info.Size(), ID: IDFromName(p), Harness: harness}
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

func (f *Finder) codexHome(home string, w Window, harness string) []Candidate {
	var out []Candidate
	plain := map[string]bool{}
	add := func(dir string, day time.Time) {
		entries, err := f.fs().ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() || !isTranscriptName(e.Name()) {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if strings.HasSuffix(p, ".zst") && plain[strings.TrimSuffix(p, ".zst")] {
				continue // codex: when both exist, the plain file wins
			}
			info, err := e.Info()
			if err != nil || !keep(info, w) {
				continue
			}
			plain[p] = true
			c := f.fileCandidate(p, info, manifest.AgentCodex, harness)
			c.Day = day
			out = append(out, c)
		}
	}
	sessions := filepath.Join(home, "sessions")
	f.Looked = append(f.Looked, sessions, filepath.Join(home, "archived_sessions"))
	add(sessions, time.Time{}) // the earliest flat layout
	years, _ := f.fs().ReadDir(sessions)
	for _, y := range years {
		if !y.IsDir() || !yearRe.MatchString(y.Name()) {
			continue
		}
		months, _ := f.fs().ReadDir(filepath.Join(sessions, y.Name()))
		for _, m := range months {
			if !m.IsDir() || !twoRe.MatchString(m.Name()) {
				continue
			}
			days, _ := f.fs().ReadDir(filepath.Join(sessions, y.Name(), m.Name()))
			for _, d := range days {
				if !d.IsDir() || !twoRe.MatchString(d.Name()) {
					continue
				}
				yy, _ := strconv.Atoi(y.Name())
				mm, _ := strconv.Atoi(m.Name())
				dd, _ := strconv.Atoi(d.Name())
				day := time.Date(yy, time.Month(mm), dd, 0, 0, 0, 0, time.Local)
				// The folder is the local date the session started: one that
				// starts after the window's end holds nothing in it.
				if !w.Until.IsZero() && day.After(w.Until) {
					continue
				}
				add(filepath.Join(sessions, y.Name(), m.Name(), d.Name()), day)
			}
		}
	}
	add(filepath.Join(home, "archived_sessions"), time.Time{})
	return out
}

func (f *Finder) claudeHome(home string, w Window, harness string) []Candidate {
	var out []Candidate
	projects := filepath.Join(home, "projects")
	f.Looked = append(f.Looked, projects)
	dirs, _ := f.fs().ReadDir(projects)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		entries, _ := f.fs().ReadDir(filepath.Join(projects, d.Name()))
		for _, e := range entries {
			// Subagent files (agent-*.jsonl, <session>/subagents/) come with their session.
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") || strings.HasPrefix(e.Name(), "agent-") {
				continue
			}
			info, err := e.Info()
			if err != nil || !keep(info, w) {
				continue
			}
			out = append(out, f.fileCandidate(filepath.Join(projects, d.Name(), e.Name()), info, manifest.AgentClaude, harness))
		}
	}
	return out
}

// harness finds the transcripts in the harness's session workspaces:
// $SANDBOX_HOME/sessions/<id>/home/{.codex,.claude,.gemini,.pi/agent}.
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
		out = append(out, f.codexHome(filepath.Join(ws, ".codex"), w, name)...)
		out = append(out, f.claudeHome(filepath.Join(ws, ".claude"), w, name)...)
		out = append(out, f.opencodeHome(filepath.Join(ws, ".local", "share", "opencode"), w, name)...)
		out = append(out, f.geminiHome(filepath.Join(ws, ".gemini"), w, name)...)
		out = append(out, f.piHome(filepath.Join(ws, ".pi", "agent"), w, name)...)
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
