package qwen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/home"
	"github.com/agentsandbox/sandbox/parse/internal/hostpath"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// call is a functionCall of the model's.
type call struct {
	name, ts string
	args     []byte // the arguments object as written, copied
	inert    bool   // changes no file, and shows no file's content
	line     int
	offset   int64
}

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer
	sess  manifest.Session

	cwd string
	// calls go on without their result when the user types a new prompt
	// or cancels the turn.
	calls     emit.Calls[*call]
	cancelled bool // the last turn was cancelled
	rewinds   int
	span      emit.Span
}

// stream reads a Qwen Code session from r and hands each operation to h as
// soon as its call has a result. It returns the session.
func stream(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h}
	p.sess = manifest.Session{Agent: name, Transcript: file, ID: idFromPath(file)}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	err := rd.Each(ctx, p.record)
	rd.Fill(&p.sess)
	p.finish()
	return p.sess, err
}

// idFromPath is the session id a transcript's name gives: chats/<id>.jsonl,
// or a subagent's agent-<id>.jsonl.
func idFromPath(file string) string {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	for _, ext := range []string{".zst", ".gz", ".jsonl"} {
		base = strings.TrimSuffix(base, ext)
	}
	return strings.ToLower(base)
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// record handles one record. Only the fields a record's type needs are
// read: a tool_result of a call that changes no file is left unread.
func (p *parser) record(rec jsonl.Record) {
	p.out.Line = rec.Data
	str := func(k string) string { b, _ := jsonl.String(rec.Field(k)); return string(b) }
	typ := str("type")
	ts := str("timestamp")
	p.span.Add(ts)
	if typ == "" {
		p.warn(rec, "record has no \"type\"")
		return
	}
	if p.cwd == "" {
		if c := str("cwd"); c != "" {
			p.cwd = hostpath.Clean(strings.Clone(c))
		}
	}
	if p.sess.AgentVersion == "" {
		// The first record names the session and the checkout. A subagent's
		// transcript carries its parent's sessionId: its writes are the
		// session's work, recovered with it.
		if id := str("sessionId"); id != "" {
			p.sess.ID = strings.ToLower(strings.Clone(id))
		}
		p.sess.AgentVersion = strings.Clone(str("version"))
		p.sess.GitBranch = strings.Clone(str("gitBranch"))
	}
	switch typ {
	case "user":
		if str("subtype") != "" {
			return // a notification, a cron or goal message: not a typed prompt
		}
		p.cancelled = false
		p.calls.Interrupt(ts, nil)
		if p.h.Event != nil {
			var text string
			msg := jsonl.Fields(rec.Field("message"))
			for e := range jsonl.Each(msg.Raw("parts")) {
				if s, ok := e.Obj.Str("text"); ok && !e.Obj.Get("thought").Bool() {
					text = s
					break
				}
			}
			if text != "" {
				t, _ := time.Parse(time.RFC3339Nano, ts)
				p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: t, Line: rec.Line, Text: emit.Excerpt(text, 200)})
			}
		}
	case "assistant":
		n := 0
		msg := jsonl.Fields(rec.Field("message"))
		for e := range jsonl.Each(msg.Raw("parts")) {
			fc := e.Obj.Raw("functionCall")
			if fc == nil {
				continue
			}
			o := jsonl.Fields(fc)
			id := o.Get("id").Str
			if id == "" {
				id = fmt.Sprintf("line%d.%d", rec.Line, n)
			}
			n++
			c := &call{name: o.Get("name").Str, ts: ts, line: rec.Line, offset: rec.Offset}
			if p.calls.Start(id, c) { // else the same call written again
				c.args, c.ts = bytes.Clone(o.Raw("args")), strings.Clone(ts)
				c.inert = !relevant(c.name, c.args)
			}
		}
	case "tool_result":
		p.result(rec, ts)
	case "system":
		switch str("subtype") {
		case "rewind":
			p.rewinds++
			pl := jsonl.Fields(rec.Field("systemPayload"))
			n := pl.Get("truncatedCount").Int()
			p.warn(rec, "/rewind dropped %d turn(s) from the conversation: their calls happened on disk and stay in the replay", n)
		case "turn_result":
			if pl := jsonl.Fields(rec.Field("systemPayload")); pl.Get("state").Str == "cancelled" {
				p.cancelled = true
				p.calls.Interrupt(ts, nil)
			}
		}
	}
}

