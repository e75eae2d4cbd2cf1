// Package agent is the seam every coding agent plugs into: one interface
// (Agent) that an agent's package implements (where its sessions live, how
// its transcripts are told apart, how they parse into operations, how a
// session is resumed) and a registry the rest of sandbox finds agents
// through. Nothing outside an agent's package and the registration list
// (parse/registry.go) names an agent.
//
// An agent's edit semantics for replay are the other half: its parser
// stamps each operation with a manifest.EditRule, and package recover
// replays each rule; an agent whose edits are exact string replacements
// needs none of its own.
package agent

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Agent is one coding agent's transcripts, as sandbox reads them.
type Agent interface {
	// Source is where the agent's sessions live: its home, and how its
	// sessions lie in it (discover.Source; a database of many sessions is a
	// discover.Store).
	discover.Source
	// About describes the agent for help texts and reports.
	About() About
	// Document recognises a transcript that is one JSON document rather
	// than one record per line, from its first bytes (up to 64 KiB, maybe
	// cut short): rank is 0 when head is not such a document of the
	// agent's, and the highest rank among agents wins. The Head holds what
	// the document says of the session.
	Document(head []byte) (h Head, rank int)
	// Shape says whether r, a record of a transcript's head, looks like one
	// of the agent's: the agent with the highest rank decides the record,
	// which votes for it when vote is true (a record claimed without a vote
	// counts for no agent). The record-per-line transcripts' agent is the
	// one with the most votes; ties go to the agent registered first.
	Shape(r *Record, first bool) (rank int, vote bool)
	// Note reads what a head record says of its session: it adds the
	// record's times and working directory to h (shared by all agents) and
	// returns the session id the record gives in this agent's format, if
	// any. first says r is the head's first record.
	Note(r *Record, first bool, h *Head) (id string)
	// Stream parses a transcript of the agent's from body, handing the
	// session and operations to h as they are settled; it returns the
	// session, and the error that stopped it early, if any (what came
	// before is kept).
	Stream(ctx context.Context, body io.Reader, t Transcript, h emit.Handler) (manifest.Session, error)
	// Resume returns command changed to resume the agent's session id, and
	// true, when command runs this agent; false otherwise.
	Resume(command []string, id string) ([]string, bool)
}

// Ranks a Shape gives, from the most telling mark of a record to the
// weakest guess. A rank decides a record for one agent against others:
// an agent claims the records whose marks are its own at a rank above
// those of the marks it shares.
const (
	RankDistinct = 80 // a key only this agent writes (a session's metadata)
	RankIdentity = 70 // the agent's session and parent ids on every record
	RankMessage  = 60 // a message record of the agent's shape
	RankEntry    = 50 // a session entry of the agent's shape
	RankTree     = 40 // an entry typed and linked to its parent
	RankTyped    = 30 // a record typed with the agent's type names
	RankLegacy   = 20 // an older format's state line
	RankWeak     = 10 // the first line of an older format
)

// EnvHome is how agents name their home: the folder the environment
// variable env names (with under appended, when the variable names its
// parent), else def under the user's home, else "" when there is no home.
func EnvHome(getenv func(string) string, home, env, under string, def ...string) string {
	if d := getenv(env); d != "" {
		if under == "" {
			return d
		}
		return filepath.Join(d, under)
	}
	if home == "" {
		return ""
	}
	return filepath.Join(append([]string{home}, def...)...)
}

// Retainer is an Agent that deletes its own sessions after a time (a
// cleanup at start-up): Retention reads its settings in home (the agent's
// folder, as Source.Home gives it) and says after how long, and which
// setting says so; ok is false when it keeps them (or the settings turn
// the cleanup off). sandbox doctor warns before that cleanup runs.
type Retainer interface {
	Retention(home string) (r Retention, ok bool)
}

// Retention is when an agent deletes its sessions, as its settings say.
type Retention struct {
	// After is the age past which a session is deleted (0: every one).
	After time.Duration
	// Setting names the setting and its file ("cleanupPeriodDays in
	// ~/.claude/settings.json"), or says the agent's default applies.
	Setting string
	// Problem, when not empty, is what is wrong with the settings and
	// what the agent does about it (a file it cannot read, a value it
	// refuses): the user should fix it. With ok false, the retention
	// itself cannot be told.
	Problem string
}

// Rooted is an Agent whose transcripts do not say the session's working
// directory: Root finds it from beside the transcript or from its head.
type Rooted interface {
	Root(t Transcript, head []byte) string
}

// About describes an agent.
type About struct {
	// Title is the agent's name as people write it ("Claude Code").
	Title string
	// Sessions says what sandbox reads of it and where, for help texts
	// ("Claude Code transcripts (~/.claude/projects/…/<session>.jsonl)").
	Sessions string
	// Home is where its sessions are looked for, as a help text says it
	// ("$CLAUDE_CONFIG_DIR or ~/.claude").
	Home string
	// Resume is how its sessions are resumed ("--resume ID to claude").
	Resume string
	// CaseSensitiveIDs keeps the session ids as they are; others are
	// compared in lower case.
	CaseSensitiveIDs bool
	// StateEnv are the environment variables that move where the agent
	// keeps its state (CODEX_HOME), beyond HOME and the XDG base
	// directories: a harness run drops the host's values of them.
	StateEnv []string
	// Lost is what the agent's transcripts call the parts of a tool call,
	// for the search of a line that could not be read (jsonl.Names).
	Lost jsonl.Vocabulary
}

// Transcript names the transcript a parser reads.
type Transcript struct {
	// Name is the transcript's name in messages and reports: a path, an
	// archive member, a URL, or "-".
	Name string
	// OnDisk says Name is a file on the host, beside which the agent may
	// keep more of the session (Claude Code's file-history backups, a
	// project root marker).
	OnDisk bool
	// Home is the agent's home as the environment names it ("" when the
	// caller gave none): where the agent may keep more of a session whose
	// transcript does not live in a home of its own.
	Home string
}

