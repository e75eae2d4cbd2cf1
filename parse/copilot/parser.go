package copilot

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

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/applypatch"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/home"
	"github.com/agentsandbox/sandbox/parse/internal/hostpath"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// carrier is how Copilot CLI's operations are carried: a tool execution.
const carrier = "copilot_tool"

// call is a tool execution that started.
type call struct {
	name, ts string
	args     []byte // the arguments as written (an object, or apply_patch's string), copied
	inert    bool   // changes no file
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
	// calls go on without their complete when the user aborts or sends a
	// new prompt.
	calls   emit.Calls[*call]
	aborted bool      // the last turn ended in an abort
	span    emit.Span // the first and last times
}

// stream reads a Copilot CLI session from r and hands each operation to h
// as soon as its call completes. It returns the session.
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

var uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// idFromPath is the session id its path gives: the folder of
// events.jsonl is named by it.
func idFromPath(file string) string {
	file = strings.ReplaceAll(file, `\`, "/")
	if all := uuidRe.FindAllString(file, -1); len(all) > 0 {
		return strings.ToLower(all[len(all)-1])
	}
	base := path.Base(file)
	for _, ext := range []string{".zst", ".gz", ".jsonl"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// record handles one event. Its fields are found without reading the
// values they hold (a system.message holds the whole system prompt), and
// the complete of a call that changes no file is left unread.
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
	switch typ {
	case "session.start", "session.resume":
		data := jsonl.Fields(rec.Field("data"))
		if id := data.Get("sessionId").Str; id != "" && typ == "session.start" {
			p.sess.ID = strings.ToLower(strings.Clone(id))
		}
		ctx := data.Get("context")
		if c := ctx.Get("cwd").Str; c != "" && p.cwd == "" {
			p.cwd = clean(strings.Clone(c))
		}
		if typ == "session.start" {
			// The commit and branch the checkout was on: where --to-branch
			// and the start of the files are looked for.
			p.sess.AgentVersion = strings.Clone(data.Get("copilotVersion").Str)
			p.sess.GitCommit = strings.Clone(ctx.Get("headCommit").Str)
			p.sess.GitBranch = strings.Clone(ctx.Get("branch").Str)
		}
	case "user.message":
		p.aborted = false
		p.calls.Interrupt(ts, nil)
		if p.h.Event != nil {
			data := jsonl.Fields(rec.Field("data"))
			if text := data.Get("content").Str; text != "" {
				t, _ := time.Parse(time.RFC3339Nano, ts)
				p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: t, Line: rec.Line, Text: emit.Excerpt(text, 200)})
			}
		}
	case "abort":
		p.aborted = true
		p.calls.Interrupt(ts, nil)
	case "tool.execution_start":
		data := jsonl.Fields(rec.Field("data"))
		id := data.Get("toolCallId").Str
		c := &call{name: data.Get("toolName").Str, line: rec.Line, offset: rec.Offset}
		if id == "" || !p.calls.Start(id, c) {
			return
		}
		c.args, c.ts = bytes.Clone(data.Raw("arguments")), strings.Clone(ts)
		c.inert = !writes(c.name, c.args)
	case "tool.execution_complete":
		data := jsonl.Fields(rec.Field("data"))
		id := data.Get("toolCallId").Str
		c, ok := p.calls.Settle(id)
		if !ok || c.inert && p.h.Event == nil {
			return
		}
		o, why := outcome(c, data)
		if p.h.Event != nil {
			t, _ := time.Parse(time.RFC3339Nano, c.ts)
			end, _ := time.Parse(time.RFC3339Nano, ts)
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.args),
				CallID: id, Outcome: o, Detail: why, Ended: end})
		}
		if c.inert {
			return
		}
		if c.name == "view" {
			p.view(rec, id, c, data, o)
			return
		}
		result := jsonl.Fields(data.Raw("result"))
		diff, _ := result.Str("detailedContent")
		p.build(rec, id, c, o, why, diff)
	}
}

// writes reports whether a call may change files: the file tools, and a
// shell command that writes.
func writes(name string, args []byte) bool {
	switch name {
	case "create", "edit", "apply_patch":
		return true
	case "view": // read for the file's content, when it is all of it
		o := jsonl.Fields(args)
		return o.Raw("view_range") == nil
	case "bash", "powershell":
		return shellcmd.Parse(jsonl.GetOf(args, "command").Str).Writes()
	}
	return false
}

// exitCode finds the exit code Copilot CLI appends to a shell command's
// output ("<exited with exit code 1>", "<shellId: 3 completed with exit
// code 2>"): rawExit at the end of the output as written in JSON, exitText
// at the end of the text (when the writer escaped what the pattern holds).
var (
	rawExit  = regexp.MustCompile(`(?:exited with|completed with) exit code (-?\d+)>(?:\\[rnt]|\s)*"$`)
	exitText = regexp.MustCompile(`(?:exited with|completed with) exit code (-?\d+)>\s*$`)
)

// shellExit reads the exit code a shell's output ends with, from the end
// of the output as written; only when that end holds an escape (\u003e
// for >) is the whole output unescaped.
func shellExit(raw []byte) (string, bool) {
	tail := raw[max(0, len(raw)-256):]
	if m := rawExit.FindSubmatch(tail); m != nil {
		return string(m[1]), true
	}
	if !bytes.Contains(tail, []byte(`\u`)) {
		return "", false
	}
	text, _ := jsonl.Text(raw)
	if m := exitText.FindStringSubmatch(text); m != nil {
		return m[1], true
	}
	return "", false
}

// outcome reads a complete: success, a refusal (the user's or a rule's),
// a failure, and for a shell the exit code its output ends with. Only the
// first line of a result is read, and the end of a shell's: a view's or a
// command's output can be long.
func outcome(c *call, data jsonl.Object) (manifest.Outcome, string) {
	if !data.Get("success").Bool() {
		e := jsonl.Fields(data.Raw("error"))
		msg := emit.FirstLine(e.Get("message").Str)
		switch code := e.Get("code").Str; code {
		case "rejected", "denied":
			return manifest.OutcomeRejected, "tool.execution_complete error " + code + ": " + msg
		case "timeout":
			if c.name == "bash" || c.name == "powershell" {
				return manifest.OutcomeUnknown, "tool.execution_complete error timeout: " + msg
			}
			return manifest.OutcomeFailed, "tool.execution_complete error timeout: " + msg
		case "":
			return manifest.OutcomeFailed, "tool.execution_complete success false: " + msg
		default:
			return manifest.OutcomeFailed, "tool.execution_complete error " + code + ": " + msg
		}
	}
	result := jsonl.Fields(data.Raw("result"))
	raw := result.Raw("content")
	if c.name == "bash" || c.name == "powershell" {
		code, ok := shellExit(raw)
		if !ok {
			// Still running when the tool answered ("still running after 30
			// seconds"), started in the background, or stopped: what it did
			// is not known.
			return manifest.OutcomeUnknown, "tool.execution_complete without an exit code (still running, or in the background): " + firstLine(raw)
		}
		if n, _ := strconv.Atoi(code); n != 0 {
			return manifest.OutcomeFailed, "tool.execution_complete: exit code " + code
		}
		return manifest.OutcomeApplied, "tool.execution_complete: exit code 0"
	}
	return manifest.OutcomeApplied, "tool.execution_complete success: " + firstLine(raw)
}

// firstLine is the first line of a JSON string as written (emit.FirstLineRaw).
func firstLine(raw []byte) string { return emit.FirstLineRaw(raw) }

// clean cleans a path, a Windows one spelled one way (hostpath.Clean).
func clean(p string) string { return hostpath.Clean(p) }

// resolve makes a tool path absolute against the session's cwd.
func resolve(cwd, p string) string {
	if q, ok := home.Expand(cwd, p); ok && p != "" {
		return q
	}
	return hostpath.Join(cwd, p)
}

func (p *parser) newOp(c *call, id string, kind manifest.OpKind) manifest.Op {
	t, _ := time.Parse(time.RFC3339Nano, c.ts)
	op := manifest.Op{Kind: kind, Tool: c.name, Cwd: p.cwd,
		Provenance: manifest.Provenance{Transcript: p.file, Line: c.line, Offset: c.offset, Time: t, CallID: strings.Clone(id), Carrier: carrier}}
	if id != "" {
		op.Identity = "copilot:" + id
	}
	return op
}

// build makes the operation of a finished call. diff is what Copilot CLI
// recorded of the change (result.detailedContent).
func (p *parser) build(rec jsonl.Record, id string, c *call, o manifest.Outcome, why, diff string) {
	var op manifest.Op
	if c.name == "apply_patch" {
		op = p.patch(rec, id, c)
		if op.Kind == "" {
			return
		}
	} else {
		args := jsonl.Fields(c.args)
		switch c.name {
		case "create", "edit":
			fp := args.Get("path").Str
			if fp == "" {
				p.warn(rec, "%s call %s names no file", c.name, id)
				return
			}
			target := resolve(p.cwd, fp)
			if c.name == "create" {
				op = p.newOp(c, id, manifest.KindWrite)
				content, ok := args.Str("file_text")
				if v := args.Get("file_text"); !ok || v.Type != gjson.String {
					// The file was written, with what is not known.
					p.warn(rec, "create call %s has no file_text: what it wrote to %s is not known", id, fp)
					op = p.unknownWrite(c, id, target, "create without file_text")
				} else {
					op.Content = &content
				}
			} else {
				op = p.newOp(c, id, manifest.KindEdit)
				old, ok := args.Str("old_str")
				if !ok {
					p.warn(rec, "edit call %s has no old_str", id)
					return
				}
				neu, _ := args.Str("new_str")
				op.Edits = []manifest.Edit{{Old: old, New: neu}}
				if old == "" {
					// What Copilot CLI makes of an empty old_str is not
					// known (it is not offered): the file changed, how is
					// not replayed.
					op = p.unknownWrite(c, id, target, "edit with an empty old_str")
				}
			}
			op.Paths = []string{target}
			if c.name == "edit" && diff != "" && o == manifest.OutcomeApplied {
				// The change with its context: it checks the replay, it
				// does not hold the whole file.
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidenceDiff, Content: strings.Clone(diff), Source: "result.detailedContent"})
			}
		case "bash", "powershell":
			cmd := args.Get("command").Str
			sh := shellcmd.Parse(cmd)
			if !sh.Writes() {
				return
			}
			op = p.newOp(c, id, manifest.KindShell)
			op.Command = strings.Clone(cmd)
			shellcmd.Fill(&op, sh, p.cwd, resolve)
		default:
			return
		}
	}
	op.Outcome, op.OutcomeEvidence = o, why
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

