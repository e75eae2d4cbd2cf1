package goose

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	sgdiff "github.com/sourcegraph/go-diff/diff"
	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/hostpath"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// call is a tool request the assistant made.
type call struct {
	id, name string // name as written (developer__text_editor, write…)
	tool     string // name without its extension's prefix
	cmd      string // text_editor's command
	args     []byte // the arguments object, copied (nil for a call that changes no file)
	target   string // what the call is about, for inspect
	inert    bool   // changes no file
	line     int
	offset   int64
	at       time.Time
}

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer
	sess  manifest.Session
	cwd   string

	records int
	// calls go on without their response when a new prompt comes.
	calls       emit.Calls[*call]
	first, last time.Time
	// undo is, by file, Goose's undo history of text_editor's changes:
	// true for one the replay does not replay as an edit (see history).
	undo map[string][]bool
}

// stream reads a Goose session from r and hands each operation to h once
// its response is read. It returns the session.
func stream(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h}
	p.sess = manifest.Session{Agent: name, Transcript: file, ID: idFromName(file)}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	err := rd.Each(ctx, p.record)
	rd.Fill(&p.sess)
	p.finish()
	return p.sess, err
}

// idFromName is the session id a transcript's name gives: what follows
// the '#' of a database's session (sessions.db#20251105_3), else the
// legacy file's name without its extension (the session's name, which
// Goose imports as the id).
func idFromName(file string) string {
	if i := strings.LastIndexByte(file, '#'); i >= 0 {
		return file[i+1:]
	}
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	for _, ext := range []string{".zst", ".gz", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "-" || base == "." || base == "/" {
		return ""
	}
	return base
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// span counts a time into the session's.
func (p *parser) span(t time.Time) {
	if t.IsZero() {
		return
	}
	if p.first.IsZero() || t.Before(p.first) {
		p.first = t
	}
	if t.After(p.last) {
		p.last = t
	}
}

// record handles one line: a legacy file's metadata line or a message; a
// database stream's session line, message or row that could not be read.
func (p *parser) record(rec jsonl.Record) {
	p.out.Line = rec.Data
	p.records++
	o := jsonl.Fields(rec.Data)
	if kind := o.Raw("goose"); kind != nil {
		switch jsonl.Value(kind).Str {
		case "session":
			if id := o.Get("id").Str; id != "" {
				p.sess.ID = strings.Clone(id)
			}
			if cwd := o.Get("cwd").Str; cwd != "" {
				p.cwd = hostpath.Clean(strings.Clone(cwd))
			}
			p.span(emit.UnixTime(o.Get("created").Int()))
			p.span(emit.UnixTime(o.Get("updated").Int()))
		case "message":
			if bad := o.Get("bad").Str; bad != "" {
				p.warn(rec, "message %d (%s) could not be read: %s", o.Get("row").Int(), o.Get("role").Str, bad)
				return
			}
			p.message(rec, &o)
		case "bad":
			p.warn(rec, "%s", o.Get("bad").Str)
		default:
			p.warn(rec, "record of an unknown kind %q", jsonl.Value(kind).Str)
		}
		return
	}
	if o.Raw("role") != nil {
		p.message(rec, &o)
		return
	}
	if p.records == 1 && (o.Raw("working_dir") != nil || o.Raw("message_count") != nil || o.Raw("description") != nil) {
		// A legacy file's metadata line.
		if cwd := o.Get("working_dir").Str; cwd != "" {
			p.cwd = hostpath.Clean(strings.Clone(cwd))
		}
		return
	}
	p.warn(rec, "record is not a Goose message (no \"role\")")
}

// message reads one message: the user's prompt, the assistant's tool
// requests, the responses to them (in the user message that follows).
func (p *parser) message(rec jsonl.Record, o *jsonl.Object) {
	at := emit.UnixTime(o.Get("created").Int())
	p.span(at)
	role := o.Get("role").Str
	content := o.Raw("content")
	if !rec.Escaped && p.h.Event == nil && (role != "user" || !p.calls.Running()) && !bytes.Contains(content, toolMark) {
		// No tool request or response, no call a prompt would leave
		// behind, nothing to tell inspect: the message's texts, often
		// long, are not read item by item.
		return
	}
	text, responses := false, false
	for e := range jsonl.Each(content) {
		switch e.Obj.Get("type").Str {
		case "toolRequest":
			p.request(rec, &e.Obj, at)
		case "toolResponse":
			responses = true
			p.response(rec, &e.Obj, at)
		case "text":
			text = true
		}
	}
	if role == "user" && text && !responses {
		// The user spoke: the calls still running were left behind.
		p.calls.Interrupt("a new prompt came before its response", nil)
		if p.h.Event != nil {
			if t := texts(content); t != "" {
				p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: at, Line: rec.Line, Text: emit.Excerpt(t, 200)})
			}
		}
	}
}

