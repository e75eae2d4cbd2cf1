package recover

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
	"github.com/agentsandbox/sandbox/manifest"
)

// Confidence says how far a reconstructed file can be trusted.
type Confidence string

// Confidence levels.
const (
	// Exact: the content is pinned by transcript evidence (or the start
	// commit the transcript recorded) and replayed faithfully from there.
	Exact Confidence = "exact"
	// Git: the replay started from a commit found by the session's branch
	// and start time (or named with --base git:REV), not one it recorded.
	Git Confidence = "git"
	// HostBased: the replay started from the host's copy of the file.
	HostBased Confidence = "host-based"
	// Merged: the file is written as a three-way merge of the host's copy
	// and the recovered content. Never exact, whatever the replay was: the
	// host's own lines were never in the transcript. A plan grades, not a
	// replay (FilePlan.Grade).
	Merged Confidence = "merged"
	// Stale: a later shell command changed the file in a way that cannot
	// be replayed; the content is the last one known before it.
	Stale Confidence = "stale"
	// UnknownOutcome: a call whose outcome is unknown (it never got its
	// result) changed the file, or would have.
	UnknownOutcome Confidence = "unknown-outcome"
	// Redacted: the session wrote a redaction placeholder into the file
	// (or its path holds one): the transcript passed through a redactor,
	// and the content is known to differ from the real file's where the
	// placeholders are. It ranks below unknown-outcome, whose content may
	// well be the real one, and above unrecoverable, since every other
	// line is as proven as the replay made it.
	Redacted Confidence = "redacted"
	// Unrecoverable: the base is unknown, or a hunk would not apply.
	Unrecoverable Confidence = "unrecoverable"
)

// rank orders grades from the least proven (0) to exact.
func (c Confidence) rank() int {
	switch c {
	case Exact:
		return 7
	case Git:
		return 6
	case HostBased:
		return 5
	case Merged:
		return 4
	case Stale:
		return 3
	case UnknownOutcome:
		return 2
	case Redacted:
		return 1
	}
	return 0
}

// BaseFunc reads the host's copy of a file named by its agent path. ok is
// false when the host cannot say (outside every root, unreadable); exists
// is false when the host has no such file.
type BaseFunc func(agentPath string) (content []byte, exists, ok bool)

// Origin names where a file's content at the session's start came from.
type Origin struct {
	// Name is what the report says: "transcript", "git:<short hash>",
	// "host" or "--base".
	Name string
	// Grade is the best grade a replay from it can have.
	Grade Confidence
}

// StartFunc reads a file's content at the session's start from a source
// that knows it better than the host (a start commit). ok is false when it
// does not know the file.
type StartFunc func(agentPath string) (content []byte, ok bool, origin Origin)

// Base names.
const (
	BaseTranscript = "transcript"
	BaseHost       = "host"
	BaseDir        = "--base"
)

// Content is a file's content at one point, or its absence.
type Content struct {
	Known  bool
	Exists bool
	Text   string
}

// FileResult is one file after reconstruction.
type FileResult struct {
	// Path is the file's path as the agent saw it (absolute).
	Path string
	// Start is the content the session began from (S); Final is the
	// content the session left (F).
	Start, Final Content
	Confidence   Confidence
	// Ops counts the applied operations that touched the file.
	Ops int
	// MovedFrom is the source of a move whose destination this is.
	MovedFrom string
	// Drift records every disagreement between evidence and the replay.
	Drift []string
	// Fuzz records chunks matched past the exact pass.
	Fuzz []string
	// Notes record anything else the user should know (shell writes).
	Notes []string
	// Reason says why the file is unrecoverable.
	Reason   string
	Sessions []string
	// Kind is the kind of artefact an agent exported it as (simple form).
	Kind string
	// Base names where Start came from: "transcript", "git:<short hash>",
	// "host" or "--base" ("" when it is unknown).
	Base string
	// Outside says the path leads out of its root whatever the mapping.
	Outside bool
	// states holds a digest of every content the file is known to have
	// had during the session, so that a host copy that is merely behind can
	// be told from one that moved on: its sha256 when sha is set (a
	// manifest lists them), else stateKey's keyed hash.
	states map[[32]byte]bool
	sha    bool
	// order is the file's first appearance, to keep results stable.
	order int
}

