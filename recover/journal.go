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
	"syscall"
	"time"
)

// JournalDir is where journals live, relative to a destination root.
const JournalDir = ".sandbox/journal"

// journalIgnore keeps the journals out of git: its "*" matches everything
// under .sandbox, itself included, so git add -A never takes a journal
// (or the before-images of the user's files) into a commit.
const journalIgnore = ".sandbox/.gitignore"

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
	// Event marks the journal's own state: "applied" (every change made),
	// "rolled-back" or "undone".
	Event string `json:"event,omitempty"`
	// Temp is the temporary file the write goes through, named here before
	// it is created, so undo can remove it after a kill -9 mid-write.
	Temp string `json:"temp,omitempty"`
	// Dirs are the directories the change creates, outermost first; undo
	// removes them (when empty) and no other. Nil in journals written before
	// it was recorded.
	Dirs []string `json:"dirs"`
	// Seal proves the entry was written by a sandbox holding the user's
	// journal key (see JournalKey); empty in journals written unsealed.
	Seal string `json:"seal,omitempty"`
}

// Journal records, under one destination root, what an apply changes, so
// that `sandbox undo` can restore the host exactly.
type Journal struct {
	Root string
	Name string // the journal's directory name, a UTC time stamp
	fsys FS
	// key seals each entry (see KeyFunc); unsealed lets a journal with
	// none write unsealed entries (undo --unsealed marking one undone).
	key      KeyFunc
	unsealed bool
	seq      int
	empty    bool
	// madeIgnore: this journal wrote .sandbox/.gitignore (a rollback
	// removes it again, leaving the host as it was).
	madeIgnore bool
}

// newJournal starts a journal under root. Nothing is written until the
// first change is recorded.
func newJournal(fsys FS, root string, now time.Time, key KeyFunc) *Journal {
	return &Journal{Root: root, Name: now.UTC().Format("20060102T150405.000000000Z"), fsys: fsys, key: key, empty: true}
}

func (j *Journal) target(name string) Target {
	return Target{Root: j.Root, Rel: path.Join(JournalDir, j.Name, name)}
}

// Dir is the journal's directory on the host.
func (j *Journal) Dir() string { return j.target("").Path() }

// record saves a file's before-image and the change about to be made. It
// returns the name of the temporary file a write must go through.
func (j *Journal) record(rel string, before Content, mode fs.FileMode, after Content) (string, error) {
	j.seq++
	e := JournalEntry{Seq: j.seq, Path: rel, Existed: before.Exists, Mode: uint32(mode & keptModes), After: "absent", Dirs: []string{}}
	if after.Exists {
		e.Temp = path.Join(path.Dir(rel), "."+path.Base(rel)+".sandbox-"+j.Name+"-"+strconv.Itoa(j.seq))
		e.Dirs = j.missingDirs(rel)
	}
	if before.Exists {
		e.Before = "before/" + strconv.Itoa(j.seq)
		e.BeforeSHA256 = sum(before.Text)
		if err := j.fsys.WriteFile(j.target(e.Before), []byte(before.Text), 0o600); err != nil {
			return "", fmt.Errorf("journal: %w", err)
		}
	}
	if after.Exists {
		e.After, e.AfterSHA256 = "file", sum(after.Text)
	}
	return e.Temp, j.append(e)
}

// eventApplied closes the journal of an apply that made every change: one
// without it and not undone was cut short (kill -9, a power cut).
const eventApplied = "applied"

// markApplied records that the apply made every change it journaled.
func (j *Journal) markApplied() error {
	if j.empty {
		return nil
	}
	return j.append(JournalEntry{Event: eventApplied})
}