// toolMark is in every message that holds a tool request or response, as
// its type's value ("toolRequest", "toolResponse") spelled without escapes
// (a record with escapes is read item by item).
var toolMark = []byte(`"tool`)

// texts is the text of a message's text items.
func texts(content []byte) string {
	var out []string
	for e := range jsonl.Each(content) {
		if e.Obj.Is("type", "text") {
			s, _ := e.Obj.Str("text")
			out = append(out, s)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// request reads a toolRequest.
func (p *parser) request(rec jsonl.Record, item *jsonl.Object, at time.Time) {
	id := item.Get("id").Str
	if id == "" {
		return
	}
	tc := jsonl.Fields(item.Raw("toolCall"))
	if tc.Get("status").Str != "success" || tc.Raw("value") == nil {
		// The model's call did not parse: Goose never ran it.
		if p.h.Event != nil {
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: at, Line: rec.Line, Tool: "(unparsed)", CallID: strings.Clone(id),
				Outcome: manifest.OutcomeFailed, Detail: "never ran: toolCall error: " + emit.FirstLine(tc.Get("error").Str)})
		}
		return
	}
	val := jsonl.Fields(tc.Raw("value"))
	nm := val.Get("name").Str
	args := val.Raw("arguments")
	c := &call{line: rec.Line, offset: rec.Offset, at: at}
	if !p.calls.Start(id, c) {
		return // the same request written again
	}
	c.id, c.name = strings.Clone(id), strings.Clone(nm)
	c.tool = strings.TrimPrefix(c.name, "developer__")
	if c.tool == "text_editor" {
		c.cmd = strings.Clone(jsonl.GetOf(args, "command").Str)
	}
	c.inert = !writes(c.tool, args)
	if !c.inert {
		c.args = bytes.Clone(args)
	}
	if p.h.Event != nil {
		c.target = target(args)
	}
}

// writes reports whether a call may change a file, or shows one whole.
func writes(tool string, args []byte) bool {
	switch tool {
	case "text_editor":
		a := jsonl.Fields(args)
		switch a.Get("command").Str {
		case "write", "str_replace", "insert", "undo_edit":
			return true
		case "view":
			return a.Raw("view_range") == nil
		}
		return false
	case "write", "edit":
		return true
	case "shell":
		return shellcmd.Parse(jsonl.GetOf(args, "command").Str).Writes()
	}
	return false
}

// result is what a toolResponse says.
type result struct {
	o        manifest.Outcome
	why      string
	head     string // the first line of the first text item (for the outcome)
	userCopy string // a text item for the user's eyes starting "### " (a write's)
	resource string // an embedded resource's text (a view's)
	hasRes   bool
}

// response reads a toolResponse: the result of an earlier request.
func (p *parser) response(rec jsonl.Record, item *jsonl.Object, at time.Time) {
	id := item.Get("id").Str
	c, ok := p.calls.Settle(id)
	if !ok || c.inert && p.h.Event == nil {
		return
	}
	res := readResult(c, item.Raw("toolResult"))
	if p.h.Event != nil {
		p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: c.at, Line: c.line, Tool: c.name, Target: c.target,
			CallID: c.id, Outcome: res.o, Detail: res.why, Ended: at})
	}
	if !c.inert {
		p.build(c, res)
	}
}

// declined are the texts of a successful response that says the tool did
// not run because the user (or an inspector acting for them) refused it.
var declined = []string{
	"The user has declined to run this tool",
	"blocked by a safety inspector",
	"was blocked by the security inspector",
}

