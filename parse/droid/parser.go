package droid

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/applypatch"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/home"
	"github.com/agentsandbox/sandbox/parse/internal/hostpath"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// carrier is how Droid's operations are carried: a tool_use block. Its
// edits replay with the exact rule (manifest.RuleExact): Droid's own
// matching is not public, and an exact, unique match is the one a replay
// can stand behind.
const carrier = "droid_tool"

// call is a tool_use waiting for its tool_result.
type call struct {
	name, ts string
	input    []byte // the input object as written, copied
	inert    bool   // changes no file and shows none
	line     int
	offset   int64
}

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer
	sess  manifest.Session

	cwd     string
	started bool // a session_start was read
	// calls go on without their result when the user sends a new prompt;
	// a line written twice (streaming) names a call again, not a new one.
	calls emit.Calls[*call]
	// touched are the files the session's operations name so far.
	touched map[string]bool
	span    emit.Span
}

// stream reads a Droid session from r and hands each operation to h as
// soon as its call has its result. It returns the session.
func stream(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h, touched: map[string]bool{}}
	p.sess = manifest.Session{Agent: name, Transcript: file, ID: idFromPath(file)}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	err := rd.Each(ctx, p.record)
	rd.Fill(&p.sess)
	p.finish()
	return p.sess, err
}

var uuidIn = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// idFromPath is the session id the file's name gives (<id>.jsonl), until
// session_start says it.
func idFromPath(file string) string {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	if all := uuidIn.FindAllString(base, -1); len(all) > 0 {
		return strings.ToLower(all[len(all)-1])
	}
	for _, ext := range []string{".zst", ".gz", ".jsonl"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// record handles one line. Its fields are found without reading the values
// between them (session_start's title can hold a whole task prompt), and
// the results of calls that change nothing are left unread.
func (p *parser) record(rec jsonl.Record) {
	p.out.Line = rec.Data
	str := func(k string) string { b, _ := jsonl.String(rec.Field(k)); return string(b) }
	typ, _ := jsonl.String(rec.Field("type"))
	// The time is a view of the line (a record's field, read in place):
	// what keeps it clones it.
	tsb, _ := jsonl.String(rec.Field("timestamp"))
	ts := zerocopy.String(tsb)
	p.span.Add(ts)
	switch string(typ) {
	case "":
		p.warn(rec, "record has no \"type\"")
	case "session_start":
		if p.started {
			return // the session is the first one's (a resumed run appends)
		}
		p.started = true
		if id := str("id"); id != "" {
			p.sess.ID = strings.ToLower(id)
		}
		p.cwd = hostpath.Clean(str("cwd"))
		// A Worker (a subagent's session) names the session whose Task
		// started it.
		p.sess.ForkedFrom = strings.ToLower(str("callingSessionId"))
	case "message":
		p.message(rec, ts)
	}
	// Other records (session_event, todo_state, …) say nothing of files.
}

// message reads a message record: an assistant's tool calls, a user's
// tool results and prompts.
func (p *parser) message(rec jsonl.Record, ts string) {
	m := jsonl.Fields(rec.Field("message"))
	content := m.Raw("content")
	switch {
	case content == nil:
	case m.Is("role", "assistant"):
		for e := range jsonl.Each(content) {
			if e.Obj.Is("type", "tool_use") {
				p.use(rec, e.Obj, ts)
			}
		}
	case m.Is("role", "user"):
		// A prompt (text that is not only a system reminder) is a new
		// turn: the calls still waiting were left behind. It is read only
		// when something waits for it.
		wantText := p.calls.Running() || p.h.Event != nil
		var prompt strings.Builder
		if content[0] == '"' {
			if wantText {
				s, _ := jsonl.Text(content)
				prompt.WriteString(s)
			}
		} else {
			for e := range jsonl.Each(content) {
				switch {
				case e.Obj.Is("type", "tool_result"):
					p.result(rec, e.Obj, ts)
				case wantText && e.Obj.Is("type", "text"):
					s, _ := e.Obj.Str("text")
					prompt.WriteString(s)
				}
			}
		}
		text := prompt.String()
		if strings.Contains(text, "<system-reminder>") {
			text = reminder.ReplaceAllString(text, "")
		}
		if text = strings.TrimSpace(text); text == "" {
			return
		}
		p.calls.Interrupt(ts, nil)
		if p.h.Event != nil {
			t, _ := time.Parse(time.RFC3339Nano, ts)
			p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: t, Line: rec.Line, Text: emit.Excerpt(text, 200)})
		}
	}
}