type fstate struct {
	cur    Content
	pinned bool // derives from evidence, replayed faithfully since
	// crlf: the file uses CRLF line endings (seen on the host copy or a
	// backup). cur then holds LF text, and CRLF is put back on output, as
	// the agents do when they edit a CRLF file.
	crlf bool
	res  *FileResult
	// stale says why a shell command made the content uncertain since the
	// last evidence; unknown says which call of unknown outcome did.
	stale, unknown string
	// guess says the pinned content derives from a start commit found by
	// branch and time (or named by the user), not one the session recorded:
	// the file is graded git, and matched strictly.
	guess bool
	// last is the state remember hashed last: evidence that agrees with
	// the replay (most of it) needs no second hash of the same text.
	last              string
	hasLast, lastCRLF bool
	// proven is where evidence of the whole content (a full Read, an
	// Edit's original, a Write) was last adopted: a line lost before it
	// in the same transcript no longer matters (see Lost).
	proven position
	// boundNotes counts the notes of commands that change files they do
	// not name (see quiet).
	boundNotes int
	// inserted holds the text unconfirmed insertions put in (see
	// insertedAgain), up to maxInserted bytes, and where the first was.
	inserted   []string
	insertedAt string
	// undo is what Goose's undo_edit restores: the file's state before
	// each of its edits, the last one last.
	undo []gooseSaved
}

// failedHunk is an Update hunk of a patch that reported failure.
type failedHunk struct {
	op *manifest.Op
	h  manifest.Hunk
}

// position is a line of a transcript.
type position struct {
	transcript string
	line       int
}

// faithful reports whether the content is the one the agent saw, so that
// its own fuzzy matching applies.
func (f *fstate) faithful() bool { return f.pinned && !f.guess }

// output returns content as it is on disk.
func (f *fstate) output(c Content) Content {
	if f.crlf && c.Known && c.Exists {
		c.Text = strings.ReplaceAll(c.Text, "\n", "\r\n")
	}
	return c
}

// isCRLF tells a CRLF file the way Claude Code does: more CRLF than bare LF
// line ends in its first 4 KiB.
func isCRLF(s string) bool {
	if len(s) > 4096 {
		s = s[:4096]
	}
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && crlf > strings.Count(s, "\n")-crlf
}

func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// Stats counts what reconstruction did with the operations.
type Stats struct {
	Ops, Applied, Failed, Rejected, Unknown, Shell, Duplicates int
	// Observations counts the states seen in transcripts (full reads,
	// backups); Checks counts evidence compared with the replay, and
	// Mismatches those that disagreed (drift).
	Observations, Checks, Mismatches int
}

// ReconstructOptions tune reconstruction.
type ReconstructOptions struct {
	// IncludeUnknown replays operations whose outcome is unknown (the call
	// never finished) as if they had been applied.
	IncludeUnknown bool
	// History keeps, per file, every operation that touched it with the
	// content before and after (for sandbox inspect and log).
	History bool
	// Key names the file an agent path refers to; paths with the same key
	// are one file (two sessions whose cwds map onto the same directory).
	// By default the agent path itself. It must give one path one key
	// whenever it is asked: each path is asked once.
	Key func(agentPath string) string
	// IsDir reports whether the host has a directory at an agent path (to
	// tell "mv a dir" from a rename). By default nothing is a directory.
	IsDir func(agentPath string) bool
	// Start, when set, is asked for a file's starting content before the
	// base: a start commit knows it better than the host.
	Start StartFunc
	// BaseName names what the base reads, for the report: "host" (the
	// default) or "--base".
	BaseName string
	// SHA256States records each state a file goes through by its sha256,
	// which a manifest lists (export). Otherwise by a keyed hash that only
	// this process can compare, a tenth of the cost: every state of every
	// file is hashed, whole.
	SHA256States bool
}

// Reconstructor replays operations one at a time, so that a transcript can
// be replayed while it is still being read.
type Reconstructor struct {
	// at is the line of the operation being replayed.
	at    position
	key   func(string) string
	base  BaseFunc
	files map[string]*fstate
	n     int
	opts  ReconstructOptions
	seen  map[dupKey]bool
	stats Stats
	steps map[string][]Step
	// warnings are things the report must say that belong to no one file.
	warnings []manifest.Warning
	// stashes are the git stashes waiting for their pop, by tree (see
	// bound).
	stashes map[string]*stash
	// read holds what each script content read so far does (by path and
	// content hash), and hushed the operation whose scripts were all read
	// before: what they could not name was said then, and is not said
	// again.
	read   map[[32]byte]scriptRead
	hushed *manifest.Op
	// failed holds, by file key, the Update hunks of patches that reported
	// failure since the last evidence of the file's whole content: Codex can
	// report a patch failed after writing it (openai/codex issue 18535), and
	// a later patch that fits only after one shows that it was applied.
	failed map[string][]failedHunk
	// hostFiles are the host's copies of the project files tasks were read
	// from (see projectFile).
	hostFiles map[string]Content
}

// Warnings returns what the replay found that belongs to no one file (a
// shell command that changed files it does not name).
func (r *Reconstructor) Warnings() []manifest.Warning { return r.warnings }

// Step is one operation's effect on one file.
type Step struct {
	Path   string      `json:"path"`
	Op     manifest.Op `json:"-"`
	Before Content     `json:"-"`
	After  Content     `json:"-"`
	// Replayed is false for an operation that was not replayed (failed,
	// rejected, unknown) or could not be (shell).
	Replayed bool `json:"replayed"`
}