// result settles a call with its tool_result record: the toolCallResult
// names the call and its status, the functionResponse part holds what the
// model was told.
func (p *parser) result(rec jsonl.Record, ts string) {
	tcr := jsonl.Fields(rec.Field("toolCallResult"))
	id := tcr.Get("callId").Str
	var resp jsonl.Object
	msg := jsonl.Fields(rec.Field("message"))
	for e := range jsonl.Each(msg.Raw("parts")) {
		if fr := e.Obj.Raw("functionResponse"); fr != nil {
			o := jsonl.Fields(fr)
			if id == "" {
				id = o.Get("id").Str
			}
			if o.Get("id").Str == id {
				resp = jsonl.Fields(o.Raw("response"))
				break
			}
		}
	}
	c, ok := p.calls.Settle(id)
	if !ok || c.inert && p.h.Event == nil {
		return
	}
	status := tcr.Get("status").Str
	text, ok := resp.Str("output")
	if !ok {
		if text, ok = resp.Str("error"); !ok {
			text = jsonl.Canonical(string(resp.Raw("error")))
		}
	}
	o, why := outcome(c, status, text)
	if p.h.Event != nil {
		t, _ := time.Parse(time.RFC3339Nano, c.ts)
		end, _ := time.Parse(time.RFC3339Nano, ts)
		p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.args),
			CallID: id, Outcome: o, Detail: why, Ended: end})
	}
	if c.inert {
		return
	}
	p.build(rec, id, c, o, why, text, jsonl.Fields(tcr.Raw("resultDisplay")), tcr.Raw("resultDisplay"))
}

// relevant reports whether a call may change a file or show one whole.
func relevant(name string, args []byte) bool {
	switch name {
	case "write_file", "edit", "replace":
		return true
	case "read_file":
		o := jsonl.Fields(args)
		for _, k := range []string{"offset", "limit"} {
			if o.Raw(k) != nil {
				return false
			}
		}
		return true
	case "run_shell_command":
		return shellcmd.Parse(jsonl.GetOf(args, "command").Str).Writes()
	}
	return false
}

// outcome classifies a call from its result's status and text (Gemini's
// texts, which Qwen Code kept): a command's exit code is read from the
// "Exit Code:" line of its output block.
func outcome(c *call, status, text string) (manifest.Outcome, string) {
	first := emit.FirstLine(text)
	shell := c.name == "run_shell_command"
	stopped := strings.Contains(text, "before it could complete") || strings.Contains(text, "exceeded the timeout")
	switch status {
	case "success":
	case "error":
		if shell && stopped {
			return manifest.OutcomeUnknown, "status error, the command was stopped while running: " + first
		}
		return manifest.OutcomeFailed, "status error: " + first
	case "cancelled":
		if shell && stopped {
			return manifest.OutcomeUnknown, "status cancelled while running: " + first
		}
		return manifest.OutcomeRejected, "status cancelled: " + first
	case "":
		return manifest.OutcomeUnknown, "tool_result without a status: " + first
	default:
		return manifest.OutcomeUnknown, "status " + status + ": " + first
	}
	if shell {
		if stopped {
			return manifest.OutcomeUnknown, "status success, but the command was stopped: " + first
		}
		if m := exitLine.FindStringSubmatch(text); m != nil && m[1] != "0" {
			return manifest.OutcomeFailed, "output: Exit Code: " + m[1]
		}
	}
	return manifest.OutcomeApplied, "status success: " + first
}

// exitLine is the "Exit Code: N" line of a command's output block.
var exitLine = regexp.MustCompile(`(?m)^Exit Code: (-?\d+)`)

