package manifest

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Agent names the coding agent that wrote a transcript.
type Agent string

// Agents known to sandbox.
const (
	AgentCodex    Agent = "codex"
	AgentClaude   Agent = "claude"
	AgentGemini   Agent = "gemini"
	AgentOpencode Agent = "opencode"
	AgentPi       Agent = "pi"
)

// OpKind says what a file operation does.
type OpKind string

// Operation kinds. Shell is a write the tool cannot replay (a redirection, sed -i, rm,
// a command that was not intercepted as apply_patch): it is reported, never replayed.
const (
	KindWrite    OpKind = "write"
	KindEdit     OpKind = "edit"
	KindPatch    OpKind = "patch"
	KindNotebook OpKind = "notebook"
	KindShell    OpKind = "shell"
	// KindObserve is not a change: the transcript shows the file's content
	// at this point (a full Read, a file-history backup). It is evidence only.
	KindObserve OpKind = "observe"
)

// Outcome says whether the agent's tool call took effect.
type Outcome string

// Outcomes. Only applied operations are replayed.
const (
	OutcomeApplied  Outcome = "applied"
	OutcomeFailed   Outcome = "failed"
	OutcomeRejected Outcome = "rejected"
	OutcomeUnknown  Outcome = "unknown"
)

// EndState says how a session ended, as far as its transcript tells.
type EndState string

// End states.
const (
	EndClean     EndState = "clean"        // the last turn completed
	EndTruncated EndState = "truncated"    // the file ends in a cut-off line
	EndInTool    EndState = "died-in-tool" // a tool call never got its output
	EndOpen      EndState = "open"         // a turn started and never finished
	EndAborted   EndState = "aborted"      // the last turn was aborted (Codex's turn_aborted)
	EndUnknown   EndState = "unknown"
)

// TruncatedLastLine starts the message of a Warning about a transcript cut
// off mid-record: the readers write it, and the parsers and inspect tell a
// cut-off session by it (Truncated).
const TruncatedLastLine = "truncated last line"

// Truncated reports whether w says the transcript was cut off mid-record.
func (w Warning) Truncated() bool { return strings.HasPrefix(w.Message, TruncatedLastLine) }

// Warning is a problem found in a transcript that did not stop parsing: a
// line that is not JSON, a truncated last line, NUL padding, a patch that does
// not parse. File and Line locate it (Line is 1-based); Offset is the byte
// offset of the line's start.
type Warning struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Offset  int64  `json:"offset"`
	Message string `json:"message"`
	// Names are the files a line that could not be read mentions (found by
	// a search of its bytes, not a parse): the files whose changes it may
	// have held, so that recovery can grade them down.
	Names []string `json:"names,omitempty"`
	// Unnamed marks such a line that holds a call which may have changed
	// files it does not name: a call to a tool that writes, cut before or
	// inside its path, command or patch header. What it changed cannot
	// be listed, so a recovery that reads it is partial.
	Unnamed bool `json:"unnamed,omitempty"`
}

// String formats the warning as file:line: message.
func (w Warning) String() string {
	return w.File + ":" + strconv.Itoa(w.Line) + ": " + w.Message
}

// Session is one agent session as recorded in one transcript file.
type Session struct {
	ID           string `json:"id"`
	Agent        Agent  `json:"agent"`
	AgentVersion string `json:"agent_version,omitempty"`
	Originator   string `json:"originator,omitempty"`
	Cwd          string `json:"cwd"`
	Transcript   string `json:"transcript"`
	// TranscriptSHA256 is the sha256 of the transcript file as read.
	TranscriptSHA256 string    `json:"transcript_sha256,omitempty"`
	Start            time.Time `json:"start"`
	End              time.Time `json:"end"`
	EndState         EndState  `json:"end_state"`
	GitCommit        string    `json:"git_commit,omitempty"`
	// GitBranch is the branch the session's checkout was on (Codex's
	// session_meta git.branch, Claude Code's gitBranch).
	GitBranch  string    `json:"git_branch,omitempty"`
	ForkedFrom string    `json:"forked_from,omitempty"`
	Lines      int       `json:"lines"`
	Bytes      int64     `json:"bytes"`
	Warnings   []Warning `json:"warnings,omitempty"`
	// Model and Tokens are the model(s) and token totals the transcript
	// reports; only a timeline read (inspect) fills them.
	Model  string  `json:"model,omitempty"`
	Tokens *Tokens `json:"tokens,omitempty"`
}

