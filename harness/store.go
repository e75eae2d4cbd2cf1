package harness

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/rs/zerolog"
)

// State is a session's state.
type State string

// States.
const (
	StateCreated State = "created"
	StateRunning State = "running"
	StateExited  State = "exited"
	StateKilled  State = "killed" // by a signal
	StateOOM     State = "oom"
	StateDropped State = "dropped" // the harness died; found by ps
	StateError   State = "error"   // the runtime could not start it
)

// Session is a harness session's record (session.json).
type Session struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Runtime string    `json:"runtime"`
	Image   string    `json:"image,omitempty"`
	Project string    `json:"project"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	State   State     `json:"state"`
	// The last run.
	Command    []string  `json:"command,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	Ended      time.Time `json:"ended,omitzero"`
	ExitCode   int       `json:"exit_code"`
	Signal     string    `json:"signal,omitempty"`
	OOM        bool      `json:"oom,omitempty"`
	Error      string    `json:"error,omitempty"`
	HarnessPID int       `json:"harness_pid,omitempty"`
	ChildPID   int       `json:"child_pid,omitempty"`
	Container  string    `json:"container,omitempty"`
	// AgentSessionID is the agent's own session id, found in the workspace
	// transcripts after each run; --resume passes it back.
	AgentSessionID string `json:"agent_session_id,omitempty"`
	Agent          string `json:"agent,omitempty"`
	Runs           int    `json:"runs"`
	// OutputFrom is where the last run's output starts in logs/output.log.
	OutputFrom int64 `json:"output_from,omitempty"`
	// Mirror is the vault the session's transcripts and logs are mirrored
	// to while it runs (run --mirror), if any.
	Mirror string `json:"mirror,omitempty"`
	// Kube is where a kubernetes session lives: its cluster context and
	// namespace, and its volume's storage.
	Kube *KubeTarget `json:"kube,omitempty"`
}

// KubeTarget is a kubernetes session's place: the kubeconfig context and
// namespace (empty: the kubeconfig's current ones), and the storage class
// and size of the volume that holds its HOME and project.
type KubeTarget struct {
	Context      string `json:"context,omitempty"`
	Namespace    string `json:"namespace,omitempty"`
	StorageClass string `json:"storage_class,omitempty"`
	Storage      string `json:"storage,omitempty"`
}

// Store is the harness's state directory.
type Store struct {
	Root string
	// Env is the environment sandbox runs in (nil: the process's): the
	// runtimes' binaries ($SANDBOX_DOCKER), the terminal, PATH, and what a
	// local agent inherits come from it.
	Env osenv.Env
}

// env is the store's environment (nil for no store: the process's).
func (s *Store) env() osenv.Env {
	if s == nil {
		return nil
	}
	return s.Env
}

// DefaultRoot is $SANDBOX_HOME, else $XDG_STATE_HOME/sandbox, else
// ~/.local/state/sandbox.
func DefaultRoot(env osenv.Env) string {
	if d := env.Get("SANDBOX_HOME"); d != "" {
		return d
	}
	if d := env.Get("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sandbox")
	}
	home, _ := env.Home()
	return filepath.Join(home, ".local", "state", "sandbox")
}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidName checks a session name: letters, digits, ".", "_" and "-", not
// starting with a dot or dash, so it can never walk out of the store.
func ValidName(n string) error {
	if !nameRe.MatchString(n) || strings.Contains(n, "..") {
		return fmt.Errorf("session name %q: use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit", n)
	}
	return nil
}

// Dir is a session's directory.
func (s *Store) Dir(id string) string { return filepath.Join(s.Root, "sessions", id) }

// The files of a session, as slash paths inside its directory.
const (
	recordName     = "session.json"
	manifestName   = "manifest.json"
	homeName       = "home"
	OutputLogName  = "logs/output.log"
	RuntimeLogName = "logs/runtime.jsonl"
	lockName       = "run.lock"
	// KubePrefix starts the names of the files the kubernetes runtime
	// keeps beside the records (what it copied in, the last copy-back's
	// changes): tied to this machine's project, they are no part of a
	// snapshot and are left out of it without a word.
	KubePrefix = "kube-"
)

// Home is a session's workspace, mounted as the agent's HOME.
func (s *Store) Home(id string) string { return filepath.Join(s.Dir(id), homeName) }

// OutputLog and RuntimeLog are a session's logs. They name the files for
// the user and for tests; sandbox itself opens them with OpenSessionFile, which
// never follows a link.
func (s *Store) OutputLog(id string) string {
	return filepath.Join(s.Dir(id), filepath.FromSlash(OutputLogName))
}
func (s *Store) RuntimeLog(id string) string {
	return filepath.Join(s.Dir(id), filepath.FromSlash(RuntimeLogName))
}

// Manifest is where a session's export manifest is written after each run.
func (s *Store) Manifest(id string) string { return filepath.Join(s.Dir(id), manifestName) }

