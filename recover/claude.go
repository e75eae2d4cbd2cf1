package recover

import (
	"fmt"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// observe adopts a state the transcript shows without a change: a full
// Read, or a file-history backup. A base (v1 backup) only says how the file
// began, so it never counts as drift.
func (r *Reconstructor) observe(op *manifest.Op) {
	for _, e := range op.Evidence {
		switch e.Kind {
		case manifest.EvidenceBase:
			r.base1(e, op)
		case manifest.EvidencePost:
			f := r.file(e.Path, op, false)
			if e.NoFinalNewline && f.cur.Known && f.cur.Exists && (lf(f.cur.Text) == e.Content+"\n" || lf(f.cur.Text) == e.Content) {
				r.stats.Checks++
				continue // agrees, but for a final newline the observation may not show
			}
			r.againstStart(f, Content{Known: true, Exists: true, Text: e.Content}, op)
			f.checkpoint(Content{Known: true, Exists: true, Text: e.Content}, "the content the transcript shows", op, r)
		case manifest.EvidencePartial:
			r.partial(e, op)
		}
	}
}

// readLineMax is the length past which Claude Code's Read may shorten a
// line: a longer line the replay holds is matched by its start.
const readLineMax = 2000

// partial checks lines the agent saw (a partial Read) against the replay
// at their line numbers. Lines that agree confirm the replay; the first
// that disagrees is drift, and the file cannot be exact until evidence of
// the whole content pins it again: the lines around it are not known.
func (r *Reconstructor) partial(e manifest.Evidence, op *manifest.Op) {
	f, ok := r.files[r.key(e.Path)]
	if !ok || !f.cur.Known || e.StartLine < 1 {
		return // nothing replayed to check against (the host copy is read only when a change needs it)
	}
	r.stats.Checks++
	why := partialMismatch(f.cur, e)
	if why == nil {
		return
	}
	r.stats.Mismatches++
	msg := fmt.Sprintf("%s: the agent read %s, the replay has %s (changed outside the tools)", where(op), why[0], why[1])
	f.res.Drift = append(f.res.Drift, msg)
	if f.cur.Exists && sameShape(lf(f.cur.Text), e) {
		// The same number of lines: the lines read replace the replay's,
		// which is nearer the truth, if not the whole of it.
		f.remember()
		f.cur.Text = spliceLines(lf(f.cur.Text), e.StartLine, e.Content)
		f.remember()
	}
	if f.res.Ops > 0 && f.stale == "" {
		// A file the session changed: it cannot be exact (nor host-based)
		// while lines it does not show may differ too. A file only read
		// is not recovered at all.
		f.stale = msg + "; only the lines read are known since"
	}
}

// sameShape reports whether partial evidence places its lines in a file
// of text's shape: as many lines as it says the file has, or (a whole file
// printed with its trailing newlines trimmed: no count given, from line 1)
// as many as text has before its trailing newlines.
func sameShape(text string, e manifest.Evidence) bool {
	if e.TotalLines > 0 {
		return e.TotalLines == strings.Count(text, "\n")+1
	}
	return e.StartLine == 1 && strings.Count(e.Content, "\n") == strings.Count(strings.TrimRight(text, "\n"), "\n")
}

// spliceLines replaces text's lines from start (1-based) with those of
// part.
func spliceLines(text string, start int, part string) string {
	lines := strings.Split(text, "\n")
	read := strings.Split(part, "\n")
	for i, l := range read {
		if n := start - 1 + i; n < len(lines) && (len(l) < readLineMax || !strings.HasPrefix(lines[n], l)) {
			lines[n] = l
		}
	}
	return strings.Join(lines, "\n")
}

// partialMismatch compares partial evidence with a content and says how
// they first differ ("" when they agree): what the evidence holds, and
// what the content does.
func partialMismatch(c Content, e manifest.Evidence) []string {
	if !c.Exists {
		return []string{fmt.Sprintf("lines %d-%d of the file", e.StartLine, e.StartLine+strings.Count(e.Content, "\n")), "no such file"}
	}
	have := strings.Split(lf(c.Text), "\n")
	read := strings.Split(e.Content, "\n")
	for i, l := range read {
		n := e.StartLine + i
		if n > len(have) {
			return []string{fmt.Sprintf("line %d as %q", n, clip(l)), fmt.Sprintf("%d lines", len(have))}
		}
		h := have[n-1]
		if h == l || len(l) >= readLineMax && strings.HasPrefix(h, l) {
			continue
		}
		return []string{fmt.Sprintf("line %d as %q", n, clip(l)), fmt.Sprintf("%q", clip(h))}
	}
	if e.TotalLines > 0 && e.TotalLines != len(have) {
		return []string{fmt.Sprintf("a file of %d lines", e.TotalLines), fmt.Sprintf("%d lines", len(have))}
	}
	return nil
}

// clip shortens a line for a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// base1 takes a file's content before the session first changed it.
func (r *Reconstructor) base1(e manifest.Evidence, op *manifest.Op) {
	f := r.file(e.Path, op, false)
	if f.res.Ops > 0 || f.cur.Known {
		return
	}
	c := Content{Known: true, Exists: !e.Absent, Text: e.Content}
	r.againstStart(f, c, op)
	f.res.Start, f.res.Base = c, BaseTranscript
	if c.Exists && isCRLF(c.Text) {
		f.crlf, c.Text = true, lf(c.Text)
	}
	f.cur, f.pinned, f.guess = c, true, false
	f.remember()
}

// write replays a Claude Code Write: the whole content, as sent (current
// versions write LF whatever the file had).
func (r *Reconstructor) write(op *manifest.Op) {
	if op.Content == nil || len(op.Paths) == 0 {
		return
	}
	f := r.file(op.Paths[0], op, false)
	if !f.cur.Known {
		r.created(f)
	}
	r.writeWhole(f, *op.Content)
	unproven(f, op)
}

// writeWhole replaces a file's content with text written as sent.
func (r *Reconstructor) writeWhole(f *fstate, text string) {
	if f.res.Ops == 0 && !f.res.Start.Known && !f.cur.Known {
		f.res.Start, f.res.Base = Content{Known: true}, BaseTranscript
	}
	f.res.Ops++
	f.remember()
	f.cur, f.pinned, f.crlf, f.guess = Content{Known: true, Exists: true, Text: text}, true, false, false
	f.stale, f.unknown = "", ""
	f.inserted, f.insertedAt = nil, ""
	f.proven = r.at
	f.remember()
}

// edit replays Edit and MultiEdit with Claude Code's rules (formats/claude.md
// §3.2.3): literal replacement of the first (or every) occurrence, an
// empty old_string writing new_string whole, and a deletion eating the
// newline after old_string. MultiEdit is all or nothing.
func (r *Reconstructor) edit(op *manifest.Op) {
	if len(op.Paths) == 0 {
		return
	}
	creates := len(op.Edits) > 0 && op.Edits[0].Old == ""
	f := r.file(op.Paths[0], op, !creates)
	f.res.Ops++
	f.remember()
	text := f.cur.Text
	switch {
	case creates:
	case !f.cur.Known:
		f.cur, f.pinned = Content{}, false
		f.res.Reason = where(op) + ": edited by the agent, but its content before the edit is unknown (no evidence in the transcript, no host copy)"
		return
	case !f.cur.Exists:
		f.cur, f.pinned = Content{}, false
		f.res.Reason = where(op) + ": edited by the agent, but the host has no copy to start from " +
			"(--base DIR can point at the files as they were when the session started)"
		return
	}
	unconfirmed := !hasPreImage(op, op.Paths[0])
	for i, e := range op.Edits {
		if unconfirmed {
			switch editApplied(text, e) {
			case appliedYes:
				f.res.Notes = append(f.res.Notes, fmt.Sprintf("%s: edit %d of %d is already there (the file holds its new_string wherever it holds its old_string): not applied again", where(op), i+1, len(op.Edits)))
				continue
			case appliedBoth:
				f.res.Reason = fmt.Sprintf("%s: edit %d of %d may already be there (its new_string is) or not (its old_string is too, outside it): not guessed", where(op), i+1, len(op.Edits))
				f.cur, f.pinned = Content{}, false
				return
			}
		}
		out, err := applyEdit(text, e)
		if err == nil && unconfirmed && e.Old != "" && e.New != e.Old && strings.Contains(e.New, e.Old) {
			f.noteInserted(where(op), e.New)
		}
		if err != nil {
			f.res.Reason = fmt.Sprintf("%s: edit %d of %d would not apply: %v", where(op), i+1, len(op.Edits), err)
			if f.pinned {
				f.res.Drift = append(f.res.Drift, f.res.Reason)
			}
			f.cur, f.pinned = Content{}, false
			return
		}
		text = out
	}
	f.cur = Content{Known: true, Exists: true, Text: text}
	if creates {
		f.pinned = true
	}
	f.remember()
}

// hasPreImage reports whether an operation records the content of p
// before it (Claude Code's originalFile): the edit then applies to exactly
// what the agent saw.
func hasPreImage(op *manifest.Op, p string) bool {
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidencePre && e.Path == p {
			return true
		}
	}
	return false
}

