package crush

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/hostpath"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// carrier is how Crush's operations are carried: a tool_call part.
const carrier = "crush_tool_call"

// call is a tool call the assistant made.
type call struct {
	id, name string
	input    string // the arguments: a JSON object as a string
	finished bool   // the model finished writing it
	inert    bool   // changes no file (a read, a search, a shell command that writes nothing)
	line     int
	offset   int64
	at       time.Time
	seq      int
	stopped  string // why the session went on without its result
}

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer
	sess  manifest.Session
	cwd   string

	pending     map[string]*call
	interrupted map[string]*call
	ncalls      int
	lastFinish  string // the last assistant message's finish reason
}

// stream reads a Crush session's record stream from r and hands each
// operation to h once its result is read. It returns the session.
func stream(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h, pending: map[string]*call{}, interrupted: map[string]*call{}}
	p.sess = manifest.Session{Agent: name, Transcript: file}
	if i := strings.LastIndexByte(file, '#'); i >= 0 {
		p.sess.ID = file[i+1:]
	}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	err := rd.Each(ctx, p.record)
	rd.Fill(&p.sess)
	p.finish()
	return p.sess, err
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// record handles one line of the stream: the session, a message, or a
// row that could not be read.
func (p *parser) record(rec jsonl.Record) {
	p.out.Line = rec.Data
	o := jsonl.Fields(rec.Data)
	switch kind := o.Get("crush").Str; kind {
	case "session":
		if id := o.Get("id").Str; id != "" {
			p.sess.ID = strings.Clone(id)
		}
		if cwd := o.Get("cwd").Str; cwd != "" {
			p.cwd = hostpath.Clean(strings.Clone(cwd))
		}
		p.sess.Start = emit.UnixTime(o.Get("created").Int())
		p.sess.End = emit.UnixTime(o.Get("updated").Int())
	case "message":
		if bad := o.Get("bad").Str; bad != "" {
			p.warn(rec, "message %s (%s) could not be read: %s", o.Get("id").Str, o.Get("role").Str, bad)
			return
		}
		at := emit.UnixTime(o.Get("created").Int())
		if at.After(p.sess.End) {
			p.sess.End = at
		}
		parts := o.Raw("parts")
		switch role := o.Get("role").Str; role {
		case "user":
			p.interrupt("a new prompt came before its result")
			if p.h.Event != nil {
				if text := partsText(parts); text != "" {
					p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: at, Line: rec.Line, Text: emit.Excerpt(text, 200)})
				}
			}
		case "assistant":
			p.assistant(rec, parts, at)
		case "tool":
			p.results(rec, parts, at)
		}
	case "bad":
		p.warn(rec, "%s", o.Get("bad").Str)
	default:
		p.warn(rec, "record is not a Crush session's (no \"crush\" kind)")
	}
}

// partsText is the text of a message's text parts.
func partsText(parts []byte) string {
	var out []string
	for e := range jsonl.Each(parts) {
		if e.Obj.Is("type", "text") {
			d := jsonl.Fields(e.Obj.Raw("data"))
			s, _ := d.Str("text")
			out = append(out, s)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// assistant reads an assistant message: its tool calls, and how it ended.
func (p *parser) assistant(rec jsonl.Record, parts []byte, at time.Time) {
	for e := range jsonl.Each(parts) {
		data := jsonl.Fields(e.Obj.Raw("data"))
		switch e.Obj.Get("type").Str {
		case "tool_call":
			id := data.Get("id").Str
			if id == "" || p.pending[id] != nil {
				continue
			}
			input, _ := data.Str("input")
			c := &call{id: strings.Clone(id), name: strings.Clone(data.Get("name").Str), input: input,
				finished: data.Get("finished").Bool(), line: rec.Line, offset: rec.Offset, at: at, seq: p.ncalls}
			c.inert = !writes(c.name) || c.name == "bash" && !shellcmd.Parse(gjson.Get(input, "command").Str).Writes()
			p.ncalls++
			p.pending[c.id] = c
		case "finish":
			p.lastFinish = strings.Clone(data.Get("reason").Str)
		}
	}
	if p.lastFinish == "canceled" {
		// The model was stopped while writing: a call it had not finished
		// writing never ran.
		for id, c := range p.pending {
			if !c.finished {
				delete(p.pending, id)
				p.settle(c, manifest.OutcomeFailed, "never ran: the reply was cancelled while the call was being written (finished false)", "")
			}
		}
	}
}

// results reads a tool message: the results of earlier calls.
func (p *parser) results(rec jsonl.Record, parts []byte, at time.Time) {
	for e := range jsonl.Each(parts) {
		if !e.Obj.Is("type", "tool_result") {
			continue
		}
		data := jsonl.Fields(e.Obj.Raw("data"))
		id := data.Get("tool_call_id").Str
		c := p.pending[id]
		if c == nil {
			c = p.interrupted[id]
			delete(p.interrupted, id)
		} else {
			delete(p.pending, id)
		}
		if c == nil || c.inert && p.h.Event == nil {
			continue
		}
		// A result's content and metadata can be long (a view's file, a
		// command's output, twice): only what tells the outcome is read,
		// and the metadata only of a call whose change it records.
		isError := data.Get("is_error").Bool()
		var content string
		if raw := data.Raw("content"); isError || len(raw) <= 4096 || c.name == "bash" && !c.inert {
			content, _ = data.Str("content")
		} else {
			content = emit.FirstLineRaw(raw)
		}
		var meta string
		if !c.inert {
			meta, _ = data.Str("metadata")
		}
		o, why := outcome(c, content, isError)
		if p.h.Event != nil {
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: c.at, Line: c.line, Tool: c.name, Target: target(c.input),
				CallID: c.id, Outcome: o, Detail: why, Ended: at})
		}
		p.build(c, o, why, meta)
	}
}

// settle is a call that will get no result: its event, and its operation.
func (p *parser) settle(c *call, o manifest.Outcome, why, meta string) {
	if p.h.Event != nil {
		p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: c.at, Line: c.line, Tool: c.name, Target: target(c.input),
			CallID: c.id, Outcome: o, Detail: why})
	}
	p.build(c, o, why, meta)
}