// newID returns a fresh session id.
func newID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// NotFoundError is Load's error for a session that is not in the store. It
// is an fs.ErrNotExist (errors.Is), but says so in words, not Go's.
type NotFoundError struct{ Name, Dir string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no session %q in %s", e.Name, e.Dir) }

// Unwrap makes a NotFoundError an fs.ErrNotExist.
func (e *NotFoundError) Unwrap() error { return fs.ErrNotExist }

// Load reads a session by id or name. A record that is a link, or in a
// session directory that is one, is an error: it is never followed.
func (s *Store) Load(idOrName string) (*Session, error) {
	if err := ValidName(idOrName); err != nil {
		return nil, err
	}
	p := filepath.Join(s.Dir(idOrName), recordName)
	var b []byte
	root, err := s.openSession(idOrName, false)
	if err == nil {
		b, err = readRecord(root, recordName)
		root.Close()
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{Name: idOrName, Dir: filepath.Join(s.Root, "sessions")}
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", idOrName, err)
	}
	var sess Session
	if err := json.Unmarshal(b, &sess); err != nil {
		return nil, fmt.Errorf("%s:%s: %w", p, where(b, err), err)
	}
	return &sess, nil
}

// Save writes a session's record atomically, replacing (never writing
// through) whatever is at session.json.
func (s *Store) Save(sess *Session) error {
	root, err := s.openSession(sess.ID, true)
	if err != nil {
		return err
	}
	defer root.Close()
	return saveIn(root, sess)
}

// saveIn writes a record into a session directory opened as root.
func saveIn(root *os.Root, sess *Session) error {
	sess.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(sess, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(root, recordName, 0o644, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteFileAtomic writes a file through a temporary file beside it, synced
// and renamed into place, so a failure leaves the old file or none, never
// half a file.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// The output and its directory, not the temporary name.
		return fmt.Errorf("%s: cannot write in %s: %w", path, filepath.Dir(path), pe.Err)
	}
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// where locates a JSON decoding error in its document as line:column.
func where(b []byte, err error) string {
	off := int64(len(b))
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	off = min(max(off-1, 0), int64(len(b))) // the offsets count the offending byte
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	col := off - int64(bytes.LastIndexByte(b[:off], '\n'))
	return fmt.Sprintf("%d:%d", line, col)
}

// List returns every session, oldest first, and the errors of the session
// records it could not read (a damaged session.json), so they are reported
// rather than hidden.
func (s *Store) List() ([]*Session, []error, error) {
	entries, err := os.ReadDir(filepath.Join(s.Root, "sessions"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []*Session
	var damaged []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") { // .restore-* are restores in progress
			continue
		}
		sess, err := s.Load(e.Name())
		if err != nil {
			damaged = append(damaged, err)
			continue
		}
		out = append(out, sess)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Created.Before(out[b].Created) })
	return out, damaged, nil
}

// Lock takes a session's run lock without waiting: two runs of one session
// at once are refused.
func (s *Store) Lock(id string) (func(), error) {
	root, err := s.openSession(id, true)
	if err != nil {
		return nil, err
	}
	f, err := openFile(root, lockName, os.O_RDWR|os.O_CREATE, 0o600)
	root.Close()
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s is already running (another sandbox run holds its lock)", id)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Locked reports whether a session's run lock is held by a live process.
func (s *Store) Locked(id string) bool {
	f, err := s.OpenSessionFile(id, lockName, os.O_RDWR)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// OpenSessionFile opens one of a session's own files (OutputLogName,
// RuntimeLogName, …) with flag (os.O_RDONLY to read it), never following a
// link: a log that is a link, or in a logs/ that is one, is a *LinkError.
func (s *Store) OpenSessionFile(id, name string, flag int) (*os.File, error) {
	root, err := s.openSession(id, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return openFile(root, name, flag, 0o644)
}

// Event appends an event to a session's runtime log, synced to disk before
// it returns, so the record survives whatever happens next.
func (s *Store) Event(id, event string, fields map[string]any) error {
	root, err := s.openSession(id, true)
	if err != nil {
		return err
	}
	defer root.Close()
	return eventIn(root, id, event, fields)
}

// eventIn appends an event to the runtime log of a session directory
// opened as root.
func eventIn(root *os.Root, id, event string, fields map[string]any) error {
	f, err := openFile(root, RuntimeLogName, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	log := zerolog.New(f).With().Timestamp().Str("session", id).Logger()
	e := log.Info()
	for _, k := range sortedKeys(fields) {
		e = e.Interface(k, fields[k])
	}
	e.Msg(event)
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Tail returns the last n lines of one of a session's logs after offset
// from, opened as OpenSessionFile does.
func (s *Store) Tail(id, name string, from int64, n int) ([]string, error) {
	f, err := s.OpenSessionFile(id, name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return lastLines(f, from, n)
}

// lastLines returns the last n lines of a file after offset from, reading
// at most its last 64 KiB.
func lastLines(f *os.File, from int64, n int) ([]string, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from = min(max(from, 0), st.Size())
	off := st.Size() - 64<<10
	cut := true
	if off <= from {
		off, cut = from, false
	}
	buf := make([]byte, st.Size()-off)
	k, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(buf[:k]), "\n"), "\n")
	if cut && len(lines) > 0 {
		lines = lines[1:] // the first may be cut
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	return lines, nil
}