// readResult reads a toolResult (docs/formats/goose.md §Outcomes): an
// error, isError, a refusal, a skip in chat mode, else applied. A legacy
// result's value is the content array; a newer one's a CallToolResult.
func readResult(c *call, raw []byte) result {
	tr := jsonl.Fields(raw)
	switch tr.Get("status").Str {
	case "success":
	case "error":
		return result{o: manifest.OutcomeFailed, why: "toolResult error: " + emit.FirstLine(tr.Get("error").Str)}
	default:
		return result{o: manifest.OutcomeUnknown, why: "toolResponse without a toolResult status: what the call did is not known"}
	}
	val := tr.Raw("value")
	isError := false
	content := val
	if v := jsonl.SkipSpace(val, 0); v < len(val) && val[v] == '{' {
		vo := jsonl.Fields(val)
		content = vo.Raw("content")
		isError = vo.Get("isError").Bool()
	}
	var res result
	first := true
	refused, chat := false, false
	for e := range jsonl.Each(content) {
		switch e.Obj.Get("type").Str {
		case "text":
			raw := e.Obj.Raw("text")
			if first {
				// A result can be long (a command's output): only its first
				// line is read, and a short one searched for a refusal.
				first = false
				res.head = emit.FirstLineRaw(raw)
				if len(raw) < 4096 {
					refused = containsAny(raw, declined)
					chat = bytes.Contains(raw, []byte("skipped in goose chat mode"))
				}
			}
			if c.cmd == "write" && res.userCopy == "" && bytes.HasPrefix(raw, []byte(`"### `)) && forUser(e.Obj.Raw("annotations")) {
				res.userCopy, _ = jsonl.Text(raw)
			}
		case "resource":
			if c.cmd == "view" && !res.hasRes {
				r := jsonl.Fields(e.Obj.Raw("resource"))
				if t, ok := r.Str("text"); ok {
					res.resource, res.hasRes = t, true
				}
			}
		}
		if res.hasRes && first {
			// A view's file, before any text: what follows is its numbered
			// copy for the user, as long again, and says nothing more.
			res.head = "the file (an embedded resource)"
			break
		}
	}
	line := strings.TrimSpace(res.head)
	switch {
	case isError:
		res.o, res.why = manifest.OutcomeFailed, "toolResult isError: "+line
	case chat:
		res.o, res.why = manifest.OutcomeRejected, "not run: the tool call was skipped in chat mode"
	case refused:
		res.o, res.why = manifest.OutcomeRejected, "toolResult: "+line
	default:
		res.o, res.why = manifest.OutcomeApplied, "toolResult: "+line
	}
	return res
}

func containsAny(b []byte, subs []string) bool {
	for _, x := range subs {
		if bytes.Contains(b, []byte(x)) {
			return true
		}
	}
	return false
}

// forUser reports whether MCP annotations give the user as an audience.
func forUser(ann []byte) bool {
	for e := range jsonl.Each(jsonl.RawOf(ann, "audience")) {
		if jsonl.Value(e.Raw).Str == "user" {
			return true
		}
	}
	return false
}

func (p *parser) newOp(c *call, kind manifest.OpKind, tool string) manifest.Op {
	return manifest.Op{Kind: kind, Tool: tool, Cwd: p.cwd, Identity: "goose:" + c.id,
		Provenance: manifest.Provenance{Transcript: p.file, Line: c.line, Offset: c.offset, Time: c.at, CallID: c.id, Carrier: manifest.CarrierGoose}}
}