// reminder is the text Droid injects into user messages, which is not the
// user's.
var reminder = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// use records a tool call; a call already read (the line written twice) is
// not a new one.
func (p *parser) use(rec jsonl.Record, b jsonl.Object, ts string) {
	id, _ := b.Str("id")
	if id == "" {
		p.warn(rec, "tool_use has no id: its result cannot be told")
		return
	}
	tool, _ := b.Str("name")
	c := &call{name: tool, line: rec.Line, offset: rec.Offset}
	if !p.calls.Start(id, c) {
		return
	}
	in := b.Raw("input")
	c.ts, c.inert = strings.Clone(ts), !writes(tool, in)
	if !c.inert || p.h.Event != nil {
		c.input = bytes.Clone(in) // only the timeline reads an inert call's
	}
}

// writes reports whether a call may change files, or show one whole: the
// file tools, a Read of a whole file, a shell command that writes.
func writes(tool string, input []byte) bool {
	switch tool {
	case "Create", "Write", "Edit", "MultiEdit", "ApplyPatch", "NotebookEdit":
		return true
	case "Read":
		o := jsonl.Fields(input)
		return o.Raw("offset") == nil && o.Raw("limit") == nil
	case "Execute":
		return shellcmd.Parse(jsonl.GetOf(input, "command").Str).Writes()
	}
	return false
}

// result settles a call with its tool_result block b.
func (p *parser) result(rec jsonl.Record, b jsonl.Object, ts string) {
	id, _ := b.Str("tool_use_id")
	c, ok := p.calls.Settle(id)
	if !ok {
		if id != "" && p.calls.Lost(id) {
			// Its call's line is lost (damaged, or cut from the file):
			// what the call did cannot be told.
			p.warn(rec, "the result of call %s is here but not its call (a line lost?): what the call did cannot be told", id)
		}
		return
	}
	// A Read shows a file to check the replay by only once the session has
	// changed it: before, the replay holds nothing of it to check.
	view := c.name == "Read" && !c.inert && p.touched[p.readPath(c)]
	if (c.inert || c.name == "Read" && !view) && p.h.Event == nil {
		return
	}
	text := resultText(b.Raw("content"))
	o, why := outcome(c, jsonl.Value(b.Raw("is_error")).Bool(), text)
	if p.h.Event != nil {
		t, _ := time.Parse(time.RFC3339Nano, c.ts)
		end, _ := time.Parse(time.RFC3339Nano, ts)
		out, cut := manifest.CutText(text, manifest.OutputMax)
		p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.input),
			CallID: id, Outcome: o, Detail: why, Ended: end, Output: out, OutputCut: cut})
	}
	if c.inert {
		return
	}
	if c.name == "Read" {
		if view {
			p.read(rec, id, c, o, text)
		}
		return
	}
	p.build(rec, id, c, o, why, text)
}

// resultText is a tool_result's content: a string, or text blocks joined.
func resultText(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		s, _ := jsonl.Text(raw)
		return s
	}
	var sb strings.Builder
	for e := range jsonl.Each(raw) {
		if e.Obj.Is("type", "text") {
			s, _ := e.Obj.Str("text")
			sb.WriteString(s)
		}
	}
	return sb.String()
}

var (
	// refused is how a result says the user (or a hook acting for them)
	// did not let the call run. Droid's own wording is not known: these
	// are the ways such a refusal is put, never a shell's "Permission
	// denied", which is a failure.
	refused = regexp.MustCompile(`(?i)\buser (has )?(denied|rejected|declined|refused)\b|\b(denied|rejected|declined|refused) by (the )?user\b|\bnot (approved|permitted|allowed) by (the )?user\b|\bPreToolUse hook\b|\bblocked by (a |the )?hook\b`)
	// exitCode is how a command's output may state its exit status
	// ("Exit code: 1", "exited with code 2", "exit status 1").
	exitCode = regexp.MustCompile(`(?i)\bexit(?:ed with)? (?:code|status)[: ]\s*(-?\d+)`)
)