// applied says whether an edit's change is already in a text.
type applied int

const (
	appliedNo   applied = iota
	appliedYes          // new_string is there, and old_string only inside it
	appliedBoth         // new_string is there, and old_string outside it too
)

// editApplied tells whether an exact-string edit whose result nothing
// records (a subagent's Edit seen without its toolUseResult, or replayed
// onto a host copy) is already in text: replaying "X" -> "X plus a new
// function" onto a copy that holds the new function writes it twice. It is
// there when text holds new_string and every old_string lies inside a
// new_string; when old_string is also found outside, both readings are
// possible. A deletion (empty new_string) leaves nothing to find, and an
// edit whose old_string is there while new_string is not has not been made.
func editApplied(text string, e manifest.Edit) applied {
	if e.Old == "" || e.New == "" || e.Old == e.New || !strings.Contains(text, e.New) {
		return appliedNo
	}
	if !strings.Contains(e.New, e.Old) {
		if strings.Contains(text, e.Old) {
			return appliedNo // old_string is still there to be replaced
		}
		return appliedYes
	}
	// old_string inside new_string: take every new_string out, and look
	// for old_string in what is left.
	rest := strings.ReplaceAll(text, e.New, "\x00")
	if strings.Contains(rest, e.Old) {
		return appliedBoth
	}
	return appliedYes
}