// keptModes are the mode bits a restored file gets back: permissions and
// setuid, setgid and sticky.
const keptModes = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// missingDirs lists the directories above rel that do not exist yet,
// outermost first: those a write of rel creates.
func (j *Journal) missingDirs(rel string) []string {
	out := []string{} // not nil: "none" is not "not recorded"
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if _, _, exists, _ := j.fsys.ReadFile(Target{Root: j.Root, Rel: d}); exists {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

func (j *Journal) append(e JournalEntry) error {
	switch {
	case j.key != nil:
		key, err := j.key()
		if err != nil {
			return fmt.Errorf("journal key: %w", err)
		}
		if e, err = seal(key, j.Name, e); err != nil {
			return err
		}
	case !j.unsealed:
		return ErrNoKey
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if j.empty && e.Event == "" {
		if err := j.ignore(); err != nil {
			return err
		}
	}
	if err := j.fsys.AppendFile(j.target("journal.jsonl"), append(b, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.empty = false
	return nil
}

// ignore writes .sandbox/.gitignore when it is not there.
func (j *Journal) ignore() error {
	t := Target{Root: j.Root, Rel: journalIgnore}
	if _, _, exists, err := j.fsys.ReadFile(t); err != nil || exists {
		return nil // a directory or link there is the user's: left alone
	}
	if err := j.fsys.WriteFile(t, []byte("*\n"), 0o644); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.madeIgnore = true
	return nil
}

// tidy removes .sandbox when it holds nothing but the ignore file sandbox
// wrote: a project whose applies are all undone is as it was.
func tidy(fsys FS, root string) {
	if names, err := fsys.ReadDir(Target{Root: root, Rel: JournalDir}); err == nil && len(names) > 0 {
		return
	}
	fsys.RemoveEmptyDirs(Target{Root: root, Rel: path.Join(JournalDir, "x")})
	names, err := fsys.ReadDir(Target{Root: root, Rel: ".sandbox"})
	if err != nil || len(names) != 1 || names[0] != ".gitignore" {
		return
	}
	if data, _, ok, err := fsys.ReadFile(Target{Root: root, Rel: journalIgnore}); err != nil || !ok || string(data) != "*\n" {
		return // not the one sandbox wrote
	}
	if fsys.Remove(Target{Root: root, Rel: journalIgnore}) == nil {
		fsys.RemoveEmptyDirs(Target{Root: root, Rel: journalIgnore})
	}
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
	if j.madeIgnore {
		tidy(j.fsys, j.Root)
		j.madeIgnore = false
	}
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

// readJournal reads a journal's entries; done is "undone" or "rolled-back"
// when the journal was already reversed.
func readJournal(fsys FS, root, name string) (entries []JournalEntry, done string, err error) {
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
		if e.Event == eventApplied {
			continue // the apply finished; still to be undone
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
	Action string `json:"action"` // restored, removed, unchanged, refused, failed
	Reason string `json:"reason,omitempty"`
}

// IncompleteError is an undo (or a rollback) that could not finish: some
// steps failed for a reason that may pass (a full disk). The journal stays
// pending, so running undo again finishes it.
type IncompleteError struct {
	Journal string
	Failed  []error
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("undo of %s is incomplete: %d file(s) could not be put back (%v); the journal is kept: run sandbox undo again once the cause is fixed",
		e.Journal, len(e.Failed), errors.Join(e.Failed...))
}

// Undo reverses a journal. Files the apply created are removed first, so a
// full disk gets its space back before any before-image is written again;
// then every changed or deleted file gets its before-image back, last
// change first. A file that changed again since the apply (or is no longer
// a file), or whose before-image is missing, altered or not a file, is
// refused, file by file, and left as it is. A file or before-image that
// cannot be read now (permission, I/O) fails. Leftover temporary files of
// a write cut short (kill -9) are removed, and so are the directories the
// apply created, and only those, and only while they are empty directories.
// The journal is marked undone only when nothing failed; after a failure it
// stays pending and undo can be run again: every step is idempotent.
//
// Every entry must carry its seal by key unless unsealed says to undo a
// journal this sandbox cannot vouch for; with no key, only that is done.
// The journal is marked undone sealed by key (unsealed with none).
func Undo(fsys FS, root, name string, key KeyFunc, unsealed bool) ([]UndoResult, error) {
	entries, done, err := readJournal(fsys, root, name)
	if err != nil {
		return nil, err
	}
	if done != "" {
		return nil, fmt.Errorf("journal %s was already %s", name, done)
	}
	if !unsealed {
		if key == nil {
			return nil, ErrNoKey
		}
		key, err := key()
		if err != nil {
			return nil, fmt.Errorf("journal key: %w", err)
		}
		for _, e := range entries {
			if !sealed(key, name, e) {
				return nil, fmt.Errorf("%s: entry %d of journal %s is %w (a journal planted in the destination, written by another user, or by a sandbox before journals were sealed): nothing was changed", path.Join(root, JournalDir, name), e.Seq, name, ErrUnsealed)
			}
		}
	}
	var out []UndoResult
	var failed []error
	var dirs [][]string
	for pass := 0; pass < 2; pass++ {
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			if (pass == 0) == e.Existed {
				continue // pass 0: files the apply created; pass 1: the others
			}
			if e.Temp != "" {
				if err := fsys.Remove(Target{Root: root, Rel: e.Temp}); err != nil && !gone(err) {
					failed = append(failed, fmt.Errorf("%s: %w", e.Temp, err))
				}
			}
			r := undoOne(fsys, root, name, e)
			if r.Action == "failed" {
				failed = append(failed, fmt.Errorf("%s: %s", r.Path, r.Reason))
			}
			out = append(out, r)
			dirs = append(dirs, e.Dirs)
			if r.Action == "removed" && e.Dirs == nil {
				fsys.RemoveEmptyDirs(Target{Root: root, Rel: e.Path})
			}
		}
	}
	// The directories the apply made, deepest first, while empty: a
	// directory two changes shared (src/ of src/a/x and src/b/y) goes once
	// both of its children have.
	var made []string
	seenDir := map[string]bool{}
	for _, ds := range dirs {
		for _, d := range ds {
			if !seenDir[d] {
				seenDir[d] = true
				made = append(made, d)
			}
		}
	}
	sort.SliceStable(made, func(a, b int) bool { return strings.Count(made[a], "/") > strings.Count(made[b], "/") })
	for _, d := range made {
		t := Target{Root: root, Rel: d}
		// Only a directory: a file the user has put under that name since
		// is theirs (Remove would take it).
		if _, _, exists, err := fsys.ReadFile(t); !exists || !errors.Is(err, ErrIsDir) {
			continue
		}
		// It goes only when empty; a directory that holds the user's
		// files stays. Another failure may pass: undo again retries.
		if err := fsys.Remove(t); err != nil && !gone(err) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			failed = append(failed, fmt.Errorf("%s: %w", d, err))
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	if len(failed) > 0 {
		return out, &IncompleteError{Journal: name, Failed: failed}
	}
	j := &Journal{Root: root, Name: name, fsys: fsys, key: key, unsealed: key == nil}
	if err := j.append(JournalEntry{Event: "undone"}); err != nil {
		// The files are as out says; the journal stays pending, and undo
		// run again finds them so and closes it.
		return out, fmt.Errorf("undo of %s finished, but the journal could not be marked undone (%w): run sandbox undo again to close it", name, err)
	}
	for _, r := range out {
		if r.Action == "refused" {
			// Its before-image is the user's only copy of what the file
			// was: the journal stays.
			return out, nil
		}
	}
	// Every file is back: the journal has nothing more to give. A
	// before-image that cannot be removed keeps the journal, marked undone,
	// to say what it is.
	for _, e := range entries {
		if e.Before != "" {
			if err := fsys.Remove(Target{Root: root, Rel: path.Join(JournalDir, name, e.Before)}); err != nil && !gone(err) {
				return out, nil
			}
		}
	}
	_ = fsys.Remove(j.target("journal.jsonl"))
	fsys.RemoveEmptyDirs(j.target("before/x"))
	fsys.RemoveEmptyDirs(j.target("journal.jsonl"))
	tidy(fsys, root)
	return out, nil
}

// journalApplied reports whether a journal says its apply made every change.
func journalApplied(fsys FS, root, name string) bool {
	data, _, _, err := fsys.ReadFile(Target{Root: root, Rel: path.Join(JournalDir, name, "journal.jsonl")})
	return err == nil && bytes.Contains(data, []byte(`"event":"`+eventApplied+`"`))
}

// JournalInfo describes one journal for undo --list.
type JournalInfo struct {
	Name  string   `json:"name"`
	Time  string   `json:"time"`
	State string   `json:"state"` // applied, incomplete (cut short), undone, rolled-back, damaged
	Files int      `json:"files"`
	Paths []string `json:"paths"`
	Error string   `json:"error,omitempty"`
}

// ListJournals describes the journals under a destination root, oldest
// first.
func ListJournals(fsys FS, root string) ([]JournalInfo, error) {
	names, err := Journals(fsys, root)
	if err != nil {
		return nil, err
	}
	out := []JournalInfo{}
	for _, n := range names {
		info := JournalInfo{Name: n, State: "pending", Paths: []string{}}
		if t, err := time.Parse("20060102T150405.000000000Z", n); err == nil {
			info.Time = t.Format(time.RFC3339)
		}
		entries, done, err := readJournal(fsys, root, n)
		switch {
		case err != nil:
			info.State, info.Error = "damaged", err.Error()
		case done != "":
			info.State = done
		case journalApplied(fsys, root, n):
			info.State = "applied"
		default:
			info.State = "incomplete" // cut short: undo finishes putting it back
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if !seen[e.Path] {
				seen[e.Path] = true
				info.Paths = append(info.Paths, e.Path)
			}
		}
		info.Files = len(info.Paths)
		out = append(out, info)
	}
	return out, nil
}

// gone reports whether a removal failed because there was nothing to
// remove: no such file, or a parent that is not a directory.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// undoOne puts one file back as the journal says it was.
func undoOne(fsys FS, root, name string, e JournalEntry) UndoResult {
	t := Target{Root: root, Rel: e.Path}
	r := UndoResult{Path: e.Path}
	data, _, exists, err := fsys.ReadFile(t)
	switch {
	case err != nil && isNotAFile(err):
		// Something else is there now (a directory, a link): the user's.
		r.Action, r.Reason = "refused", "changed since the apply ("+err.Error()+"): left as it is"
		return r
	case err != nil:
		// It cannot be read now (permission, I/O): that may pass, and the
		// journal must stay pending for the next undo to finish.
		r.Action, r.Reason = "failed", err.Error()
		return r
	}
	now := string(data)
	atAfter := (e.After == "absent" && !exists) || (e.After == "file" && exists && sum(now) == e.AfterSHA256)
	atBefore := (!e.Existed && !exists) || (e.Existed && exists && sum(now) == e.BeforeSHA256)
	switch {
	case atBefore:
		r.Action = "unchanged" // never made (a crash before it), or undone already
	case !atAfter:
		r.Action, r.Reason = "refused", "changed since the apply: left as it is"
	case e.Existed:
		before, _, ok, err := fsys.ReadFile(Target{Root: root, Rel: path.Join(JournalDir, name, e.Before)})
		switch {
		case err == nil && !ok:
			r.Action, r.Reason = "refused", "its before-image is missing from the journal: left as it is"
		case err != nil && isNotAFile(err):
			r.Action, r.Reason = "refused", "its before-image in the journal is not a file ("+err.Error()+"): left as it is"
		case err == nil && sum(string(before)) != e.BeforeSHA256:
			r.Action, r.Reason = "refused", "its before-image in the journal does not match its sha256 (altered): left as it is"
		case err != nil:
			r.Action, r.Reason = "failed", err.Error()
		default:
			if err := fsys.WriteFile(t, before, fs.FileMode(e.Mode)); err != nil {
				r.Action, r.Reason = "failed", err.Error()
			} else {
				r.Action = "restored"
			}
		}
	default:
		if err := fsys.Remove(t); err != nil && !gone(err) {
			r.Action, r.Reason = "failed", err.Error()
		} else {
			r.Action = "removed"
		}
	}
	return r
}

// LatestJournal returns the newest journal under root that was not undone
// or rolled back.
func LatestJournal(fsys FS, root string) (string, error) {
	names, err := Journals(fsys, root)
	if err != nil {
		return "", err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if _, done, err := readJournal(fsys, root, names[i]); err == nil && done == "" {
			return names[i], nil
		}
	}
	return "", fmt.Errorf("no journal to undo under %s: %w", path.Join(root, JournalDir), ErrNothingToUndo)
}

// ErrNothingToUndo says every journal under a destination was undone or
// rolled back already (or there is none).
var ErrNothingToUndo = errors.New("nothing to undo")

// IsJournalPath says a path relative to a destination is the tool's own
// (.sandbox/: journals, locks), never a file of the project.
func IsJournalPath(rel string) bool {
	return rel == ".sandbox" || strings.HasPrefix(rel, ".sandbox/")
}