// Provenance locates the tool call an operation came from.
type Provenance struct {
	Transcript string    `json:"transcript"`
	Line       int       `json:"line"`
	Offset     int64     `json:"offset"`
	Time       time.Time `json:"time"`
	CallID     string    `json:"call_id,omitempty"`
	TurnID     string    `json:"turn_id,omitempty"`
	// Carrier names how the operation was carried: "custom_tool_call",
	// "function_call", "shell_argv", "shell_heredoc", "exec_command",
	// "local_shell_call", "code_mode", "apply_patch_call", or one of the
	// carriers below that say whose edit rules replay it (see Rule).
	Carrier string `json:"carrier"`
}

// The carriers of agents whose edits replay with rules of their own: the
// parsers write them, Rule reads them.
const (
	CarrierGemini   = "gemini_tool_call"
	CarrierPi       = "pi_tool_call"
	CarrierOpencode = "opencode"
	CarrierQwen     = "qwen_tool_call"
	CarrierGoose    = "goose_tool"
)

// EditRule is whose rules replay an operation's edits: how old text is
// found and replaced.
type EditRule int

// Edit rules. RuleExact is Claude Code's exact-string replacement (and
// Codex's patches, which carry their own format).
const (
	RuleExact    EditRule = iota
	RuleGemini            // Gemini CLI's replace: exact, then its flexible and regex matches
	RulePi                // pi's edit: exact, then whitespace- and Unicode-tolerant
	RuleOpencode          // opencode's chain of replacers
	RuleQwen              // Qwen Code's edit: exact, then Unicode- and trailing-whitespace-tolerant lines
	RuleGoose             // Goose's text editor: str_replace, insert and undo_edit, newline ensured
)

// Rule is the edit rule of the operation, from its carrier: the one place a
// carrier decides how an operation replays.
func (p Provenance) Rule() EditRule {
	switch p.Carrier {
	case CarrierGemini:
		return RuleGemini
	case CarrierPi:
		return RulePi
	case CarrierOpencode:
		return RuleOpencode
	case CarrierQwen:
		return RuleQwen
	case CarrierGoose:
		return RuleGoose
	}
	return RuleExact
}

// EvidenceKind says what a piece of content evidence pins.
type EvidenceKind string

// Evidence kinds: a pre-image is the exact content before the operation, a
// post-image the exact content after it, a diff a unified diff of the change.
const (
	EvidencePre  EvidenceKind = "pre"
	EvidencePost EvidenceKind = "post"
	EvidenceDiff EvidenceKind = "diff"
	// EvidenceDeleted records that the tool reported the file as deleted.
	EvidenceDeleted EvidenceKind = "deleted"
	// EvidenceAppend is content known to have been appended to the file.
	EvidenceAppend EvidenceKind = "append"
	// EvidenceBase is the file's content before the session first changed it
	// (a Claude Code file-history v1 backup); with Absent, the file did not
	// exist then.
	EvidenceBase EvidenceKind = "base"
	// EvidencePartial is a part of the file as it was at the operation:
	// Content holds its lines from StartLine (1-based), joined by "\n", of
	// a file of TotalLines lines (a partial Claude Code Read). It pins
	// nothing; lines that disagree with the replay are drift.
	EvidencePartial EvidenceKind = "partial"
)