// interrupt moves the calls still running to interrupted: the session
// went on without them (a result that comes later still settles them).
func (p *parser) interrupt(why string) {
	for id, c := range p.pending {
		if c.finished {
			c.stopped = why
			p.interrupted[id] = c
		}
		delete(p.pending, id)
	}
}

// exitCode is the line Crush's bash tool ends a command's output with
// when it exits non-zero.
var exitCode = regexp.MustCompile(`(?m)^Exit code (-?\d+)\s*$`)

// outcome reads a tool result (docs/formats/crush.md §4).
func outcome(c *call, content string, isError bool) (manifest.Outcome, string) {
	// The file tools wrap what they say in <result>…</result>.
	first := emit.FirstLine(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(content), "<result>")))
	if isError {
		switch {
		case strings.Contains(content, "User denied permission") || strings.HasPrefix(content, "Permission denied"):
			return manifest.OutcomeRejected, "tool_result is_error: " + first
		case strings.Contains(content, "user cancelled assistant tool calling") || strings.Contains(content, "Tool execution canceled by user"),
			strings.Contains(content, "There was an error while executing the tool"),
			strings.Contains(content, "tool call was interrupted and did not produce a result"):
			return manifest.OutcomeUnknown, "tool_result is_error, the call was stopped: " + first
		}
		return manifest.OutcomeFailed, "tool_result is_error: " + first
	}
	if c.name == "bash" {
		if strings.Contains(content, "Command was aborted before completion") {
			return manifest.OutcomeUnknown, "tool_result: the command was aborted before completion"
		}
		if m := exitCode.FindAllStringSubmatch(content, -1); m != nil && m[len(m)-1][1] != "0" {
			return manifest.OutcomeFailed, "tool_result: exit code " + m[len(m)-1][1]
		}
	}
	return manifest.OutcomeApplied, "tool_result: " + first
}

func (p *parser) newOp(c *call, kind manifest.OpKind) manifest.Op {
	return manifest.Op{Kind: kind, Tool: c.name, Cwd: p.cwd, Identity: "crush:" + c.id,
		Provenance: manifest.Provenance{Transcript: p.file, Line: c.line, Offset: c.offset, Time: c.at, CallID: c.id, Carrier: carrier}}
}

