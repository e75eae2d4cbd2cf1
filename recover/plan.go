package recover

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// Action is what recovery does, or would do, to one file.
type Action string

// Actions (DESIGN.md, the recover report).
const (
	ActCreate        Action = "create"
	ActUpdate        Action = "update"
	ActDelete        Action = "delete"
	ActMove          Action = "move"
	ActMerge         Action = "merge"
	ActUnchanged     Action = "unchanged"
	ActConflict      Action = "conflict"
	ActOutsideRoot   Action = "outside-root"
	ActUnrecoverable Action = "unrecoverable"
	// ActSkipped leaves the host file alone on purpose: its only change has
	// an unknown outcome, its content holds redaction placeholders (unless
	// --redacted apply), or it is the source of a move whose destination
	// was not written (so its content is never left nowhere).
	ActSkipped Action = "skipped"
	// ActLeft is a file a review (sandbox review) chose not to write.
	ActLeft Action = "left"
)

// ConflictPolicy says what to do with a file the host changed in a way
// that does not merge cleanly with the recovered version.
type ConflictPolicy string

// Conflict policies.
const (
	OnConflictSkip      ConflictPolicy = "skip"      // leave the host file, report
	OnConflictBackup    ConflictPolicy = "backup"    // leave it, write PATH.recovered beside it
	OnConflictOverwrite ConflictPolicy = "overwrite" // replace it with the recovered version
	OnConflictMarkers   ConflictPolicy = "markers"   // write it with <<<<<<< markers
)

// RedactedPolicy says what to do with a file graded redacted.
type RedactedPolicy string

// Redacted policies.
const (
	// RedactedSkip lists the file and writes nothing (the default, ""): its
	// content holds placeholders where the real file holds secrets.
	RedactedSkip RedactedPolicy = "skip"
	// RedactedApply writes it as recovered, placeholders included.
	RedactedApply RedactedPolicy = "apply"
)

// FilePlan is what recovery does to one file, decided before anything is
// written.
type FilePlan struct {
	File   *FileResult
	Target Target
	// Mapped is false for a file outside every destination root.
	Mapped bool
	Action Action
	// Host is the host's copy now (H); Write is what will be written.
	Host     Content
	HostMode fs.FileMode
	Write    Content
	// From is the move source on the host, for ActMove, and FromHost its
	// content when planned.
	From     *Target
	FromHost Content
	Reason   string
	// Conflicts counts conflicting regions of a merge.
	Conflicts int
	// HostLines names the lines of a merge's result that are the host's
	// own changes, not the session's ("12-14, 40"), for the report.
	HostLines string
	// Backup is where the recovered version goes under OnConflictBackup.
	Backup *Target
}

// Path is the file's path relative to its destination root, or the agent's
// absolute path when it has none.
func (p *FilePlan) Path() string {
	if p.Mapped {
		return p.Target.Rel
	}
	return strings.TrimPrefix(p.File.Path, manifest.RelativeRoot+"/")
}

// Written reports whether applying the plan changes the host for this file.
func (p *FilePlan) Written() bool {
	switch p.Action {
	case ActCreate, ActUpdate, ActDelete, ActMove, ActMerge:
		return true
	case ActConflict:
		return p.Backup != nil || p.Write.Known
	}
	return false
}

// Hunkable reports whether the plan's change can be taken hunk by hunk: a
// text written over the host's copy (or where it has none), merged or not;
// not a deletion, a move, a backup or a conflict.
func (p *FilePlan) Hunkable() bool {
	switch p.Action {
	case ActCreate, ActUpdate, ActMerge:
		return p.Mapped && p.Backup == nil && p.From == nil && p.Write.Known && p.Write.Exists && p.Host.Known
	}
	return false
}

// Hunks are the hunks of what the plan writes against the host's copy
// (Hunkable), as its diff shows them; nil for another plan.
func (p *FilePlan) Hunks() []Hunk {
	if !p.Hunkable() {
		return nil
	}
	return Hunks(p.hostText(), p.Write.Text)
}

func (p *FilePlan) hostText() string {
	if p.Host.Exists {
		return p.Host.Text
	}
	return ""
}

// Diff is the unified diff of what the plan does to the host's copy, as a
// dry run prints it.
func (p *FilePlan) Diff() string { return diff(p) }