// History returns the steps of the file an agent path names, oldest first.
func (r *Reconstructor) History(agentPath string) []Step { return r.steps[r.key(agentPath)] }

// Histories returns every file's steps, by the agent path first seen.
func (r *Reconstructor) Histories() map[string][]Step {
	out := map[string][]Step{}
	for _, steps := range r.steps {
		if len(steps) > 0 {
			out[steps[0].Path] = steps
		}
	}
	return out
}

// touched lists the paths an operation names, with its evidence's.
func touched(op *manifest.Op) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range op.Paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, e := range op.Evidence {
		if !seen[e.Path] {
			seen[e.Path] = true
			out = append(out, e.Path)
		}
	}
	return out
}

// record notes an operation's effect on the files it touched.
func (r *Reconstructor) record(op *manifest.Op, before map[string]Content, replayed bool) {
	for _, p := range touched(op) {
		k := r.key(p)
		after := Content{}
		if f, ok := r.files[k]; ok {
			after = f.output(f.cur)
		}
		b := before[k]
		if !replayed && !after.Known {
			after = b
		}
		r.steps[k] = append(r.steps[k], Step{Path: p, Op: *op, Before: b, After: after, Replayed: replayed})
	}
}

func (r *Reconstructor) snapshot(op *manifest.Op) map[string]Content {
	out := map[string]Content{}
	for _, p := range touched(op) {
		k := r.key(p)
		if f, ok := r.files[k]; ok {
			out[k] = f.output(f.cur)
		}
	}
	return out
}

// NewReconstructor returns a reconstructor that reads starting content
// through base.
func NewReconstructor(base BaseFunc, opts ReconstructOptions) *Reconstructor {
	r := &Reconstructor{base: base, files: map[string]*fstate{}, key: opts.Key, opts: opts, seen: map[dupKey]bool{}, steps: map[string][]Step{}}
	if r.key == nil {
		r.key = func(p string) string { return p }
	} else {
		// A key is a pure function of the path (a Mapper's rules), asked
		// for at every operation on a file: each path is mapped once.
		key, keys := r.key, map[string]string{}
		r.key = func(p string) string {
			k, ok := keys[p]
			if !ok {
				k = key(p)
				keys[p] = k
			}
			return k
		}
	}
	return r
}

// reconstruct replays ops (already in replay order) and returns every file
// they touch, in order of first appearance.
func reconstruct(ops []manifest.Op, base BaseFunc, opts ReconstructOptions) ([]*FileResult, Stats) {
	r := NewReconstructor(base, opts)
	for i := range ops {
		r.Add(&ops[i])
	}
	return r.Finish()
}

// Add replays one operation.
func (r *Reconstructor) Add(op *manifest.Op) {
	r.at = position{op.Provenance.Transcript, op.Provenance.Line}
	st := &r.stats
	if op.Kind == manifest.KindObserve {
		st.Observations++
		r.observe(op)
		return
	}
	if key := dedupKey(op); key != (dupKey{}) {
		if r.seen[key] {
			st.Duplicates++
			return
		}
		r.seen[key] = true
	}
	st.Ops++
	switch op.Outcome {
	case manifest.OutcomeApplied:
		st.Applied++
	case manifest.OutcomeFailed:
		st.Failed++
	case manifest.OutcomeRejected:
		st.Rejected++
	default:
		st.Unknown++
	}
	replay := op.Outcome == manifest.OutcomeApplied || (r.opts.IncludeUnknown && op.Outcome == manifest.OutcomeUnknown)
	if op.Kind == manifest.KindShell {
		op = r.runs(op) // the scripts it runs, read as they are now
	}
	var before map[string]Content
	if r.opts.History {
		before = r.snapshot(op)
	}
	if op.Kind == manifest.KindShell {
		st.Shell++
		r.shell(op, replay)
	} else if replay {
		r.change(op)
	} else if op.Kind == manifest.KindPatch && op.Outcome == manifest.OutcomeFailed && op.Patch != nil {
		r.keepFailed(op)
	}
	if op.Outcome == manifest.OutcomeUnknown {
		r.unknownOutcome(op, replay)
	}
	if r.opts.History {
		r.record(op, before, replay)
	}
}