// outcome reads a call's result: is_error is a failure (or a refusal, when
// its text says so); a command's stated exit code decides it; anything
// else is success.
func outcome(c *call, isErr bool, text string) (manifest.Outcome, string) {
	head := text
	if !isErr {
		head = emit.FirstLine(text) // a success's output may quote anything
	} else if len(head) > 2048 {
		head = head[:2048]
	}
	if mayRefuse(head) && refused.MatchString(head) {
		return manifest.OutcomeRejected, "tool_result: " + emit.FirstLine(text)
	}
	if isErr {
		return manifest.OutcomeFailed, "tool_result is_error: " + emit.FirstLine(text)
	}
	switch c.name {
	case "Execute":
		if code, ok := statedExit(text); ok {
			if n, _ := strconv.Atoi(code); n != 0 {
				return manifest.OutcomeFailed, "tool_result: exit code " + code
			}
			return manifest.OutcomeApplied, "tool_result: exit code 0"
		}
		if jsonl.GetOf(c.input, "fireAndForget").Bool() {
			// Started in the background: what it did, and when, is not
			// known.
			return manifest.OutcomeUnknown, "Execute fireAndForget: the command ran on in the background"
		}
	case "ApplyPatch":
		if r := patchResult(text); r.IsObject() {
			if s := r.Get("success"); s.Exists() && !s.Bool() {
				return manifest.OutcomeFailed, "tool_result success false: " + emit.FirstLine(r.Get("error").String())
			}
			var bad string
			r.Get("files").ForEach(func(_, f gjson.Result) bool {
				if e := f.Get("error"); e.Exists() && e.Type != gjson.Null && e.String() != "" {
					bad = f.Get("file_path").Str + ": " + emit.FirstLine(e.String())
				}
				return bad == ""
			})
			if bad != "" {
				// Some files of the patch failed: which of its changes
				// were made is not known.
				return manifest.OutcomeUnknown, "tool_result: a file of the patch failed: " + bad
			}
		}
	}
	return manifest.OutcomeApplied, "tool_result without error: " + emit.FirstLine(text)
}

// mayRefuse is a quick test that text may say a refusal: every one
// refused finds names the user or a hook.
func mayRefuse(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] | 0x20 {
		case 'u':
			if len(text)-i >= 4 && strings.EqualFold(text[i:i+4], "user") {
				return true
			}
		case 'h':
			if len(text)-i >= 4 && strings.EqualFold(text[i:i+4], "hook") {
				return true
			}
		}
	}
	return false
}

// statedExit finds the exit code a command's output states: in its first
// line, else the last one stated in its end.
func statedExit(text string) (string, bool) {
	if m := exitCode.FindStringSubmatch(emit.FirstLine(text)); m != nil {
		return m[1], true
	}
	tail := text[max(0, len(text)-512):]
	if all := exitCode.FindAllStringSubmatch(tail, -1); len(all) > 0 {
		return all[len(all)-1][1], true
	}
	return "", false
}

// patchResult is ApplyPatch's result as the JSON document Droid's tool
// schema describes ({success, files[]}), when the text is one.
func patchResult(text string) gjson.Result {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") || !gjson.Valid(t) {
		return gjson.Result{}
	}
	return gjson.Parse(t)
}

// resolve makes a tool path absolute against the session's cwd.
func resolve(cwd, p string) string {
	if q, ok := home.Expand(cwd, p); ok && p != "" {
		return q
	}
	return hostpath.Join(cwd, p)
}

func (p *parser) newOp(c *call, id string, kind manifest.OpKind) manifest.Op {
	t, _ := time.Parse(time.RFC3339Nano, c.ts)
	return manifest.Op{Kind: kind, Tool: c.name, Cwd: p.cwd, Identity: "droid:" + id,
		Provenance: manifest.Provenance{Transcript: p.file, Line: c.line, Offset: c.offset, Time: t, CallID: id, Carrier: carrier}}
}