// Evidence is content the transcript holds about one file at one operation,
// for example the content of a Codex Add (post-image), a Codex delete's
// content (pre-image) or the unified diff of a patch_apply_end update.
type Evidence struct {
	Path    string       `json:"path"`
	Kind    EvidenceKind `json:"kind"`
	Content string       `json:"content,omitempty"`
	// MovePath is the destination for a diff that also moved the file.
	MovePath string `json:"move_path,omitempty"`
	// Absent says the evidence is that the file did not exist.
	Absent bool `json:"absent,omitempty"`
	// LFNormalized says the content had CRLF turned into LF by the agent
	// (Claude Code's originalFile), so a CRLF file compares equal.
	LFNormalized bool `json:"lf_normalized,omitempty"`
	// NoFinalNewline says the content may lack the file's final newline
	// (a full Read in some Claude Code versions).
	NoFinalNewline bool `json:"no_final_newline,omitempty"`
	// StartLine and TotalLines place partial evidence in its file: the
	// first line it holds (from 1), and how many lines the file had, as
	// the text split at each "\n" counts them (a final newline ends in an
	// empty last line).
	StartLine  int `json:"start_line,omitempty"`
	TotalLines int `json:"total_lines,omitempty"`
	// Source says where the evidence came from, e.g. "patch_apply_end".
	Source string `json:"source"`
}

// Op is one file-changing tool call.
type Op struct {
	// Session is the id of the session the operation belongs to.
	Session string `json:"session"`
	// Seq is the operation's position within its session, from 0.
	Seq  int    `json:"seq"`
	Kind OpKind `json:"kind"`
	// Tool is the tool's own name (apply_patch, shell, exec_command, Write, ...).
	Tool string `json:"tool"`
	// Cwd is the effective working directory of the call.
	Cwd string `json:"cwd"`
	// Paths are the target paths resolved against Cwd, in the order the
	// operation names them (for a patch, one per hunk and move destination).
	Paths []string `json:"paths,omitempty"`
	// Patch holds the parsed apply_patch hunks (Kind == KindPatch).
	Patch *Patch `json:"patch,omitempty"`
	// PatchText is the raw patch as the agent sent it.
	PatchText string `json:"patch_text,omitempty"`
	// Command is the shell command (Kind == KindShell).
	Command string `json:"command,omitempty"`
	// Effects are what the shell command does to files, in the order it
	// does it (Kind == KindShell), as read by a real shell parser: deletes,
	// moves and copies of literal paths and exact heredoc content are
	// replayed; any other write makes the file stale.
	Effects []ShellEffect `json:"effects,omitempty"`
	// Content is the full content a Write wrote (Kind == KindWrite).
	Content *string `json:"content,omitempty"`
	// Edits are exact-string replacements applied in order, all or nothing
	// (Kind == KindEdit: Claude Code Edit and MultiEdit).
	Edits []Edit `json:"edits,omitempty"`
	// Notebook is a notebook cell operation (Kind == KindNotebook).
	Notebook *NotebookCell `json:"notebook,omitempty"`
	// Identity is the same for every copy of one call across transcripts
	// (resumed, forked or mirrored sessions), so the call is replayed once.
	Identity string `json:"identity,omitempty"`
	// Note explains a shell op or a parse problem in words.
	Note string `json:"note,omitempty"`
	// LowConfidence marks an operation recovered heuristically (code-mode
	// script text without a patch_apply_end).
	LowConfidence bool    `json:"low_confidence,omitempty"`
	Outcome       Outcome `json:"outcome"`
	// OutcomeEvidence says what decided the outcome, e.g.
	// "patch_apply_end success=true" or "output: Exit code: 1".
	OutcomeEvidence string     `json:"outcome_evidence"`
	Evidence        []Evidence `json:"evidence,omitempty"`
	Provenance      Provenance `json:"provenance"`
}

// ShellEffectKind says what a shell command does to a path.
type ShellEffectKind string