// Finish returns every file touched, in order of first appearance.
func (r *Reconstructor) Finish() ([]*FileResult, Stats) {
	r.settleStash("")
	out := make([]*FileResult, 0, len(r.files))
	for _, f := range r.files {
		if f.res.Ops == 0 && (f.boundNotes > 0 && f.quiet() || len(f.res.Notes) == 0 && f.res.Reason == "" && f.unknown == "" && f.stale == "") {
			continue // only observed (read, backed up), never changed: nothing to recover
		}
		f.remember()
		res := f.res
		if why := f.insertedAgain(); why != "" {
			f.cur, f.pinned = Content{}, false
			res.Reason = why
		}
		res.Final = f.output(f.cur)
		switch {
		case f.unknown != "" && (f.cur.Known || res.Reason == ""):
			// Whatever else is known, a call that may or may not have run
			// decides the content: never graded above that.
			res.Confidence = UnknownOutcome
			res.Reason = f.unknown
		case !f.cur.Known:
			res.Confidence = Unrecoverable
			if res.Reason == "" && res.Ops == 0 {
				// Only calls that cannot be replayed wrote it: the last of
				// them says which, where.
				res.Reason = "written only by calls that cannot be replayed"
				if f.stale != "" {
					res.Reason = strings.TrimSuffix(f.stale, lastKnown)
				}
			}
			if res.Reason == "" {
				res.Reason = "the file's content before the session is unknown (no evidence in the transcript, no host copy)"
			}
		case f.stale != "":
			res.Confidence = Stale
			res.Reason = f.stale
		case f.pinned && f.guess:
			res.Confidence = Git
			res.Reason = ""
		case f.pinned:
			res.Confidence = Exact
			res.Reason = ""
		default:
			res.Confidence = HostBased
			res.Reason = ""
		}
		redacted(res)
		out = append(out, res)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].order < out[b].order })
	return out, r.stats
}

// redacted grades a file redacted when its path, or a line the session
// wrote into it, holds a redaction placeholder (see
// manifest.IntroducedPlaceholder): whatever else is proven, the real file
// differs there. The grade it had otherwise stays in its notes. An
// unrecoverable file stays so: it has no content to hold one.
func redacted(res *FileResult) {
	if res.Confidence == Unrecoverable || !res.Final.Known {
		return
	}
	var why string
	if ph, ok := manifest.FirstPlaceholder(res.Path); ok {
		why = fmt.Sprintf("the path holds the redaction placeholder %s: the transcript was redacted, the file's real name is not in it", ph.Text)
	} else if res.Final.Exists {
		start := ""
		if res.Start.Known && res.Start.Exists {
			start = res.Start.Text
		}
		if ph, ok := manifest.IntroducedPlaceholder(start, res.Final.Text); ok {
			why = fmt.Sprintf("line %d holds the redaction placeholder %s: the transcript was redacted, the secret is not in it", ph.Line, ph.Text)
		}
	}
	if why == "" {
		return
	}
	if res.Reason != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: %s", res.Confidence, res.Reason))
	}
	res.Confidence, res.Reason = Redacted, why
}

// dedupKey identifies a call copied into several transcripts (fork,
// resume): its id and content, hashed so that the set of calls seen costs a
// few bytes each whatever their size. The set lives only as long as the
// replay, so two 64-bit keyed hashes do (hash/maphash, seeded afresh by each
// process, as the states' keys are: no transcript can be made to collide),
// read in place: a sha256 over []byte copies of the patch text cost a copy of
// every patch and more time than the hashing itself. Each field is preceded
// by its length, so that no two calls spell the same key.
func dedupKey(op *manifest.Op) dupKey {
	if op.Identity == "" && op.Provenance.CallID == "" {
		return dupKey{}
	}
	var k dupKey
	for i, seed := range stateSeeds {
		var h maphash.Hash
		h.SetSeed(seed)
		if op.Identity != "" {
			h.WriteByte(0)
			field(&h, op.Identity)
		} else {
			h.WriteByte(1) // no identity: never the key of one
			field(&h, op.Provenance.CallID)
			field(&h, op.PatchText)
			field(&h, op.Command)
		}
		k[i] = h.Sum64()
	}
	return k
}

// dupKey is dedupKey's result; the zero key says there is none.
type dupKey [2]uint64

// field writes s into h after its length.
func field(h *maphash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.WriteString(s)
}

func where(op *manifest.Op) string {
	return fmt.Sprintf("%s:%d", path.Base(op.Provenance.Transcript), op.Provenance.Line)
}

// entry returns a file's state, made empty the first time, with session
// among those that touched it; ok says it was there already.
func (r *Reconstructor) entry(p, session string) (f *fstate, ok bool) {
	r.touch(p)
	k := r.key(p)
	f, ok = r.files[k]
	if !ok {
		f = &fstate{res: &FileResult{Path: p, order: r.n, sha: r.opts.SHA256States}}
		r.n++
		r.files[k] = f
	}
	if !containsString(f.res.Sessions, session) {
		f.res.Sessions = append(f.res.Sessions, session)
	}
	return f, ok
}