// SHA256 is the hex sha256 of the content the plan writes ("" for none).
func (p *FilePlan) SHA256() string {
	c := p.Write
	if !c.Known || !c.Exists {
		if p.File != nil && p.File.Final.Known && p.File.Final.Exists && !p.Written() {
			return sum(p.File.Final.Text)
		}
		return ""
	}
	return sum(c.Text)
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// plan decides, for every reconstructed file, what to do on the host:
// F == H is unchanged, H == S a plain create/update/delete, anything else a
// three-way merge of S, H and F — clean, or a conflict handled by policy.
// A redacted file is skipped unless redacted is RedactedApply.
func plan(files []*FileResult, m *Mapper, fsys FS, policy ConflictPolicy, redacted RedactedPolicy) ([]*FilePlan, error) {
	var plans []*FilePlan
	byAgent := map[string]*FilePlan{}
	claimed := map[Target]string{}
	for _, f := range files {
		p := planOne(f, m, fsys, policy, redacted, claimed)
		plans = append(plans, p)
		byAgent[f.Path] = p
	}
	keepSources(plans, byAgent)
	pairMoves(plans, byAgent)
	kept := plans[:0]
	for _, p := range plans {
		if p.Action != "" {
			kept = append(kept, p)
		}
	}
	// The report lists, and the apply writes, in path order.
	sort.SliceStable(kept, func(a, b int) bool { return kept[a].Path() < kept[b].Path() })
	return kept, nil
}

// planOne decides what to do with one file. claimed records the host
// targets already planned, so two files never write one target.
func planOne(f *FileResult, m *Mapper, fsys FS, policy ConflictPolicy, redacted RedactedPolicy, claimed map[Target]string) *FilePlan {
	p := &FilePlan{File: f}
	t, ok := m.Map(f.Path)
	if f.Outside {
		p.Action = ActOutsideRoot
		p.Reason = "the path leads outside the destination root: never written"
		return p
	}
	if !ok {
		p.Action = ActOutsideRoot
		p.Reason = "outside the destination root: never written"
		return p
	}
	p.Target, p.Mapped = t, true
	if other, dup := claimed[t]; dup {
		p.Action = ActConflict
		p.Reason = fmt.Sprintf("%s and %s map to the same host file", other, f.Path)
		return p
	}
	claimed[t] = f.Path
	data, mode, exists, err := fsys.ReadFile(t)
	var esc *EscapeError
	if errors.As(err, &esc) {
		p.Action = ActOutsideRoot
		p.Reason = esc.Error() + ": never written"
		return p
	}
	if err != nil {
		p.Action = ActConflict
		p.Reason = err.Error()
		return p
	}
	p.Host, p.HostMode = Content{Known: true, Exists: exists, Text: string(data)}, mode
	if f.Confidence == Redacted && redacted != RedactedApply {
		// Writing it would put placeholders where the real file has its
		// secrets (or a file under a made-up name): listed, not written.
		p.Action, p.Reason = ActSkipped, f.Reason+"; not written (--redacted apply writes it)"
		return p
	}
	decide(p, policy)
	return p
}

func decide(p *FilePlan, policy ConflictPolicy) {
	f, h := p.File, p.Host
	fin, start := f.Final, f.Start
	if f.Confidence == Unrecoverable {
		p.Action, p.Reason = ActUnrecoverable, f.Reason
		return
	}
	if !fin.Known {
		// Only a call of unknown outcome changed it: listed, never guessed at.
		p.Action, p.Reason = ActSkipped, f.Reason
		return
	}
	if equal(fin, h) {
		p.Action = ActUnchanged
		if !fin.Exists {
			p.Reason = "deleted by the agent; not on the host"
		}
		return
	}
	if !fin.Exists {
		// The agent deleted the file.
		switch {
		case start.Known && equal(start, h):
			p.Action, p.Write = ActDelete, fin
		case h.Exists && f.HadContent(h.Text):
			// The host holds a state the session itself went through (it
			// wrote the file, then removed it): deleting loses nothing.
			p.Action, p.Write = ActDelete, fin
			p.Reason = "the host has an earlier state of this session's file"
		default:
			conflict(p, policy, "the agent deleted this file, but the host copy differs from what the session started from")
		}
		return
	}
	if !h.Exists {
		// Writing a file that is not there loses nothing on the host.
		p.Action, p.Write = ActCreate, fin
		if start.Known && start.Exists {
			p.Reason = "not on the host: created from the recovered content"
		}
		return
	}
	if start.Known && equal(start, h) {
		p.Action, p.Write = ActUpdate, fin
		return
	}
	if f.HadContent(h.Text) {
		// The host holds a state the session itself went through: it is only
		// behind, and moving it forward loses nothing.
		p.Action, p.Write = ActUpdate, fin
		p.Reason = "the host has an earlier state of this session's file"
		return
	}
	if !start.Known || !start.Exists {
		conflict(p, policy, "the host file differs and the content the session started from is unknown")
		return
	}
	merged, n := Merge3(eol(start.Text, h.Text), h.Text, eol(fin.Text, h.Text), "host", "recovered")
	if n == 0 && merged == h.Text {
		p.Action, p.Reason = ActUnchanged, "the host already has the session's changes"
		return
	}
	if n == 0 {
		p.Action, p.Write = ActMerge, Content{Known: true, Exists: true, Text: merged}
		p.HostLines = hostLines(eol(fin.Text, h.Text), merged)
		p.Reason = "the host changed since the session started: merged"
		switch {
		case strings.ContainsAny(p.HostLines, ",-"):
			p.Reason += "; lines " + p.HostLines + " of the result are the host's own changes, never in the transcript"
		case p.HostLines != "":
			p.Reason += "; line " + p.HostLines + " of the result is the host's own change, never in the transcript"
		}
		return
	}
	p.Conflicts = n
	conflict(p, policy, fmt.Sprintf("the host changed since the session started: %d conflicting region(s)", n))
	if policy == OnConflictMarkers {
		p.Write = Content{Known: true, Exists: true, Text: merged}
	}
}

// eol gives s the line endings of like, so that a host file that uses CRLF
// keeps them (transcripts often record LF-normalised text).
func eol(s, like string) string {
	if strings.Contains(like, "\r\n") && !strings.Contains(s, "\r\n") {
		return strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

func conflict(p *FilePlan, policy ConflictPolicy, why string) {
	p.Action, p.Reason = ActConflict, why
	fin := p.File.Final
	switch policy {
	case OnConflictOverwrite:
		p.Action, p.Write = ActUpdate, fin
		if !fin.Exists {
			p.Action = ActDelete
		}
		p.Reason = why + "; overwritten (--on-conflict overwrite)"
	case OnConflictBackup:
		if fin.Exists {
			b := Target{Root: p.Target.Root, Rel: p.Target.Rel + ".recovered"}
			p.Backup = &b
			p.Reason = why + "; recovered version written to " + b.Rel
		}
	case OnConflictMarkers:
		if fin.Exists {
			merged, _ := Merge3(eol(p.File.Start.Text, p.Host.Text), p.Host.Text, eol(fin.Text, p.Host.Text), "host", "recovered")
			p.Write = Content{Known: true, Exists: true, Text: merged}
			p.Reason = why + "; written with conflict markers"
		}
	}
}

// Grade is the file's grade as the plan writes it: a merge is graded
// merged at best, since the host's own lines were never in the transcript
// and nothing proves the two sets of changes belong together.
func (p *FilePlan) Grade() Confidence {
	g := p.File.Confidence
	if p.Action == ActMerge && g.rank() > Merged.rank() {
		return Merged
	}
	return g
}

// hostLines names the lines of merged that the recovered content fin does
// not have: the host's own changes, as ranges of line numbers ("3, 10-12").
func hostLines(fin, merged string) string {
	var parts []string
	shift := 0 // lines the edits so far added to the result
	for _, e := range lineEdits(fin, merged) {
		if len(e.lines) == 0 {
			continue // a session line the host removed: no line of the result
		}
		from := e.from + shift + 1
		to := from + len(e.lines) - 1
		if from == to {
			parts = append(parts, fmt.Sprint(from))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", from, to))
		}
		shift += len(e.lines) - (e.to - e.from)
	}
	return strings.Join(parts, ", ")
}

func equal(a, b Content) bool {
	return a.Known && b.Known && a.Exists == b.Exists && a.Text == b.Text
}

// keepSources keeps the source of a move whose destination is not written
// (outside the root, a conflict left alone, unrecoverable): deleting it would
// leave the file's content nowhere.
func keepSources(plans []*FilePlan, byAgent map[string]*FilePlan) {
	for _, p := range plans {
		if p.File.MovedFrom == "" || (p.Written() && p.Action != ActConflict) || p.Action == ActUnchanged {
			continue
		}
		if p.Action == ActConflict && p.Write.Known && p.Write.Exists {
			continue // written after all (overwrite, markers)
		}
		src, ok := byAgent[p.File.MovedFrom]
		if !ok || src.Action != ActDelete {
			continue
		}
		src.Action, src.Write = ActSkipped, Content{}
		src.Reason = fmt.Sprintf("the source is kept: the move to %s was not written (%s)", p.Path(), p.Action)
	}
}

// pairMoves turns a created destination and the deleted source of the same
// move into one move action.
func pairMoves(plans []*FilePlan, byAgent map[string]*FilePlan) {
	for _, p := range plans {
		if p.Action != ActCreate || p.File.MovedFrom == "" {
			continue
		}
		src, ok := byAgent[p.File.MovedFrom]
		if !ok || src.Action != ActDelete || !src.Mapped || src.Target.Root != p.Target.Root {
			continue
		}
		t := src.Target
		p.Action, p.From, p.FromHost = ActMove, &t, src.Host
		src.Action = "" // folded into the move
	}
}