// unknownWrite is a change to target the replay cannot make: the file is
// graded stale.
func (p *parser) unknownWrite(c *call, id, target, what string) manifest.Op {
	op := p.newOp(c, id, manifest.KindShell)
	op.Note = what
	op.Effects = []manifest.ShellEffect{{Kind: manifest.ShellWrite, Verb: what, Paths: []string{target}}}
	return op
}

// patch reads an apply_patch call: its argument is the patch text itself,
// or an object holding it (input).
func (p *parser) patch(rec jsonl.Record, id string, c *call) manifest.Op {
	text, _ := jsonl.Text(c.args)
	if len(c.args) > 0 && c.args[0] == '{' {
		text = jsonl.GetOf(c.args, "input").Str
	}
	if text == "" {
		p.warn(rec, "apply_patch call %s has no patch text", id)
		return manifest.Op{}
	}
	op := p.newOp(c, id, manifest.KindPatch)
	op.PatchText = text
	patch, err := applypatch.Parse(text)
	if err != nil {
		// The files its headers name are still the ones it may have
		// changed; a patch that names none changed nothing known.
		op.Note = "patch does not parse: " + err.Error()
		p.warn(rec, "apply_patch call %s: %s", id, op.Note)
		for _, n := range applypatch.HeaderPaths(text) {
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
	return op
}

// view turns a whole-file view into evidence of the file's content. Its
// result.detailedContent lists the file as one hunk of context lines
// (@@ -1,N +1,N @@), the pieces of the file split at its newlines; its
// result.content is the same text, as it is or with each line numbered
// ("1. …"). Only a view of the whole file (no view_range) that was not cut
// (metrics.resultLength equal to resultForLlmLength), whose listing and
// text agree, is evidence.
func (p *parser) view(rec jsonl.Record, id string, c *call, data jsonl.Object, o manifest.Outcome) {
	args := jsonl.Fields(c.args)
	fp := args.Get("path").Str
	if o != manifest.OutcomeApplied || fp == "" || args.Get("view_range").Exists() {
		return
	}
	tel := jsonl.Fields(data.Raw("toolTelemetry"))
	if t := tel.Get("properties.viewType").Str; t != "" && t != "file" {
		return
	}
	if m := tel.Get("metrics"); m.Get("resultLength").Int() != m.Get("resultForLlmLength").Int() {
		return // cut to fit the model's window
	}
	result := jsonl.Fields(data.Raw("result"))
	listing, _ := result.Str("detailedContent")
	text, _ := result.Str("content")
	content, ok := listed(listing)
	if !ok || (text != content && unnumbered(text) != content) {
		return
	}
	op := p.newOp(c, id, manifest.KindObserve)
	op.Paths = []string{resolve(p.cwd, fp)}
	op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: content, Source: "full-file view"}}
	op.Outcome, op.OutcomeEvidence = o, "tool.execution_complete of a whole-file view"
	op.Provenance.Line, op.Provenance.Offset = rec.Line, rec.Offset
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

// wholeHunk is the header of a listing of a whole file.
var wholeHunk = regexp.MustCompile(`^@@ -1,(\d+) \+1,(\d+) @@$`)

// listed reads a view's listing: the file's pieces as context lines of one
// hunk from its first line, joined again by newlines.
func listed(diff string) (string, bool) {
	lines := strings.Split(diff, "\n")
	at := -1
	for i, l := range lines {
		if m := wholeHunk.FindStringSubmatch(l); m != nil {
			if m[1] != m[2] {
				return "", false
			}
			at = i + 1
			break
		}
	}
	if at < 0 {
		return "", false
	}
	body := lines[at:]
	if len(body) > 0 && body[len(body)-1] == "" {
		body = body[:len(body)-1] // the listing's own last newline
	}
	n, _ := strconv.Atoi(wholeHunk.FindStringSubmatch(lines[at-1])[1])
	if len(body) != n {
		return "", false
	}
	for i, l := range body {
		if !strings.HasPrefix(l, " ") {
			return "", false // a listing holds context lines only
		}
		body[i] = l[1:]
	}
	return strings.Join(body, "\n"), true
}

// unnumbered drops the "N. " Copilot CLI puts before each line of a view
// (1.0.64), when every line has its number in order; else "".
func unnumbered(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		rest, ok := strings.CutPrefix(l, strconv.Itoa(i+1)+".")
		if !ok || rest != "" && rest[0] != ' ' {
			return ""
		}
		lines[i] = strings.TrimPrefix(rest, " ")
	}
	return strings.Join(lines, "\n")
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
		detail, why := "no tool.execution_complete: still running when the session ends", "no tool.execution_complete: the call never finished (interrupted or crashed)"
		if u.Interrupted {
			detail = "no tool.execution_complete: interrupted, the session went on without it"
			why = detail
		}
		if p.h.Event != nil {
			t, _ := time.Parse(time.RFC3339Nano, c.ts)
			ended, _ := time.Parse(time.RFC3339Nano, u.Stopped)
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.args),
				CallID: id, Outcome: manifest.OutcomeUnknown, Detail: detail, Ended: ended})
		}
		if !c.inert {
			p.build(jsonl.Record{Line: c.line, Offset: c.offset}, id, c, manifest.OutcomeUnknown, why, "")
		}
	}
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.cwd
	s.Start = p.span.Start()
	s.End = p.span.End()
	s.EndState = emit.EndOf(s.Warnings, p.calls.Running(), p.aborted)
	p.out.Header(p.h, p.headerSession)
}

func target(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		s, _ := jsonl.Text(raw)
		return emit.Excerpt(s, 120)
	}
	args := jsonl.Fields(raw)
	for _, k := range []string{"path", "command", "pattern"} {
		if v := args.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return emit.Excerpt(jsonl.Canonical(string(raw)), 120)
}