// build makes the operation of a settled call; meta is its result's
// metadata (a JSON object as a string), which holds the whole file before
// and after an edit.
func (p *parser) build(c *call, o manifest.Outcome, why, meta string) {
	rec := jsonl.Record{Line: c.line, Offset: c.offset}
	in := gjson.Parse(c.input)
	if c.input == "" || !in.IsObject() {
		if c.finished && writes(c.name) {
			p.warn(rec, "%s call %s: its arguments are not a JSON object", c.name, c.id)
		}
		return
	}
	md := gjson.Parse(meta)
	fp := in.Get("file_path").Str
	var op manifest.Op
	switch c.name {
	case "write", "edit", "multiedit", "download", "lsp_replace_symbol":
		if fp == "" {
			p.warn(rec, "%s call %s names no file", c.name, c.id)
			return
		}
		target := hostpath.Join(p.cwd, fp)
		switch c.name {
		case "write":
			op = p.newOp(c, manifest.KindWrite)
			content := in.Get("content").Str
			op.Content = &content
		case "edit":
			old := in.Get("old_string").Str
			neu := in.Get("new_string").Str
			if old == "" {
				// An empty old_string creates the file with new_string.
				op = p.newOp(c, manifest.KindWrite)
				op.Content = &neu
			} else {
				op = p.newOp(c, manifest.KindEdit)
				op.Edits = []manifest.Edit{{Old: old, New: neu, ReplaceAll: in.Get("replace_all").Bool()}}
			}
		case "multiedit":
			op = p.newOp(c, manifest.KindEdit)
			failed := map[string]bool{}
			for _, f := range md.Get("edits_failed").Array() {
				failed[f.Get("edit.old_string").Str+"\x00"+f.Get("edit.new_string").Str] = true
			}
			for _, e := range in.Get("edits").Array() {
				ed := manifest.Edit{Old: e.Get("old_string").Str, New: e.Get("new_string").Str, ReplaceAll: e.Get("replace_all").Bool()}
				if failed[ed.Old+"\x00"+ed.New] {
					continue // skipped by Crush (edits_failed): the others were written
				}
				op.Edits = append(op.Edits, ed)
			}
			if len(op.Edits) == 0 {
				return
			}
		case "lsp_replace_symbol":
			nc := md.Get("new_content")
			if nc.Type != gjson.String {
				op = p.unknownWrite(c, target, "lsp_replace_symbol without new_content")
				break
			}
			op = p.newOp(c, manifest.KindWrite)
			content := nc.Str
			op.Content = &content
		case "download":
			op = p.unknownWrite(c, target, "download of "+emit.Excerpt(in.Get("url").Str, 120))
		}
		op.Paths = []string{target}
		if (c.name == "edit" || c.name == "multiedit") && o == manifest.OutcomeApplied {
			// The whole file before (its CRLFs made LF) and after the call.
			if pre := md.Get("old_content"); pre.Type == gjson.String {
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: target, Kind: manifest.EvidencePre, Content: pre.Str, LFNormalized: true, Source: "metadata.old_content"})
			}
			if post := md.Get("new_content"); post.Type == gjson.String {
				// multiedit's is the text before its CRLFs were restored.
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: target, Kind: manifest.EvidencePost, Content: post.Str, LFNormalized: c.name == "multiedit", Source: "metadata.new_content"})
			}
		}
	case "bash":
		cmd := in.Get("command").Str
		sh := shellcmd.Parse(cmd)
		if !sh.Writes() {
			return
		}
		wd := md.Get("working_directory").Str
		if wd == "" {
			wd = hostpath.Join(p.cwd, in.Get("working_dir").Str)
		}
		if wd == "" {
			wd = p.cwd
		}
		op = p.newOp(c, manifest.KindShell)
		op.Command = cmd
		shellcmd.Fill(&op, sh, hostpath.Clean(wd), hostpath.Join)
	case "lsp_rename":
		if o == manifest.OutcomeApplied || o == manifest.OutcomeUnknown {
			p.warn(rec, "lsp_rename call %s renamed %q across files its record does not name: those changes are not recovered", c.id, in.Get("symbol").Str)
		}
		return
	default:
		return
	}
	op.Outcome, op.OutcomeEvidence = o, why
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

// writes reports whether a tool may change files.
func writes(tool string) bool {
	switch tool {
	case "write", "edit", "multiedit", "bash", "download", "lsp_replace_symbol", "lsp_rename":
		return true
	}
	return false
}

// unknownWrite is a change to target whose content is not recorded: the
// file is graded stale.
func (p *parser) unknownWrite(c *call, target, what string) manifest.Op {
	op := p.newOp(c, manifest.KindShell)
	op.Note = what
	op.Effects = []manifest.ShellEffect{{Kind: manifest.ShellWrite, Verb: what, Paths: []string{target}}}
	return op
}

// headerSession is the header's session.
func (p *parser) headerSession() manifest.Session {
	s := p.sess
	s.Cwd = p.cwd
	return s
}

func (p *parser) finish() {
	p.out.Line = nil // what is emitted now is from lines gone by, all owned
	inTool := false
	for _, id := range emit.Unsettled(func(c *call) int { return c.seq }, p.interrupted, p.pending) {
		c := p.pending[id]
		why := "no tool_result: the session ends with the call running (the process stopped or died)"
		if c == nil {
			c = p.interrupted[id]
			why = "no tool_result: " + c.stopped
		} else {
			inTool = inTool || c.finished
		}
		if !c.finished {
			why = "never ran: the call was not finished being written and has no result"
			p.settle(c, manifest.OutcomeFailed, why, "")
			continue
		}
		p.settle(c, manifest.OutcomeUnknown, why, "")
	}
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.cwd
	s.EndState = emit.EndOf(s.Warnings, inTool, p.lastFinish == "canceled")
	p.out.Header(p.h, p.headerSession)
}

func target(input string) string {
	in := gjson.Parse(input)
	for _, k := range []string{"file_path", "command", "pattern", "url", "symbol"} {
		if v := in.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return ""
}