// maxInserted bounds the text insertedAgain keeps for one file.
const maxInserted = 1 << 20

// noteInserted keeps the text an unconfirmed insertion put in (see
// insertedAgain).
func (f *fstate) noteInserted(at, text string) {
	n := 0
	for _, t := range f.inserted {
		n += len(t)
	}
	if n+len(text) > maxInserted {
		return
	}
	if f.insertedAt == "" {
		f.insertedAt = at
	}
	f.inserted = append(f.inserted, text)
}

// insertedAgain says why a file is not to be guessed when an insertion
// whose result nothing records (a subagent's Edit) put in a block the
// file held before it: the final text holds a block of repeatBlock lines
// more often than the start did, at least twice, the start held it, and
// an insertion's text holds it. The host may well hold the session's work
// already, in a later form than the insertion's (its later edits made it
// so): replayed again it is written twice. Both readings are possible, and
// the file is left as it is rather than guessed ("" when none of this is
// so).
func (f *fstate) insertedAgain() string {
	if len(f.inserted) == 0 || !f.cur.Known || !f.cur.Exists || !f.res.Start.Known || !f.res.Start.Exists {
		return ""
	}
	before, after := lineBlocks(f.res.Start.Text), lineBlocks(f.cur.Text)
	lines := strings.SplitAfter(f.cur.Text, "\n")
	for i := 0; i+repeatBlock <= len(lines); i++ { // in the file's order: the same block named every time
		block := strings.Join(lines[i:i+repeatBlock], "")
		if n := after[block]; n < 2 || n <= before[block] || before[block] == 0 {
			continue
		}
		for _, t := range f.inserted {
			if strings.Contains(t, block) {
				return fmt.Sprintf("%s: an edit with no recorded result inserted a block the file already held (%q): the file held the session's work already, in a later form, or it did not; written again it would hold the block twice: not guessed", f.insertedAt, firstSaying(block))
			}
		}
	}
	return ""
}

