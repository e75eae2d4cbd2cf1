package recover

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// JournalDir is where journals live, relative to a destination root.
const JournalDir = ".sandbox/journal"

// JournalEntry is one change an apply made (or was about to make: entries
// are written and synced before the change).
type JournalEntry struct {
	Seq     int    `json:"seq"`
	Path    string `json:"path"` // relative to the root
	Existed bool   `json:"existed"`
	Mode    uint32 `json:"mode,omitempty"`
	// Before names the before-image in the journal directory.
	Before       string `json:"before,omitempty"`
	BeforeSHA256 string `json:"before_sha256,omitempty"`
	// After is what the apply leaves: "file" (AfterSHA256) or "absent".
	After       string `json:"after"`
	AfterSHA256 string `json:"after_sha256,omitempty"`
	// Event marks the journal's own state: "rolled-back" or "undone".
	Event string `json:"event,omitempty"`
}

// Journal records, under one destination root, what an apply changes, so
// that `sandbox undo` can restore the host exactly.
type Journal struct {
	Root  string
	Name  string // the journal's directory name, a UTC time stamp
	fsys  FS
	seq   int
	empty bool
}

// NewJournal starts a journal under root. Nothing is written until the
// first change is recorded.
func NewJournal(fsys FS, root string, now time.Time) *Journal {
	return &Journal{Root: root, Name: now.UTC().Format("20060102T150405.000000000Z"), fsys: fsys, empty: true}
}

func (j *Journal) target(name string) Target {
	return Target{Root: j.Root, Rel: path.Join(JournalDir, j.Name, name)}
}

// Dir is the journal's directory on the host.
func (j *Journal) Dir() string { return j.target("").Path() }

// record saves a file's before-image and the change about to be made.
func (j *Journal) record(rel string, before Content, mode fs.FileMode, after Content) error {
	j.seq++
	e := JournalEntry{Seq: j.seq, Path: rel, Existed: before.Exists, Mode: uint32(mode.Perm()), After: "absent"}
	if before.Exists {
		e.Before = "before/" + strconv.Itoa(j.seq)
		e.BeforeSHA256 = sum(before.Text)
		if err := j.fsys.WriteFile(j.target(e.Before), []byte(before.Text), 0o600); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	if after.Exists {
		e.After, e.AfterSHA256 = "file", sum(after.Text)
	}
	return j.append(e)
}

func (j *Journal) append(e JournalEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := j.fsys.AppendFile(j.target("journal.jsonl"), append(b, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.empty = false
	return nil
}

// discard removes a journal whose apply was rolled back: the host is left
// as it was, journal included.
func (j *Journal) discard() error {
	if j.empty {
		return nil
	}
	var errs []error
	for i := 1; i <= j.seq; i++ {
		if err := j.fsys.Remove(j.target("before/" + strconv.Itoa(i))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	last := j.target("journal.jsonl")
	if err := j.fsys.Remove(last); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	j.fsys.RemoveEmptyDirs(j.target("before/x"))
	j.fsys.RemoveEmptyDirs(last)
	j.empty = true
	return errors.Join(errs...)
}

// Journals lists the journals under a destination root, oldest first.
func Journals(fsys FS, root string) ([]string, error) {
	names, err := fsys.ReadDir(Target{Root: root, Rel: JournalDir})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// ReadJournal reads a journal's entries; done is "undone" or "rolled-back"
// when the journal was already reversed.
func ReadJournal(fsys FS, root, name string) (entries []JournalEntry, done string, err error) {
	data, _, exists, err := fsys.ReadFile(Target{Root: root, Rel: path.Join(JournalDir, name, "journal.jsonl")})
	if err != nil {
		return nil, "", err
	}
	if !exists {
		return nil, "", fmt.Errorf("%s: no journal named %s", root, name)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var e JournalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A crash can cut the last entry short: its change was not made.
			if n > 1 && !bytes.HasSuffix(data, []byte("\n")) {
				break
			}
			return nil, "", fmt.Errorf("%s line %d: %w", path.Join(root, JournalDir, name, "journal.jsonl"), n, err)
		}
		if e.Event != "" {
			done = e.Event
			continue
		}
		entries = append(entries, e)
	}
	return entries, done, sc.Err()
}

// UndoResult is what undo did to one file.
type UndoResult struct {
	Path   string `json:"path"`
	Action string `json:"action"` // restored, removed, unchanged, refused
	Reason string `json:"reason,omitempty"`
}

// Undo reverses a journal, last change first: each file goes back to its
// before-image (or away, if the apply created it) unless it changed again
// since the apply, which is refused file by file.
func Undo(fsys FS, root, name string) ([]UndoResult, error) {
	entries, done, err := ReadJournal(fsys, root, name)
	if err != nil {
		return nil, err
	}
	if done != "" {
		return nil, fmt.Errorf("journal %s was already %s", name, done)
	}
	var out []UndoResult
	var created []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		t := Target{Root: root, Rel: e.Path}
		r := UndoResult{Path: e.Path}
		data, _, exists, err := fsys.ReadFile(t)
		if err != nil {
			r.Action, r.Reason = "refused", err.Error()
			out = append(out, r)
			continue
		}
		now := Content{Known: true, Exists: exists, Text: string(data)}
		atAfter := (e.After == "absent" && !exists) || (e.After == "file" && exists && sum(now.Text) == e.AfterSHA256)
		atBefore := (!e.Existed && !exists) || (e.Existed && exists && sum(now.Text) == e.BeforeSHA256)
		switch {
		case atBefore:
			r.Action = "unchanged" // the change was never made (a crash before it)
		case !atAfter:
			r.Action, r.Reason = "refused", "changed since the apply: left as it is"
		case e.Existed:
			before, _, ok, err := fsys.ReadFile(Target{Root: root, Rel: path.Join(JournalDir, name, e.Before)})
			if err == nil && !ok {
				err = errors.New("before-image missing from the journal")
			}
			if err == nil && sum(string(before)) != e.BeforeSHA256 {
				err = errors.New("before-image in the journal does not match its sha256")
			}
			if err == nil {
				err = fsys.WriteFile(t, before, fs.FileMode(e.Mode))
			}
			if err != nil {
				r.Action, r.Reason = "refused", err.Error()
			} else {
				r.Action = "restored"
			}
		default:
			if err := fsys.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
				r.Action, r.Reason = "refused", err.Error()
			} else {
				r.Action = "removed"
				created = append(created, e.Path)
			}
		}
		out = append(out, r)
	}
	for _, p := range created {
		fsys.RemoveEmptyDirs(Target{Root: root, Rel: p})
	}
	j := &Journal{Root: root, Name: name, fsys: fsys}
	if err := j.append(JournalEntry{Event: "undone"}); err != nil {
		return out, err
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out, nil
}

// LatestJournal returns the newest journal under root that was not undone
// or rolled back.
func LatestJournal(fsys FS, root string) (string, error) {
	names, err := Journals(fsys, root)
	if err != nil {
		return "", err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if _, done, err := ReadJournal(fsys, root, names[i]); err == nil && done == "" {
			return names[i], nil
		}
	}
	return "", fmt.Errorf("no journal to undo under %s", path.Join(root, JournalDir))
}

func isJournalPath(rel string) bool {
	return rel == ".sandbox" || strings.HasPrefix(rel, ".sandbox/")
}