// file returns a file's state, reading the host's copy the first time it is
// needed as a base.
func (r *Reconstructor) file(p string, op *manifest.Op, needBase bool) *fstate {
	f, _ := r.entry(p, op.Session)
	if needBase && !f.cur.Known && f.res.Ops == 0 && !f.res.Start.Known {
		if data, ok, origin := r.startOf(p); ok {
			f.res.Start = Content{Known: true, Exists: true, Text: string(data)}
			f.res.Base = origin.Name
			f.cur = f.res.Start
			f.pinned, f.guess = true, origin.Grade != Exact
		} else if data, exists, ok := r.base(p); ok {
			f.res.Start = Content{Known: true, Exists: exists, Text: string(data)}
			f.res.Base = r.baseName()
			f.cur = f.res.Start
		}
		if f.cur.Exists && isCRLF(f.cur.Text) {
			f.crlf, f.cur.Text = true, lf(f.cur.Text)
		}
	}
	return f
}

// startOf asks the start source (a commit) for a file's starting content.
func (r *Reconstructor) startOf(p string) ([]byte, bool, Origin) {
	if r.opts.Start == nil {
		return nil, false, Origin{}
	}
	return r.opts.Start(p)
}

func (r *Reconstructor) baseName() string {
	if r.opts.BaseName != "" {
		return r.opts.BaseName
	}
	return BaseHost
}

// created sets the start of a file the session wrote whole (an Add, a
// Write, a move's destination) when nothing else said what it began as: the
// start commit's content when the commit has the file (so that a host
// still at the start is a plain update), else absent.
func (r *Reconstructor) created(f *fstate) {
	if f.res.Ops > 0 || f.res.Start.Known {
		return
	}
	if data, ok, origin := r.startOf(f.res.Path); ok {
		f.res.Start, f.res.Base = Content{Known: true, Exists: true, Text: string(data)}, origin.Name
		return
	}
	f.res.Start, f.res.Base = Content{Known: true}, BaseTranscript
}