// firstSaying is a block's first line that says something, trimmed.
func firstSaying(block string) string {
	for _, l := range strings.Split(block, "\n") {
		if says(l) {
			return strings.TrimSpace(l)
		}
	}
	return firstLine(block)
}

// says reports whether a line says something: three characters or more
// besides spaces and brackets.
func says(l string) bool {
	return len(strings.Trim(strings.TrimSpace(l), "{}()[];,")) >= 3
}

// repeatBlock is how many lines, at least three of them saying something
// (not blank, not a lone bracket), make a block for insertedAgain.
const repeatBlock = 6

// lineBlocks counts each run of repeatBlock lines of text that says
// something.
func lineBlocks(text string) map[string]int {
	lines := strings.SplitAfter(text, "\n")
	count := map[string]int{}
	for i := 0; i+repeatBlock <= len(lines); i++ {
		n := 0
		for _, l := range lines[i : i+repeatBlock] {
			if says(l) {
				n++
			}
		}
		if n >= 3 {
			count[strings.Join(lines[i:i+repeatBlock], "")]++
		}
	}
	return count
}

// applyEdit applies one Claude Code exact-string replacement to LF text.
// A replacement that is not unique (without ReplaceAll) is refused, as
// Claude Code refuses it.
func applyEdit(orig string, e manifest.Edit) (string, error) {
	if e.Old == "" {
		return e.New, nil
	}
	old := e.Old
	if e.New == "" && !strings.HasSuffix(old, "\n") && strings.Contains(orig, old+"\n") {
		old += "\n"
	}
	// The first occurrence, and whether there is another after it (where
	// strings.Count would count the next one): two searches where Count
	// and strings.Replace's own Count and search made four passes.
	i := strings.Index(orig, old)
	switch {
	case i < 0:
		return "", fmt.Errorf("old_string not found: %q", firstLine(e.Old))
	case e.ReplaceAll:
		return strings.ReplaceAll(orig, old, e.New), nil
	case strings.Contains(orig[i+len(old):], old):
		return "", fmt.Errorf("old_string occurs %d times and replace_all is false: refusing to pick one", strings.Count(orig, old))
	}
	return orig[:i] + e.New + orig[i+len(old):], nil
}

// notebook replays a NotebookEdit without a recorded updated_file by
// re-applying the cell operation to the notebook's JSON.
func (r *Reconstructor) notebook(op *manifest.Op) {
	if len(op.Paths) == 0 || op.Notebook == nil {
		return
	}
	for _, e := range op.Evidence {
		if e.Kind == manifest.EvidencePost {
			r.file(op.Paths[0], op, false).res.Ops++
			return // the recorded updated_file is adopted as a post-image
		}
	}
	f := r.file(op.Paths[0], op, true)
	f.res.Ops++
	if !f.cur.Known || !f.cur.Exists {
		f.cur, f.pinned = Content{}, false
		f.res.Reason = where(op) + ": notebook edited by the agent, but its content before the edit is unknown"
		return
	}
	out, err := editNotebook(f.cur.Text, *op.Notebook)
	if err != nil {
		f.res.Reason = fmt.Sprintf("%s: the notebook cell edit would not apply: %v", where(op), err)
		f.cur, f.pinned = Content{}, false
		return
	}
	f.remember()
	f.cur = Content{Known: true, Exists: true, Text: out}
	f.res.Notes = append(f.res.Notes, where(op)+": notebook cell edit re-applied (the transcript has no updated_file); JSON formatting may differ from Claude Code's")
	f.remember()
}