// build makes the operation of a settled call (or of one never settled,
// outcome unknown) and hands it on. text is the result's text.
func (p *parser) build(rec jsonl.Record, id string, c *call, o manifest.Outcome, why, text string) {
	in := jsonl.Fields(c.input)
	var op manifest.Op
	switch c.name {
	case "Create", "Write":
		fp, _ := in.Str("file_path")
		if fp == "" {
			p.warn(rec, "%s call %s names no file", c.name, id)
			return
		}
		target := resolve(p.cwd, fp)
		if content, ok := in.Str("content"); !ok {
			// The file was written, with what is not known.
			p.warn(rec, "%s call %s has no content: what it wrote to %s is not known", c.name, id, fp)
			op = p.unknownWrite(c, id, target, strings.ToLower(c.name)+" without content")
		} else {
			op = p.newOp(c, id, manifest.KindWrite)
			op.Content = &content
			op.Paths = []string{target}
		}
	case "Edit", "MultiEdit":
		fp, _ := in.Str("file_path")
		if fp == "" {
			p.warn(rec, "%s call %s names no file", c.name, id)
			return
		}
		target := resolve(p.cwd, fp)
		var edits []manifest.Edit
		var bad string
		if c.name == "Edit" {
			one, problem := edit(in)
			edits, bad = []manifest.Edit{one}, problem
		} else {
			list := in.Raw("edits")
			for e := range jsonl.Each(list) {
				one, problem := edit(e.Obj)
				if problem != "" {
					bad = problem
					break
				}
				edits = append(edits, one)
			}
			if bad == "" && len(edits) == 0 {
				bad = "no edits"
			}
		}
		if bad != "" {
			// The file may have changed (what Droid makes of such a call
			// is not known): how is not replayed.
			p.warn(rec, "%s call %s: %s", c.name, id, bad)
			op = p.unknownWrite(c, id, target, strings.ToLower(c.name)+" with "+bad)
			break
		}
		op = p.newOp(c, id, manifest.KindEdit)
		op.Edits = edits
		op.Paths = []string{target}
	case "ApplyPatch":
		if op = p.patch(rec, id, c, in, o, text); op.Kind == "" {
			return
		}
	case "Execute":
		cmd, _ := in.Str("command")
		sh := shellcmd.Parse(cmd)
		if !sh.Writes() {
			return
		}
		op = p.newOp(c, id, manifest.KindShell)
		op.Command = cmd
		shellcmd.Fill(&op, sh, p.cwd, resolve)
	case "NotebookEdit":
		// Droid's notebook edit is not known (its input is not in the
		// tool schema): the notebook changed, how is not replayed.
		fp, _ := in.Str("notebook_path")
		if fp == "" {
			fp, _ = in.Str("file_path")
		}
		if fp == "" {
			p.warn(rec, "%s call %s names no file", c.name, id)
			return
		}
		op = p.unknownWrite(c, id, resolve(p.cwd, fp), "notebook edit")
	default:
		return
	}
	op.Outcome, op.OutcomeEvidence = o, why
	for _, path := range op.Paths {
		p.touched[path] = true
	}
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

// edit reads one replacement, in Droid's spelling (old_str, new_str,
// change_all) or Claude Code's (old_string, new_string, replace_all); why
// says what makes it one the replay cannot make.
func edit(o jsonl.Object) (manifest.Edit, string) {
	old, ok := o.Str("old_str")
	if !ok {
		old, ok = o.Str("old_string")
	}
	if !ok {
		return manifest.Edit{}, "no old_str"
	}
	if old == "" {
		return manifest.Edit{}, "an empty old_str"
	}
	neu, ok := o.Str("new_str")
	if !ok {
		neu, ok = o.Str("new_string")
	}
	if !ok {
		return manifest.Edit{}, "no new_str"
	}
	all := o.Get("change_all")
	if !all.Exists() {
		all = o.Get("replace_all")
	}
	return manifest.Edit{Old: old, New: neu, ReplaceAll: all.Bool()}, ""
}

// unknownWrite is a change to target the replay cannot make: the file is
// graded stale.
func (p *parser) unknownWrite(c *call, id, target, what string) manifest.Op {
	op := p.newOp(c, id, manifest.KindShell)
	op.Note = what
	op.Effects = []manifest.ShellEffect{{Kind: manifest.ShellWrite, Verb: what, Paths: []string{target}}}
	op.Paths = []string{target}
	return op
}

// patch reads an ApplyPatch call: its patch text (input.patch, or
// input.input), and the content of each file its result may give.
func (p *parser) patch(rec jsonl.Record, id string, c *call, in jsonl.Object, o manifest.Outcome, text string) manifest.Op {
	body, ok := in.Str("patch")
	if !ok {
		body, _ = in.Str("input")
	}
	if body == "" && len(c.input) > 0 && c.input[0] == '"' {
		body, _ = jsonl.Text(c.input) // the patch itself as the input
	}
	if body == "" {
		p.warn(rec, "ApplyPatch call %s has no patch text", id)
		return manifest.Op{}
	}
	op := p.newOp(c, id, manifest.KindPatch)
	op.PatchText = body
	patch, err := applypatch.Parse(body)
	if err != nil {
		// The files its headers name are still the ones it may have
		// changed; a patch that names none changed nothing known.
		op.Note = "patch does not parse: " + err.Error()
		p.warn(rec, "ApplyPatch call %s: %s", id, op.Note)
		for _, n := range applypatch.HeaderPaths(body) {
			op.Paths = append(op.Paths, resolve(p.cwd, n))
		}
		if len(op.Paths) == 0 {
			return manifest.Op{}
		}
		return op
	}
	for i := range patch.Hunks {
		h := &patch.Hunks[i]
		h.Target = resolve(p.cwd, h.Path)
		op.Paths = append(op.Paths, h.Target)
		if h.MovePath != "" {
			h.MoveTarget = resolve(p.cwd, h.MovePath)
			op.Paths = append(op.Paths, h.MoveTarget)
		}
	}
	op.Patch = patch
	if o == manifest.OutcomeApplied {
		op.Evidence = p.patchEvidence(patch, text)
	}
	return op
}

// patchEvidence is the content a patch's result gives of each file it
// changed (files[].content), as the file's content after the call. What
// that content is has not been seen in a real transcript: it is taken
// only for a file the patch adds or updates (at its destination, when it
// moves) and when it holds every line the patch gives the file, so that a
// diff or an excerpt is never taken for the whole file.
func (p *parser) patchEvidence(patch *manifest.Patch, text string) []manifest.Evidence {
	r := patchResult(text)
	if !r.IsObject() {
		return nil
	}
	var out []manifest.Evidence
	r.Get("files").ForEach(func(_, f gjson.Result) bool {
		content := f.Get("content")
		fp := f.Get("file_path").Str
		if content.Type != gjson.String || fp == "" || f.Get("display_operation").Str == "delete" {
			return true
		}
		if m := f.Get("moved_to").Str; m != "" {
			fp = m
		}
		target := resolve(p.cwd, fp)
		for _, h := range patch.Hunks {
			dest := h.Target
			if h.MoveTarget != "" {
				dest = h.MoveTarget
			}
			if dest != target || h.Kind == manifest.HunkDelete || !holds(content.Str, h) {
				continue
			}
			out = append(out, manifest.Evidence{Path: target, Kind: manifest.EvidencePost, Content: content.Str, Source: "ApplyPatch result files[].content"})
			break
		}
		return true
	})
	return out
}

// holds reports whether content has every line hunk h writes: an added
// file's whole text, an update's new lines, each chunk's in order. An
// update that only removes lines gives nothing to check content by, and
// is not taken.
func holds(content string, h manifest.Hunk) bool {
	if h.Kind == manifest.HunkAdd {
		return strings.TrimSuffix(content, "\n") == strings.TrimSuffix(h.Contents, "\n")
	}
	at, checked := 0, false
	for _, ch := range h.Chunks {
		if len(ch.NewLines) == 0 {
			continue
		}
		k := strings.Index(content[at:], strings.Join(ch.NewLines, "\n"))
		if k < 0 {
			return false
		}
		at, checked = at+k, true
	}
	return checked
}

// read turns a Read of a whole file into a view of its lines. Droid's read
// output has not been seen: only a listing numbered from 1, every line in
// order with one separator, is taken, and only as partial evidence (lines
// from 1 that the replay is checked against): whether the listing was cut
// at some number of lines, or keeps the file's last newline, is not known,
// so it never pins the file. It is read only for a file the session has
// changed before (result): the replay checks nothing else by it.
func (p *parser) read(rec jsonl.Record, id string, c *call, o manifest.Outcome, text string) {
	fp := p.readPath(c)
	if o != manifest.OutcomeApplied || fp == "" {
		return
	}
	content, ok := unnumbered(text)
	if !ok {
		return
	}
	op := p.newOp(c, id, manifest.KindObserve)
	op.Paths = []string{fp}
	op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePartial, Content: content, StartLine: 1, Source: "Read of the whole file"}}
	op.Outcome, op.OutcomeEvidence = o, "tool_result of a whole-file Read"
	op.Provenance.Line, op.Provenance.Offset = rec.Line, rec.Offset
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