// againstStart compares the transcript's first evidence of a file with
// the start commit's content: they differ when the work tree was not clean
// at the start (or changed before the agent looked). The evidence wins.
func (r *Reconstructor) againstStart(f *fstate, c Content, op *manifest.Op) {
	if f.res.Ops > 0 || f.cur.Known || !c.Exists {
		return
	}
	data, ok, origin := r.startOf(f.res.Path)
	if !ok {
		return
	}
	r.stats.Checks++
	a, b := lf(string(data)), lf(c.Text)
	if a == b || strings.TrimSuffix(a, "\n") == strings.TrimSuffix(b, "\n") {
		return
	}
	r.stats.Mismatches++
	f.res.Drift = append(f.res.Drift, fmt.Sprintf("%s: the transcript's content differs from the start commit %s (the work tree was not clean, or the file changed before the agent saw it); continuing from the transcript", where(op), origin.Name))
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// remember records the file's current content as one it had.
func (f *fstate) remember() {
	if f.cur.Known && f.cur.Exists {
		if f.hasLast && f.cur.Text == f.last && f.crlf == f.lastCRLF {
			return // already in the set: a set, so the same as hashing it again
		}
		if f.res.states == nil {
			f.res.states = map[[32]byte]bool{}
		}
		f.res.states[f.res.stateKey(f.output(f.cur).Text)] = true
		f.last, f.hasLast, f.lastCRLF = f.cur.Text, true, f.crlf
	}
}

// stateKey is the digest of a state of the file, s read in place (a
// []byte(s) conversion would copy whole files once more for every state of
// every file): its sha256 when the file's states are listed in a manifest,
// else two 64-bit keyed hashes (hash/maphash, seeded afresh by each process,
// so that no transcript can be made to collide with a host file).
func (r *FileResult) stateKey(s string) [32]byte {
	if r.sha {
		return sha256.Sum256(zerocopy.Bytes(s))
	}
	var k [32]byte
	binary.LittleEndian.PutUint64(k[:], maphash.String(stateSeeds[0], s))
	binary.LittleEndian.PutUint64(k[8:], maphash.String(stateSeeds[1], s))
	return k
}

// stateSeeds key the states' hashes (stateKey).
var stateSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// HadContent reports whether the file held text at some point of the
// session (its start, or after any replayed operation).
func (r *FileResult) HadContent(text string) bool {
	return r.states[r.stateKey(text)]
}

// start records S the first time a file is touched.
func (f *fstate) start(c Content) {
	if f.res.Ops == 0 && !f.res.Start.Known {
		f.res.Start = c
	}
}

// checkpoint adopts evidence of a file's content, recording drift when the
// replay disagrees.
func (f *fstate) checkpoint(c Content, what string, op *manifest.Op, r *Reconstructor) {
	if f.crlf && c.Exists {
		c.Text = lf(c.Text)
	}
	if f.cur.Known {
		r.stats.Checks++
		if f.cur.Exists != c.Exists || (f.cur.Text != c.Text && lf(f.cur.Text) != lf(c.Text)) {
			r.stats.Mismatches++
			f.res.Drift = append(f.res.Drift, fmt.Sprintf("%s: %s differs from the replayed content (changed outside the tools); continuing from the evidence", where(op), what))
		}
	}
	if f.res.Ops == 0 && !f.res.Start.Known {
		f.res.Start = f.output(c)
		f.res.Base = BaseTranscript
	}
	f.cur = c
	f.pinned, f.guess = true, false
	f.stale, f.unknown = "", "" // the evidence settles what they left open
	f.inserted, f.insertedAt = nil, ""
	delete(r.failed, r.key(f.res.Path))
	f.proven = r.at
	f.remember()
}

type hunkResult struct {
	path     string
	content  Content
	pinned   bool
	full     bool // the whole content was written as sent (an Add)
	guess    bool // derives from a start commit found by branch and time
	crlf     bool // a move keeps its source's line endings
	moveFrom string
}

// change replays one applied operation: its pre-images, the change itself
// with the agent's semantics, then its post-images.
func (r *Reconstructor) change(op *manifest.Op) {
	// Pre-images come first: they say what the file held before this call.
	for _, e := range op.Evidence {
		switch {
		case e.Kind == manifest.EvidencePre:
			f := r.file(e.Path, op, false)
			r.againstStart(f, Content{Known: true, Exists: true, Text: e.Content}, op)
			if e.LFNormalized && !f.cur.Known && f.res.Ops == 0 {
				r.lineEndings(f, e)
			}
			f.checkpoint(Content{Known: true, Exists: true, Text: e.Content}, "the recorded pre-image", op, r)
		case e.Kind == manifest.EvidenceBase:
			r.base1(e, op)
		}
	}
	switch op.Kind {
	case manifest.KindPatch:
		r.patch(op)
	case manifest.KindWrite:
		if replay, ok := writeRules[op.Provenance.Rule()]; ok {
			replay(r, op) // the agent's own way of writing a file
			break
		}
		r.write(op)
	case manifest.KindEdit:
		if replay, ok := editRules[op.Provenance.Rule()]; ok && len(op.Paths) > 0 {
			replay(r, op) // the agent's own edit semantics
			break
		}
		// A diff the agent recorded of an exact replacement (Copilot CLI's)
		// checks the content before the edit and the content after it; a
		// replay it contradicts is not what the agent wrote, and is graded
		// stale.
		drift := func() []string {
			if len(op.Paths) == 0 {
				return nil
			}
			if f, ok := r.files[r.key(op.Paths[0])]; ok {
				return f.res.Drift
			}
			return nil
		}
		seen := len(drift())
		for _, e := range op.Evidence {
			if e.Kind == manifest.EvidenceDiff {
				r.checkDiff(e, op)
			}
		}
		r.edit(op)
		for _, e := range op.Evidence {
			if e.Kind == manifest.EvidenceDiff {
				r.checkDiffAfter(e, op)
			}
		}
		if d := drift(); len(d) > seen {
			f := r.files[r.key(op.Paths[0])]
			f.stale = d[seen] + "; the replayed content is not what the agent wrote"
		}
	case manifest.KindNotebook:
		r.notebook(op)
	}
	r.postEvidence(op)
}

// editRules replay the edits of the agents whose edit tools have rules of
// their own (manifest.EditRule); every other edit replays with exact string
// replacement (edit). Each rule's file registers it.
var editRules = map[manifest.EditRule]func(*Reconstructor, *manifest.Op){}

// writeRules replay the whole-file writes of the agents that keep a
// replaced file's line endings or BOM; every other write is the content as
// sent (write).
var writeRules = map[manifest.EditRule]func(*Reconstructor, *manifest.Op){}

func (r *Reconstructor) patch(op *manifest.Op) {
	if op.Patch == nil {
		for _, p := range op.Paths {
			f := r.file(p, op, false)
			f.res.Ops++
			f.cur = Content{}
			f.pinned = false
			f.res.Reason = fmt.Sprintf("%s: the agent's patch was applied but its text does not parse here (%s)", where(op), op.Note)
		}
		return
	}
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidenceDiff {
			r.checkDiff(e, op)
		}
	}
	// Codex verifies every hunk against the state before the call, then
	// writes them in order; so every result is computed before any is kept.
	var results []hunkResult
	for _, h := range op.Patch.Hunks {
		switch h.Kind {
		case manifest.HunkAdd:
			results = append(results, hunkResult{path: h.Target, pinned: true, full: true, content: Content{Known: true, Exists: true, Text: h.Contents}})
		case manifest.HunkDelete:
			f := r.file(h.Target, op, true)
			if f.cur.Known && !f.cur.Exists {
				f.res.Drift = append(f.res.Drift, where(op)+": deleted by the agent, but the replay has no such file")
			}
			results = append(results, hunkResult{path: h.Target, pinned: true, content: Content{Known: true}})
		case manifest.HunkUpdate:
			results = append(results, r.update(op, h)...)
		}
	}
	for _, h := range results {
		f := r.file(h.path, op, false)
		if f.res.Ops == 0 && !f.res.Start.Known && h.content.Exists {
			// A file the agent created: it began as the start commit has it,
			// or absent, as far as anyone knows.
			r.created(f)
		}
		f.res.Ops++
		f.remember()
		f.cur, f.pinned = h.content, h.pinned
		if h.full {
			f.crlf = false // written whole, as the agent sent it
			f.guess = false
		} else if h.moveFrom != "" {
			f.guess = h.guess
		}
		if h.full || (h.content.Known && !h.content.Exists) {
			f.stale = "" // written whole or deleted: nothing earlier matters
			delete(r.failed, r.key(h.path))
		}
		f.remember()
		if h.moveFrom != "" {
			f.res.MovedFrom = h.moveFrom
			f.crlf = h.crlf
		}
	}
	deleted := map[string]bool{}
	for _, h := range op.Patch.Hunks {
		if h.Kind == manifest.HunkDelete {
			deleted[h.Target] = true
		}
	}
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidenceDeleted || (e.Kind == manifest.EvidencePre && deleted[e.Path]) {
			// A codex delete's recorded content: the file is gone after the
			// call. (A pre-image of a file the patch updates, which some agents
			// records, was taken before the call.)
			f := r.file(e.Path, op, false)
			f.cur, f.pinned = Content{Known: true}, true
		}
	}
}