// Shell effect kinds.
const (
	ShellDelete ShellEffectKind = "delete" // rm, unlink, git rm: the paths are gone
	ShellMove   ShellEffectKind = "move"   // mv, git mv: Paths = [source, destination]
	ShellCopy   ShellEffectKind = "copy"   // cp: Paths = [source, destination]
	ShellCreate ShellEffectKind = "create" // cat <<'EOF' > f: Content is the whole file
	ShellAppend ShellEffectKind = "append" // cat <<'EOF' >> f: Content is appended
	ShellTouch  ShellEffectKind = "touch"  // touch: an empty file where there was none
	ShellWrite  ShellEffectKind = "write"  // any other change: not replayable
	// ShellRun runs a script file: Paths = [the script, the directory it
	// runs in, its literal operands…]; Verb is what reads it (sh, bash,
	// source, python3, node, …, exec when it runs by its path). The replay
	// reads the script's content, when it knows it, for what it changes.
	ShellRun ShellEffectKind = "run"
	// ShellTask runs a task of a project file (make TARGET, mise run TASK,
	// npm run X, just R, task X) or a linter whose project configuration
	// says whether it fixes files (golangci-lint run): Paths = [the
	// directory it runs in]; Verb names the program (make, mise, npm, pnpm,
	// yarn, just, task, golangci-lint) and Args are the words after it, as
	// written. The replay reads the task's definition (or the linter's
	// configuration), from the transcript or the host, for what it changes.
	ShellTask ShellEffectKind = "task"
)

// ShellEffect is one thing a shell command does to files. Paths are
// resolved against the command's effective working directory.
type ShellEffect struct {
	Kind ShellEffectKind `json:"kind"`
	// Verb says what did it, e.g. "rm -r", "sed -i", "redirect".
	Verb  string   `json:"verb"`
	Paths []string `json:"paths,omitempty"`
	// Recursive: the path may be a directory, and everything under it is
	// affected (rm -r, cp -r).
	Recursive bool `json:"recursive,omitempty"`
	// IntoDir: the destination of a move or copy is a directory.
	IntoDir bool `json:"into_dir,omitempty"`
	// Content is the exact content of a create or append.
	Content *string `json:"content,omitempty"`
	// Cond: the effect runs only under a condition the transcript does not
	// settle (after ||, in an if), so it may not have happened.
	Cond bool `json:"cond,omitempty"`
	// Patterns name files by a shell glob (src/*.go: * and ? within one
	// path component, never a leading dot; a backslash makes the next byte
	// stand for itself), Specs by a pattern the command expands itself (a
	// git pathspec, a prettier glob: * matches a slash too). The effect
	// applied to every file that matched when it ran, which may be more than
	// the transcript knows. A move or copy of a pattern has Paths = [the
	// destination directory].
	Patterns []string `json:"patterns,omitempty"`
	Specs    []string `json:"specs,omitempty"`
	// Bound: the command changed files it chose when it ran (find -delete,
	// git clean, git reset --hard, git stash, git checkout BRANCH, git
	// merge …), all at or under what Specs name. None can be replayed:
	// every file the replay knows there is stale. Verb tells them apart; a
	// "git stash" and the "git stash pop" or "git stash apply" after it,
	// with nothing between them touching those files, changed nothing.
	Bound bool `json:"bound,omitempty"`
	// Args are the words after the program's name of a task effect.
	Args []string `json:"args,omitempty"`
}

// Edit is one exact-string replacement.
type Edit struct {
	Old        string `json:"old_string"`
	New        string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
	// Expected is the number of occurrences the agent required (Gemini
	// CLI's expected_replacements): any other count made the call fail.
	Expected int `json:"expected_replacements,omitempty"`
	// InsertLine, when set, makes the edit an insertion of New after that
	// line instead of a replacement (Goose's text_editor insert: 0 is the
	// top, a negative line counts from the end, -1 the end); Old is empty.
	InsertLine *int `json:"insert_line,omitempty"`
}