// readPath is the file a Read names, resolved, or "".
func (p *parser) readPath(c *call) string {
	in := jsonl.Fields(c.input)
	if fp, _ := in.Str("file_path"); fp != "" {
		return resolve(p.cwd, fp)
	}
	return ""
}

// unnumbered drops the numbers of a listing numbered from 1 in order, each
// number (right-aligned with spaces, or not) followed by the same
// separator, a tab or an arrow (as cat -n and Claude Code's Read write
// them); any other text is not a listing.
func unnumbered(text string) (string, bool) {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return "", false
	}
	var sb strings.Builder
	sb.Grow(len(text))
	sep := ""
	for want := 1; ; want++ {
		line, rest, more := strings.Cut(text, "\n")
		i := 0
		for i < len(line) && line[i] == ' ' {
			i++
		}
		n, digits := 0, i
		for ; i < len(line) && '0' <= line[i] && line[i] <= '9' && n <= want; i++ {
			n = n*10 + int(line[i]-'0')
		}
		if i == digits || n != want || line[digits] == '0' {
			return "", false
		}
		body := line[i:]
		if sep == "" {
			switch {
			case strings.HasPrefix(body, "\t"):
				sep = "\t"
			case strings.HasPrefix(body, "→"):
				sep = "→"
			default:
				return "", false
			}
		}
		body, ok := strings.CutPrefix(body, sep)
		if !ok {
			return "", false
		}
		if want > 1 {
			sb.WriteByte('\n')
		}
		sb.WriteString(body)
		if !more {
			return sb.String(), true
		}
		text = rest
	}
}