// build makes the operation of a settled call.
func (p *parser) build(c *call, res result) {
	rec := jsonl.Record{Line: c.line, Offset: c.offset}
	args := jsonl.Fields(c.args)
	var op manifest.Op
	if c.tool == "shell" {
		cmd := args.Get("command").Str
		sh := shellcmd.Parse(cmd)
		if !sh.Writes() {
			return
		}
		op = p.newOp(c, manifest.KindShell, "shell")
		op.Command = cmd
		shellcmd.Fill(&op, sh, p.cwd, hostpath.Join)
		op.Outcome, op.OutcomeEvidence = res.o, res.why
		p.out.Op(p.h, op, p.sess.ID, p.headerSession)
		return
	}
	fp := args.Get("path").Str
	if fp == "" {
		p.warn(rec, "%s call %s names no file", c.name, c.id)
		return
	}
	target := hostpath.Join(p.cwd, fp)
	switch c.tool {
	case "text_editor":
		cmd := args.Get("command").Str
		switch cmd {
		case "write":
			text, ok := args.Str("file_text")
			if !ok {
				p.warn(rec, "write call %s has no file_text: what it wrote to %s is not known", c.id, fp)
				op = p.unknownWrite(c, cmd, target, "write without file_text")
				break
			}
			content := written(text, windows(target))
			op = p.newOp(c, manifest.KindWrite, cmd)
			op.Content = &content
			if res.o == manifest.OutcomeApplied && shown(res.userCopy, content) {
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: target, Kind: manifest.EvidencePost, Content: content, Source: "result user copy"})
			}
		case "str_replace":
			if d := args.Get("diff"); d.Type == gjson.String && d.Str != "" {
				op = p.diff(c, rec, target, d.Str)
				break
			}
			if res.o == manifest.OutcomeApplied && strings.HasPrefix(res.head, "Successfully edited ") {
				// An editor model rewrote the file: what it wrote is not
				// recorded.
				op = p.unknownWrite(c, cmd, target, "str_replace made by an editor model (content not recorded)")
				break
			}
			old, ok := args.Str("old_str")
			if !ok {
				p.warn(rec, "str_replace call %s has no old_str", c.id)
				return
			}
			neu, _ := args.Str("new_str")
			op = p.newOp(c, manifest.KindEdit, cmd)
			op.Edits = []manifest.Edit{{Old: old, New: neu}}
		case "insert":
			n := args.Get("insert_line")
			if n.Type != gjson.Number {
				p.warn(rec, "insert call %s has no insert_line", c.id)
				return
			}
			line := int(n.Int())
			neu, _ := args.Str("new_str")
			op = p.newOp(c, manifest.KindEdit, cmd)
			op.Edits = []manifest.Edit{{New: neu, InsertLine: &line}}
		case "undo_edit":
			op = p.newOp(c, manifest.KindEdit, cmd)
		case "view":
			if res.o != manifest.OutcomeApplied || !res.hasRes {
				return
			}
			op = p.newOp(c, manifest.KindObserve, cmd)
			op.Evidence = []manifest.Evidence{{Path: target, Kind: manifest.EvidencePost, Content: res.resource, Source: "view resource"}}
		default:
			return
		}
	case "write":
		content, ok := args.Str("content")
		if !ok {
			p.warn(rec, "write call %s has no content: what it wrote to %s is not known", c.id, fp)
			op = p.unknownWrite(c, "write", target, "write without content")
			break
		}
		op = p.newOp(c, manifest.KindWrite, "write")
		op.Content = &content
	case "edit":
		old, ok := args.Str("before")
		if !ok {
			p.warn(rec, "edit call %s has no before", c.id)
			return
		}
		neu, _ := args.Str("after")
		op = p.newOp(c, manifest.KindEdit, "edit")
		op.Edits = []manifest.Edit{{Old: old, New: neu}}
	default:
		return
	}
	if len(op.Paths) == 0 {
		op.Paths = []string{target}
	}
	if c.tool == "text_editor" {
		op = p.history(op, res)
	}
	op.Outcome, op.OutcomeEvidence = res.o, res.why
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