// lineEndings learns a file's line endings from the host copy when the
// transcript's first evidence of it is LF-normalised: if the host holds the
// same text with CRLF, the session started from the host's bytes and the
// result keeps CRLF.
func (r *Reconstructor) lineEndings(f *fstate, e manifest.Evidence) {
	data, exists, ok := r.base(f.res.Path)
	if !ok || !exists || !isCRLF(string(data)) || lf(string(data)) != e.Content {
		return
	}
	f.crlf = true
	f.res.Start, f.res.Base = Content{Known: true, Exists: true, Text: string(data)}, BaseTranscript
}

// postEvidence adopts what the transcript says a file held after a call.
func (r *Reconstructor) postEvidence(op *manifest.Op) {
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidencePost {
			r.file(e.Path, op, false).checkpoint(Content{Known: true, Exists: true, Text: e.Content}, "the recorded content", op, r)
		}
	}
}

// update computes an Update hunk: its file's new content (at the move
// destination, if any) and, for a move, the source's removal.
func (r *Reconstructor) update(op *manifest.Op, h manifest.Hunk) []hunkResult {
	f := r.file(h.Target, op, true)
	res := hunkResult{path: h.Target, pinned: f.pinned, crlf: f.crlf, guess: f.guess}
	if h.MoveTarget != "" {
		res.path, res.moveFrom = h.MoveTarget, h.Target
	}
	switch {
	case !f.cur.Known:
		f.res.Reason = where(op) + ": updated by the agent, but its content before the update is unknown"
		res.pinned = false
	case !f.cur.Exists && f.res.Ops == 0:
		f.res.Reason = where(op) + ": updated by the agent, but the host has no copy to start from " +
			"(--base DIR can point at the files as they were when the session started)"
		res.pinned = false
	case !f.cur.Exists:
		f.res.Reason = fmt.Sprintf("%s: updated by the agent, but the replay has no file %s", where(op), h.Target)
		res.pinned = false
	default:
		mode := Strict
		if f.faithful() {
			mode = Faithful
		}
		text, fuzz, err := ApplyChunks(f.cur.Text, h.Target, h.Chunks, mode)
		if err != nil && len(r.failed[r.key(h.Target)]) > 0 {
			text, fuzz, err = r.afterFailed(f, op, h, mode, err)
		}
		if err != nil && !f.pinned && alreadyApplied(f.cur.Text, h) {
			// The host copy already holds the change (recovered before, or
			// made by hand): it is the result, as patch(1) would say.
			text, err = f.cur.Text, nil
			f.res.Notes = append(f.res.Notes, where(op)+": the host copy already has this change")
		}
		if err != nil {
			f.res.Reason = fmt.Sprintf("%s: a hunk would not apply: %v", where(op), err)
			if f.pinned {
				f.res.Drift = append(f.res.Drift, f.res.Reason)
			}
			res.pinned = false
			break
		}
		res.content = Content{Known: true, Exists: true, Text: text}
		if fuzz > 0 && mode == Strict {
			f.res.Fuzz = append(f.res.Fuzz, fmt.Sprintf("%s: %d chunk(s) matched ignoring whitespace or punctuation", where(op), fuzz))
		}
	}
	out := []hunkResult{res}
	if h.MoveTarget != "" && h.MoveTarget != h.Target {
		out = append(out, hunkResult{path: h.Target, pinned: true, content: Content{Known: true}})
	}
	return out
}