// argPath is the file a call names, in any of the spellings its versions
// used.
func argPath(args *jsonl.Object) string {
	for _, k := range []string{"file_path", "absolute_path", "path"} {
		if v := args.Get(k); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}

// resolve makes a tool path absolute against the session's directory.
func resolve(cwd, p string) string {
	if q, ok := home.Expand(cwd, p); ok && p != "" {
		return q
	}
	return hostpath.Join(cwd, p)
}

func (p *parser) newOp(c *call, id string, kind manifest.OpKind, carrier string) manifest.Op {
	t, _ := time.Parse(time.RFC3339Nano, c.ts)
	return manifest.Op{Kind: kind, Tool: c.name, Cwd: p.cwd, Identity: "qwen:" + id,
		Provenance: manifest.Provenance{Transcript: p.file, Line: c.line, Offset: c.offset, Time: t, CallID: strings.Clone(id), Carrier: carrier}}
}

// userContent is what write_file's text says the user changed the content
// to, when the user edited the proposal before accepting it.
const userContent = "User modified the `content` to be: "

// build makes the operation of a settled call. text is what the model was
// told; disp is the recorded display (a FileDiff for the file tools), and
// rawDisp the display as written.
func (p *parser) build(rec jsonl.Record, id string, c *call, o manifest.Outcome, why, text string, disp jsonl.Object, rawDisp []byte) {
	args := jsonl.Fields(c.args)
	// A display cut to fit the saved session holds no whole file.
	whole := len(rawDisp) > 0 && rawDisp[0] == '{' && !disp.Get("truncatedForSession").Bool()
	var op manifest.Op
	switch c.name {
	case "write_file", "edit", "replace":
		fp := argPath(&args)
		if fp == "" {
			p.warn(rec, "%s call %s names no file", c.name, id)
			return
		}
		target := resolve(p.cwd, fp)
		var post *string
		if s, ok := disp.Str("newContent"); ok && whole && o == manifest.OutcomeApplied {
			post = &s
		}
		var pre *string
		if s, ok := disp.Str("originalContent"); ok && whole && o == manifest.OutcomeApplied && disp.Get("originalContent").Type == gjson.String &&
			!strings.HasPrefix(text, "Successfully created") && !strings.HasPrefix(text, "Created new file") {
			pre = &s
		}
		if c.name == "write_file" {
			op = p.newOp(c, id, manifest.KindWrite, manifest.CarrierQwen)
			content, ok := args.Str("content")
			if !ok {
				p.warn(rec, "write_file call %s has no content", id)
				return
			}
			switch {
			case post != nil:
				content = *post // what was written, after any change the user made
			case strings.Contains(text, userContent):
				content = text[strings.Index(text, userContent)+len(userContent):]
				op.Note = "the user modified the proposed content before accepting it"
			}
			op.Content = &content
			op.Paths = []string{target}
			if pre != nil {
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: target, Kind: manifest.EvidencePre, Content: *pre, Source: "resultDisplay.originalContent"})
			}
			break
		}
		old, _ := args.Str("old_string")
		neu, _ := args.Str("new_string")
		e := manifest.Edit{Old: old, New: neu, ReplaceAll: args.Get("replace_all").Bool()}
		carrier := manifest.CarrierQwen
		if c.name == "replace" {
			// Before Qwen Code renamed it, replace was Gemini CLI's, with
			// Gemini's count and matching rules.
			carrier = manifest.CarrierGemini
			e.ReplaceAll = args.Get("allow_multiple").Bool()
			if n := args.Get("expected_replacements"); n.Exists() {
				e.Expected = int(n.Int())
				e.ReplaceAll = e.Expected > 1
			}
		}
		op = p.newOp(c, id, manifest.KindEdit, carrier)
		op.Edits = []manifest.Edit{e}
		op.Paths = []string{target}
		if args.Get("modified_by_user").Bool() {
			op.Note = "the user modified the proposed change before accepting it"
		}
		// Qwen Code edits the file with CRLF turned into LF, and records it so.
		if pre != nil {
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: target, Kind: manifest.EvidencePre, Content: *pre, Source: "resultDisplay.originalContent", LFNormalized: true})
		}
		if post != nil {
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: target, Kind: manifest.EvidencePost, Content: *post, Source: "resultDisplay.newContent", LFNormalized: true})
		}
	case "read_file":
		// A whole text file read shows its content (CRLF turned into LF); a
		// partial or shortened read says so in its display or its text.
		fp := argPath(&args)
		if o != manifest.OutcomeApplied || fp == "" || (len(rawDisp) > 0 && jsonl.Value(rawDisp).Str != "") ||
			strings.HasPrefix(strings.TrimSpace(text), "IMPORTANT: The file content has been truncated") {
			return
		}
		for _, k := range []string{"offset", "limit"} {
			if args.Raw(k) != nil {
				return
			}
		}
		op = p.newOp(c, id, manifest.KindObserve, manifest.CarrierQwen)
		op.Paths = []string{resolve(p.cwd, fp)}
		op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: text, Source: "full-file read_file", LFNormalized: true}}
		op.Provenance.Line, op.Provenance.Offset = rec.Line, rec.Offset
	case "run_shell_command":
		cmd := args.Get("command").Str
		sh := shellcmd.Parse(cmd)
		if !sh.Writes() {
			return
		}
		op = p.newOp(c, id, manifest.KindShell, "")
		op.Command = strings.Clone(cmd)
		for _, k := range []string{"directory", "dir_path"} {
			if d := args.Get(k).Str; d != "" {
				op.Cwd = resolve(p.cwd, d)
				break
			}
		}
		shellcmd.Fill(&op, sh, op.Cwd, resolve)
	default:
		return
	}
	op.Outcome, op.OutcomeEvidence = o, why
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
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
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.args),
				CallID: id, Outcome: manifest.OutcomeUnknown, Detail: detail, Ended: ended})
		}
		if !c.inert && c.name != "read_file" {
			p.build(jsonl.Record{Line: c.line, Offset: c.offset}, id, c, manifest.OutcomeUnknown, why, "", jsonl.Object{}, nil)
		}
	}
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.cwd
	s.Start = p.span.Start()
	s.End = p.span.End()
	s.EndState = emit.EndOf(s.Warnings, p.calls.Running(), p.cancelled)
	p.out.Header(p.h, p.headerSession)
}

// target is what a call works on, for the timeline.
func target(raw []byte) string {
	args := jsonl.Fields(raw)
	for _, k := range []string{"file_path", "absolute_path", "path", "command", "pattern"} {
		if v := args.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return emit.Excerpt(jsonl.Canonical(string(raw)), 120)
}