// history follows Goose's undo history of the files text_editor changed,
// to tell which change an applied undo_edit undoes. The replay keeps its
// own history, of the str_replace and insert calls it replays; a change it
// does not replay as an edit (a diff, an editor model's edit, an insert
// that failed after Goose saved the file) has an entry only here: the
// undo_edit of one is a change of unknown content.
func (p *parser) history(op manifest.Op, res result) manifest.Op {
	if p.undo == nil {
		p.undo = map[string][]bool{}
	}
	push := func(path string, replayed bool) { p.undo[path] = append(p.undo[path], !replayed) }
	switch {
	case res.o == manifest.OutcomeFailed && op.Tool == "insert" && strings.Contains(res.why, "beyond the end of the file"):
		push(op.Paths[0], false) // saved before insert_line was checked
	case res.o != manifest.OutcomeApplied:
	case op.Tool == "undo_edit":
		h := p.undo[op.Paths[0]]
		if len(h) == 0 {
			return op // the replay has nothing to undo either, and says so
		}
		p.undo[op.Paths[0]] = h[:len(h)-1]
		if h[len(h)-1] {
			c := &call{id: op.Provenance.CallID, line: op.Provenance.Line, offset: op.Provenance.Offset, at: op.Provenance.Time}
			return p.unknownWrite(c, "undo_edit", op.Paths[0], "undo_edit of a change not replayed as an edit (a diff, an editor model's edit, a failed insert)")
		}
	case op.Patch != nil:
		for _, h := range op.Patch.Hunks {
			if h.Kind == manifest.HunkUpdate { // saved when the file existed
				push(h.Target, false)
			}
		}
	case op.Tool == "str_replace" || op.Tool == "insert":
		for _, t := range op.Paths {
			push(t, op.Kind == manifest.KindEdit)
		}
	}
	return op
}

// windows reports whether a path is a Windows one: Goose there writes CRLF.
func windows(p string) bool { return hostpath.Drive(p) || strings.Contains(p, `\`) }

// written is what text_editor write puts in a file: file_text with its
// line endings the platform's and a final newline.
func written(text string, crlf bool) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text
}

// shown reports whether a write's copy for the user ("### PATH", then the
// content in a fenced block) shows exactly content, whichever way the
// fence's newlines are read.
func shown(copy, content string) bool {
	_, rest, ok := strings.Cut(copy, "\n")
	if !ok || !strings.HasPrefix(rest, "```") {
		return false
	}
	_, body, ok := strings.Cut(rest, "\n")
	if !ok {
		return false
	}
	body = strings.TrimSuffix(body, "\n")
	body, ok = strings.CutSuffix(body, "```")
	if !ok {
		return false
	}
	return body == content || body == content+"\n" || body+"\n" == content
}

// unknownWrite is a change to target whose content is not recorded: the
// file is graded stale.
func (p *parser) unknownWrite(c *call, tool, target, what string) manifest.Op {
	op := p.newOp(c, manifest.KindShell, tool)
	op.Note = what
	op.Paths = []string{target}
	op.Effects = []manifest.ShellEffect{{Kind: manifest.ShellWrite, Verb: what, Paths: []string{target}}}
	return op
}

// diff reads str_replace's diff form (Goose 1.10–1.25): a unified diff,
// applied by Goose with a fuzzy patcher to the files it names, each
// relative to path (or to path's folder when path is one of them). One
// whose hunks all read cleanly is replayed as a patch of Update (or Add)
// hunks; any other is a change of unknown content to every file it names.
func (p *parser) diff(c *call, rec jsonl.Record, path, text string) manifest.Op {
	files, err := sgdiff.ParseMultiFileDiff([]byte(text))
	if err != nil || len(files) == 0 {
		p.warn(rec, "str_replace call %s sent a diff that does not parse: the change to %s is not replayed", c.id, path)
		return p.unknownWrite(c, "str_replace", path, "str_replace with a diff that does not parse")
	}
	names := make([]string, len(files))
	base := path
	for i, fd := range files {
		n := fd.NewName
		if n == "/dev/null" {
			n = fd.OrigName
		}
		n = strings.TrimPrefix(strings.TrimPrefix(n, "b/"), "a/")
		names[i] = n
		if hostpath.Clean(n) != "" && pathBase(n) == pathBase(path) {
			base = pathDir(path) // path is a file: its folder is the diff's base
		}
	}
	patch := &manifest.Patch{}
	var targets []string
	ok := true
	for i, fd := range files {
		t := overlapJoin(base, names[i])
		targets = append(targets, t)
		h, good := hunkOf(fd, t)
		ok = ok && good
		if good {
			h.Path = names[i]
			patch.Hunks = append(patch.Hunks, h)
		}
	}
	if !ok {
		p.warn(rec, "str_replace call %s sent a diff that cannot be replayed (a deletion, or lines of no hunk): the change to %s is not replayed", c.id, strings.Join(targets, ", "))
		op := p.unknownWrite(c, "str_replace", targets[0], "str_replace with a diff that cannot be replayed")
		op.Paths = targets
		op.Effects[0].Paths = targets
		return op
	}
	op := p.newOp(c, manifest.KindPatch, "str_replace")
	op.PatchText = text
	op.Patch = patch
	op.Paths = targets
	return op
}