// Head is what the first bytes of a transcript say of its session.
type Head struct {
	ID, Cwd string
	// First and Last are the earliest and latest times seen.
	First, Last time.Time
	// seen is the last time added: several agents' Note add a record's
	// same field, which is parsed once.
	seen string
}

// Add adds an RFC 3339 time to the span; anything else is ignored.
func (h *Head) Add(ts string) {
	if ts == h.seen && ts != "" {
		return
	}
	h.seen = ts
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return
	}
	if h.First.IsZero() || t.Before(h.First) {
		h.First = t
	}
	if t.After(h.Last) {
		h.Last = t
	}
}

// AddMillis adds a time in milliseconds since the epoch, when there is one.
func (h *Head) AddMillis(v int64) {
	if t := emit.UnixMilli(v); !t.IsZero() {
		h.Add(t.Format(time.RFC3339Nano))
	}
}

// SetCwd sets the working directory when none is known yet (the first
// record that gives one wins); the string is copied.
func (h *Head) SetCwd(cwd string) {
	if h.Cwd == "" && cwd != "" {
		h.Cwd = strings.Clone(cwd)
	}
}

// A Key is a top-level key that head records are read for. Agents declare
// the keys their Shape and Note look at with NewKey, as package variables.
type Key int

// The declared keys: written while packages initialise (NewKey is for
// package variables), read-only after.
var (
	keyNames []string
	keyIndex = map[string]Key{}
)

// NewKey declares a top-level key heads are read for (declaring one twice
// gives the same Key). It is called as packages initialise, never later.
func NewKey(name string) Key {
	if k, ok := keyIndex[name]; ok {
		return k
	}
	k := Key(len(keyNames))
	keyNames = append(keyNames, name)
	keyIndex[name] = k
	return k
}

// KeyOf returns the declared key named name.
func KeyOf(name []byte) (Key, bool) {
	k, ok := keyIndex[string(name)]
	return k, ok
}

// Keys is how many keys are declared.
func Keys() int { return len(keyNames) }

// Record is the declared top-level fields of one record of a transcript's
// head (complete, or cut short by the head's end: the fields before the
// cut). Its values lie in the head's bytes: an agent copies the strings it
// keeps.
type Record struct {
	vals []gjson.Result
}

// NewRecord returns a record with room for every declared key.
func NewRecord() *Record { return &Record{vals: make([]gjson.Result, Keys())} }

// Reset forgets every field.
func (r *Record) Reset() { clear(r.vals) }

// Set sets a field (the last one set wins, as decoders keep the last of a
// repeated key).
func (r *Record) Set(k Key, v gjson.Result) {
	if int(k) < len(r.vals) {
		r.vals[k] = v
	}
}

// Get returns a field's value; a missing field does not Exist.
func (r *Record) Get(k Key) gjson.Result {
	if int(k) < len(r.vals) {
		return r.vals[k]
	}
	return gjson.Result{}
}

var (
	regMu  sync.Mutex
	agents []Agent
	byName = map[manifest.Agent]Agent{}
)

// Register adds agents to the registry, in order: the order of help
// texts, of the homes searched, and of ties in detection. parse/registry.go
// registers every agent sandbox ships, as the package initialises.
func Register(as ...Agent) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, a := range as {
		if _, dup := byName[a.Name()]; dup {
			panic("agent: " + string(a.Name()) + " registered twice")
		}
		agents = append(agents, a)
		byName[a.Name()] = a
		discover.Register(a)
		jsonl.Learn(a.About().Lost)
	}
}

// All returns the registered agents, in order. Agents register as
// packages initialise (or a test's TestMain starts), before anything
// reads the registry, so reading takes no lock.
func All() []Agent { return agents }

// Named returns the agent called name.
func Named(name manifest.Agent) (Agent, bool) {
	a, ok := byName[name]
	return a, ok
}

// Names returns the registered agents' names, in order.
func Names() []string {
	var out []string
	for _, a := range All() {
		out = append(out, string(a.Name()))
	}
	return out
}

// SortedNames returns the registered agents' names in alphabetical order.
func SortedNames() []string {
	out := Names()
	sort.Strings(out)
	return out
}

// OrList spells names as "a, b or c".
func OrList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ResumeFlag is Resume for an agent that goes on with a session given as
// flag ID right after the command's name (copilot --resume ID): command
// changed, and true, when its program is one of names; a command that
// already says which session to go on with (the flag, or one of also) is
// left as it is.
func ResumeFlag(command []string, id string, names []string, flag string, also ...string) ([]string, bool) {
	return ResumeFlagAfter(command, id, names, "", flag, also...)
}

// ResumeFlagAfter is ResumeFlag for an agent whose non-interactive
// subcommand sub (AGENT run …) takes the flag after it: the
// flag goes after sub when the command starts with it. Arguments after
// "--" are the agent's prompt, not its flags.
func ResumeFlagAfter(command []string, id string, names []string, sub, flag string, also ...string) ([]string, bool) {
	if !slices.Contains(names, filepath.Base(command[0])) {
		return nil, false
	}
	for _, a := range command[1:] {
		if a == "--" {
			break
		}
		if a == flag || strings.HasPrefix(a, flag+"=") || slices.Contains(also, a) {
			return command, true
		}
	}
	at := 1
	if sub != "" && len(command) > 1 && command[1] == sub {
		at = 2
	}
	out := append([]string{}, command[:at]...)
	out = append(out, flag, id)
	return append(out, command[at:]...), true
}