// NotebookCell is a Jupyter notebook cell operation (Claude Code
// NotebookEdit): replace, insert (after CellID, or first) or delete.
type NotebookCell struct {
	CellID    string `json:"cell_id,omitempty"`
	NewSource string `json:"new_source"`
	CellType  string `json:"cell_type,omitempty"`
	EditMode  string `json:"edit_mode,omitempty"`
}

// Patch is a parsed apply_patch envelope: hunks in patch order.
type Patch struct {
	Hunks []Hunk `json:"hunks"`
}

// HunkKind says what a hunk of a patch does to its file.
type HunkKind string

// Hunk kinds.
const (
	HunkAdd    HunkKind = "add"
	HunkDelete HunkKind = "delete"
	HunkUpdate HunkKind = "update"
)

// Hunk is one file section of an apply_patch envelope. Path and MovePath are
// as written in the patch; resolution against the cwd happens elsewhere.
type Hunk struct {
	Kind     HunkKind `json:"kind"`
	Path     string   `json:"path"`
	MovePath string   `json:"move_path,omitempty"`
	// Target and MoveTarget are Path and MovePath resolved against the
	// operation's cwd: the files the hunk really touches.
	Target     string `json:"target,omitempty"`
	MoveTarget string `json:"move_target,omitempty"`
	// Contents is the full content of an Add (always ending in a newline).
	Contents string  `json:"contents,omitempty"`
	Chunks   []Chunk `json:"chunks,omitempty"`
	// Line is the 1-based line of the hunk header within the patch text.
	Line int `json:"line"`
}

// Chunk is one change within an Update hunk, located by context rather than
// line numbers.
type Chunk struct {
	Context  *string  `json:"context,omitempty"`
	OldLines []string `json:"old_lines"`
	NewLines []string `json:"new_lines"`
	EOF      bool     `json:"eof,omitempty"`
}

// EventKind says what a timeline event is.
type EventKind string

// Event kinds.
const (
	EventTurn    EventKind = "turn"    // the user (or the harness) spoke
	EventCall    EventKind = "call"    // a tool call, with its outcome
	EventAborted EventKind = "aborted" // a turn was aborted or interrupted
	EventMessage EventKind = "message" // the agent said something (its text, cut short)
	EventCompact EventKind = "compact" // the conversation was compacted (summarised) to fit the context
)

// Todo is one item of a plan an agent kept (Claude Code TodoWrite, Codex
// update_plan).
type Todo struct {
	Text   string `json:"text"`
	Status string `json:"status"`
}

// Tokens are a session's token totals as its transcript reports them.
type Tokens struct {
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning,omitempty"`
}

// Event is one step of a session's timeline, for post-incident analysis.
type Event struct {
	Kind EventKind `json:"kind"`
	Time time.Time `json:"time"`
	Line int       `json:"line"`
	// Tool, Target and CallID describe a call; Text a turn's prompt (cut
	// short) or why a turn was aborted.
	Tool    string  `json:"tool,omitempty"`
	Target  string  `json:"target,omitempty"`
	CallID  string  `json:"call_id,omitempty"`
	Outcome Outcome `json:"outcome,omitempty"`
	// Detail is the error or output line that decided the outcome.
	Detail string `json:"detail,omitempty"`
	Text   string `json:"text,omitempty"`
	// Ended is when the call's result came (zero: it never did).
	Ended     time.Time `json:"ended,omitzero"`
	Sidechain bool      `json:"sidechain,omitempty"`
	// Agent names the subagent a sidechain event belongs to (its agent id,
	// or the first message of its chain when the transcript names none).
	Agent string `json:"agent,omitempty"`
	// Subagent names the subagent a call (Claude Code's Task) started.
	Subagent string `json:"subagent,omitempty"`
	// Output is the start of the call's output, cut short (OutputCut).
	Output    string `json:"output,omitempty"`
	OutputCut bool   `json:"output_cut,omitempty"`
	// Todos is the plan a TodoWrite or update_plan call set.
	Todos []Todo `json:"todos,omitempty"`
}