func pathBase(p string) string { return path.Base(strings.ReplaceAll(p, `\`, "/")) }
func pathDir(p string) string  { return path.Dir(strings.ReplaceAll(p, `\`, "/")) }

// overlapJoin joins a diff's file name to its base folder as Goose does:
// leading folders of the name that repeat the base's last ones are not
// doubled (base /w/proj and proj/src/a.go give /w/proj/src/a.go).
func overlapJoin(base, name string) string {
	if hostpath.Abs(name) {
		return hostpath.Clean(name)
	}
	b := strings.Split(strings.Trim(strings.ReplaceAll(base, `\`, "/"), "/"), "/")
	n := strings.Split(strings.ReplaceAll(name, `\`, "/"), "/")
	for k := min(len(b), len(n)); k > 0; k-- {
		if slices.Equal(n[:k], b[len(b)-k:]) {
			return hostpath.Join(pathDirN(base, k), name)
		}
	}
	return hostpath.Join(base, name)
}

// pathDirN is p without its last k folders.
func pathDirN(p string, k int) string {
	for range k {
		p = pathDir(p)
	}
	return p
}

// hunkOf turns a file's unified diff into a hunk on target: an Update
// whose chunks' old lines (context and removed) become their new lines
// (context and added), or an Add for a diff from /dev/null. A deletion
// (to /dev/null) is not one.
func hunkOf(fd *sgdiff.FileDiff, target string) (manifest.Hunk, bool) {
	if len(fd.Hunks) == 0 || fd.NewName == "/dev/null" {
		return manifest.Hunk{}, false
	}
	h := manifest.Hunk{Kind: manifest.HunkUpdate, Target: target, Line: 1}
	add := fd.OrigName == "/dev/null"
	var contents strings.Builder
	for _, hk := range fd.Hunks {
		var ch manifest.Chunk
		body := strings.TrimSuffix(string(hk.Body), "\n")
		for _, l := range strings.Split(body, "\n") {
			if l == "" {
				l = " " // an empty context line whose space was lost
			}
			switch l[0] {
			case ' ':
				ch.OldLines = append(ch.OldLines, l[1:])
				ch.NewLines = append(ch.NewLines, l[1:])
			case '-':
				ch.OldLines = append(ch.OldLines, l[1:])
			case '+':
				ch.NewLines = append(ch.NewLines, l[1:])
				contents.WriteString(l[1:] + "\n")
			case '\\':
			default:
				return manifest.Hunk{}, false
			}
		}
		if add && len(ch.OldLines) > 0 {
			return manifest.Hunk{}, false
		}
		h.Chunks = append(h.Chunks, ch)
	}
	if add {
		h = manifest.Hunk{Kind: manifest.HunkAdd, Target: target, Line: 1, Contents: contents.String()}
	}
	return h, true
}

// headerSession is the header's session.
func (p *parser) headerSession() manifest.Session {
	s := p.sess
	s.Cwd = p.cwd
	s.Start = p.first
	return s
}

func (p *parser) finish() {
	p.out.Line = nil // what is emitted now is from lines gone by, all owned
	inTool := p.calls.Running()
	for _, u := range p.calls.Unsettled() {
		c := u.Call
		why := "no toolResponse: the session ends with the call running (interrupted, or the process died)"
		if u.Interrupted {
			why = "no toolResponse: " + u.Stopped
		}
		if p.h.Event != nil {
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: c.at, Line: c.line, Tool: c.name, Target: c.target,
				CallID: c.id, Outcome: manifest.OutcomeUnknown, Detail: why})
		}
		if !c.inert {
			p.build(c, result{o: manifest.OutcomeUnknown, why: why})
		}
	}
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.cwd
	s.Start, s.End = p.first, p.last
	s.EndState = emit.EndOf(s.Warnings, inTool, false)
	p.out.Header(p.h, p.headerSession)
}

// target is what a call is about, for inspect.
func target(raw []byte) string {
	args := jsonl.Fields(raw)
	for _, k := range []string{"path", "command"} {
		if v := args.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return ""
}