// headerSession is the header's session: its working directory and start
// are known by the time the first operation is settled.
func (p *parser) headerSession() manifest.Session {
	s := p.sess
	s.Cwd = p.cwd
	s.Start = p.span.Start()
	return s
}

func (p *parser) finish() {
	p.out.Line = nil // what is emitted now is from lines gone by, all owned
	for _, u := range p.calls.Unsettled() {
		id, c := u.ID, u.Call
		detail, why := "no tool_result: still running when the session ends", "no tool_result: the call never finished (interrupted or crashed)"
		if u.Interrupted {
			detail = "no tool_result: interrupted, the session went on without it"
			why = detail
		}
		if p.h.Event != nil {
			t, _ := time.Parse(time.RFC3339Nano, c.ts)
			ended, _ := time.Parse(time.RFC3339Nano, u.Stopped)
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.input),
				CallID: id, Outcome: manifest.OutcomeUnknown, Detail: detail, Ended: ended})
		}
		if !c.inert && c.name != "Read" {
			p.build(jsonl.Record{Line: c.line, Offset: c.offset}, id, c, manifest.OutcomeUnknown, why, "")
		}
	}
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.cwd
	s.Start = p.span.Start()
	s.End = p.span.End()
	s.EndState = emit.EndOf(s.Warnings, p.calls.Running(), false)
	p.out.Header(p.h, p.headerSession)
}

// target says briefly what a call works on, for the timeline.
func target(raw []byte) string {
	in := jsonl.Fields(raw)
	for _, k := range []string{"patch", "input"} {
		if v := in.Get(k); v.Type == gjson.String && v.Str != "" {
			if names := applypatch.HeaderPaths(v.Str); len(names) > 0 {
				return emit.Excerpt(strings.Join(names, ", "), 160)
			}
		}
	}
	for _, k := range []string{"file_path", "notebook_path", "command", "pattern", "patterns", "url", "description", "prompt"} {
		if v := in.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return emit.Excerpt(jsonl.Canonical(string(raw)), 120)
}