// OutputMax is how much of a call's output (or of the agent's text) a
// timeline event keeps.
const OutputMax = 2000

// CutText returns s cut to about n bytes, and whether it was cut. A cut
// keeps the first third and the last two thirds, on character boundaries,
// with a line "…" between: the end of an output (a failing test's summary,
// an error) matters as much as its start. Invalid UTF-8 is replaced, so the
// result is always valid text.
func CutText(s string, n int) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return strings.ToValidUTF8(s, "\uFFFD"), false
	}
	h := n / 3
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - (n - n/3)
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return strings.ToValidUTF8(s[:h], "\uFFFD") + "\n…\n" + strings.ToValidUTF8(s[t:], "\uFFFD"), true
}

// AddModel returns list (models joined by ", ") with m added once.
func AddModel(list, m string) string {
	if m == "" || m == "<synthetic>" {
		return list
	}
	for _, x := range strings.Split(list, ", ") {
		if x == m {
			return list
		}
	}
	if list == "" {
		return m
	}
	return list + ", " + m
}

// Own makes op's strings its own: a parser reading a line through a copy
// of it (gjson) gets strings that are slices of that copy, and whatever
// keeps one (reconstruction keeps a file's path and content to the end)
// would keep the whole line with it. The parsed patch is left alone: it is
// parsed from PatchText, which Own copies.
func (op *Op) Own() { op.OwnBorrowed(nil) }

// OwnBorrowed is Own for a parser that reads its line in place and keeps
// nothing else it did not allocate or copy itself: only the strings
// borrowed says are the line's are copied. The others (a file's content
// unescaped from the line, a field the parser cloned when it kept it) are
// the operation's already, and a second copy of every content cost a
// Claude Code parse a third of what it allocated. A nil borrowed copies
// every string, as Own. Which memory a string lies in is the reader's to
// tell (jsonl.Within): this package holds no pointer arithmetic.
func (op *Op) OwnBorrowed(borrowed func(string) bool) {
	c := strings.Clone
	if borrowed != nil {
		c = func(s string) string {
			if borrowed(s) {
				return strings.Clone(s)
			}
			return s
		}
	}
	op.Session, op.Tool, op.Cwd = c(op.Session), c(op.Tool), c(op.Cwd)
	op.Paths = ownAll(op.Paths, c)
	op.PatchText, op.Command, op.Identity, op.Note = c(op.PatchText), c(op.Command), c(op.Identity), c(op.Note)
	op.OutcomeEvidence = c(op.OutcomeEvidence)
	op.Content = ownPtr(op.Content, c)
	op.Effects = slices.Clone(op.Effects)
	for i := range op.Effects {
		e := &op.Effects[i]
		e.Verb, e.Paths, e.Content = c(e.Verb), ownAll(e.Paths, c), ownPtr(e.Content, c)
	}
	op.Edits = slices.Clone(op.Edits)
	for i := range op.Edits {
		op.Edits[i].Old, op.Edits[i].New = c(op.Edits[i].Old), c(op.Edits[i].New)
	}
	if n := op.Notebook; n != nil {
		op.Notebook = &NotebookCell{CellID: c(n.CellID), NewSource: c(n.NewSource), CellType: c(n.CellType), EditMode: c(n.EditMode)}
	}
	op.Evidence = slices.Clone(op.Evidence)
	for i := range op.Evidence {
		e := &op.Evidence[i]
		e.Path, e.Content, e.MovePath, e.Source = c(e.Path), c(e.Content), c(e.MovePath), c(e.Source)
	}
	p := &op.Provenance
	p.Transcript, p.CallID, p.TurnID, p.Carrier = c(p.Transcript), c(p.CallID), c(p.TurnID), c(p.Carrier)
}

func ownAll(s []string, c func(string) string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = c(v)
	}
	return out
}

func ownPtr(s *string, c func(string) string) *string {
	if s == nil {
		return nil
	}
	v := c(*s)
	return &v
}