// alreadyApplied reports whether an Update hunk's change is already in
// text: its reverse applies strictly, and the forward change does not.
func alreadyApplied(text string, h manifest.Hunk) bool {
	rev := make([]manifest.Chunk, len(h.Chunks))
	for i, c := range h.Chunks {
		rev[i] = manifest.Chunk{Context: c.Context, OldLines: c.NewLines, NewLines: c.OldLines, EOF: c.EOF}
		if len(c.NewLines) == 0 {
			return false // a pure deletion leaves nothing to find
		}
	}
	_, _, err := ApplyChunks(text, h.Target, rev, Strict)
	return err == nil
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// checkDiff checks a recorded unified diff (patch_apply_end) against the
// replayed content before the call: its context and removed lines must be
// where it says.
func (r *Reconstructor) checkDiff(e manifest.Evidence, op *manifest.Op) {
	r.diffSide(e, op, 1, '-', "")
}

// checkDiffAfter checks a recorded diff's context and added lines (at
// their lines in the new file) against the content after the operation:
// a replay that made something else drifts, and is never exact.
func (r *Reconstructor) checkDiffAfter(e manifest.Evidence, op *manifest.Op) {
	r.diffSide(e, op, 3, '+', " after it")
}

// diffSide checks one side of a recorded diff against the file's replayed
// content: the context lines and those marked mark, at the line numbers of
// the hunk header's group (1 the old side, 3 the new). The first line that
// disagrees is drift.
func (r *Reconstructor) diffSide(e manifest.Evidence, op *manifest.Op, group int, mark byte, when string) {
	f, ok := r.files[r.key(e.Path)]
	if !ok || !f.cur.Known || !f.cur.Exists {
		return
	}
	lines := strings.Split(strings.ReplaceAll(f.cur.Text, "\r\n", "\n"), "\n")
	at := -1
	for _, l := range strings.Split(e.Content, "\n") {
		if m := hunkHeader.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[group])
			at = n - 1
			if m[group+1] == "0" {
				at = n
			}
			continue
		}
		if at < 0 || l == "" || strings.HasPrefix(l, `\`) {
			continue
		}
		if l[0] == ' ' || l[0] == mark {
			if at >= len(lines) || lines[at] != l[1:] {
				f.res.Drift = append(f.res.Drift, fmt.Sprintf("%s: the recorded diff expects line %d%s to be %q, the replay has %q", where(op), at+1, when, l[1:], lineAt(lines, at)))
				return
			}
			at++
		}
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end of file>"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// keepFailed remembers the Update hunks of a patch that reported failure,
// on the files it names: a later patch may show that it was applied all
// the same.
func (r *Reconstructor) keepFailed(op *manifest.Op) {
	for _, h := range op.Patch.Hunks {
		if h.Kind != manifest.HunkUpdate || h.MoveTarget != "" {
			continue
		}
		if r.failed == nil {
			r.failed = map[string][]failedHunk{}
		}
		k := r.key(h.Target)
		r.failed[k] = append(r.failed[k], failedHunk{op: op, h: h})
	}
}

// afterFailed retries an Update hunk that does not fit the replay, on the
// replay with the hunks of the file's failed patches applied first, the
// latest first, then all of them in order. When it fits only so, the
// failed patch was applied after all: its content is taken, with drift
// saying so, and the file is stale, since only the later patch's context
// confirms it. Otherwise the first error stands.
func (r *Reconstructor) afterFailed(f *fstate, op *manifest.Op, h manifest.Hunk, mode MatchMode, first error) (string, int, error) {
	failed := r.failed[r.key(h.Target)]
	tries := [][]failedHunk{failed[len(failed)-1:]}
	if len(failed) > 1 {
		tries = append(tries, failed)
	}
	for _, try := range tries {
		text := f.cur.Text
		ok := true
		for _, fh := range try {
			out, _, err := ApplyChunks(text, fh.h.Target, fh.h.Chunks, Strict)
			if err != nil {
				ok = false
				break
			}
			text = out
		}
		if !ok {
			continue
		}
		out, fuzz, err := ApplyChunks(text, h.Target, h.Chunks, mode)
		if err != nil {
			continue
		}
		var from []string
		for _, fh := range try {
			from = append(from, where(fh.op))
		}
		msg := fmt.Sprintf("%s: this patch fits only after the patch at %s, which reported failure: it was applied all the same (Codex can report a written patch as failed)", where(op), strings.Join(from, ", "))
		f.res.Drift = append(f.res.Drift, msg)
		r.stats.Mismatches++
		if f.stale == "" {
			f.stale = msg + "; only this patch's context confirms its content"
		}
		f.remember()
		f.cur.Text = text
		f.remember()
		delete(r.failed, r.key(h.Target))
		return out, fuzz, nil
	}
	return "", 0, first
}
