package pi

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/parse/internal/home"
	"github.com/agentsandbox/sandbox/parse/jsonl"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
)

type call struct {
	name, ts string
	args     []byte // the call's arguments as written, copied
	stopped  string // when the conversation went on without its result
	inert    bool   // changes no file
	line     int
	offset   int64
	// seq is the call's place among the session's calls: several calls of
	// one message share its line.
	seq int
}

// opAt is where an operation's result is in the tree.
type opAt struct {
	entry uint64
	what  string
	line  int
}

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer // numbers the operations, sends the header once
	sess  manifest.Session

	cwd     string
	pending map[string]*call
	ncalls  int // calls made so far (call.seq)
	// interrupted are calls without a result when a later user message
	// came: the session went on without them.
	interrupted map[string]*call
	done        jsonl.HashSet // calls settled, by the hash of their id

	// The tree: each entry's parent, the last entry (the current position),
	// and the entry each operation's result is in.
	// parent holds each entry and its parent by the hashes of their ids
	// (a few bytes an entry, whatever the ids' length); root is hash("").
	seed    maphash.Seed
	parent  tree
	leaf    string
	opEntry []opAt
	span    emit.Span // the first and last times
}

// stream reads a pi session from r and hands each operation to h as soon
// as its result is read. It returns the session.
func stream(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h, pending: map[string]*call{}, interrupted: map[string]*call{}, seed: maphash.MakeSeed()}
	p.sess = manifest.Session{Agent: manifest.AgentPi, Transcript: file, ID: idFromFilename(file)}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	err := rd.Each(ctx, p.record)
	rd.Fill(&p.sess)
	p.finish()
	return p.sess, err
}

var uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

func idFromFilename(file string) string {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	all := uuidRe.FindAllString(base, -1)
	if len(all) > 0 {
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

// record handles one line. Its top-level fields are found without reading
// the values they hold (a result can hold a whole file), and a result that
// no tracked call waits for is left unread.
func (p *parser) record(rec jsonl.Record) {
	// The line is read in place and is the only memory read that the
	// parser does not own (what it keeps, it clones or copies): an
	// operation copies only the strings in it (emit.Sequencer.Line). A
	// second copy of every full-file read it keeps as evidence was a third
	// of what a pi parse allocated.
	p.out.Line = rec.Data
	str := func(k string) string { b, _ := jsonl.String(rec.Field(k)); return string(b) }
	typ := str("type")
	ts := str("timestamp")
	p.span.Add(ts)
	id := str("id")
	if typ == "session" {
		v := gjson.ParseBytes(rec.Data)
		if p.sess.ID == "" || !uuidRe.MatchString(path.Base(p.file)) {
			if id != "" {
				p.sess.ID = strings.ToLower(strings.Clone(id))
			}
		}
		if c := v.Get("cwd").Str; c != "" && p.cwd == "" {
			p.cwd = path.Clean(strings.Clone(c))
		}
		if b := v.Get("branchedFrom").Str; b != "" {
			p.sess.ForkedFrom = strings.Clone(b)
		}
		if b := v.Get("parentSession").Str; b != "" {
			p.sess.ForkedFrom = strings.Clone(b)
		}
		return
	}
	if typ == "" {
		p.warn(rec, "record has no \"type\"")
		return
	}
	entry := ""
	if id != "" {
		entry = strings.Clone(id)
		par, _ := jsonl.String(rec.Field("parentId"))
		p.parent.add(p.hash(entry), p.hash(string(par)))
		p.leaf = entry
	}
	if typ != "message" {
		return
	}
	m := jsonl.Fields(rec.Field("message"))
	role := m.Get("role").Str
	switch role {
	case "user":
		// The conversation went on: a call still without its result was
		// interrupted (the session did not die in it).
		for id, c := range p.pending {
			c.stopped = strings.Clone(ts)
			p.interrupted[id] = c
			delete(p.pending, id)
		}
		if p.h.Event != nil {
			content := m.Raw("content")
			if text := contentText(content); text != "" {
				t, _ := time.Parse(time.RFC3339Nano, ts)
				p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: t, Line: rec.Line, Text: emit.Excerpt(text, 200)})
			}
		}
	case "assistant":
		// A reply cut by an error or an abort never has its tool calls run:
		// pi runs them only after a complete reply.
		stop := m.Get("stopReason").Str
		cut := stop == "error" || stop == "aborted"
		for e := range jsonl.Each(m.Raw("content")) {
			b := e.Obj
			if !b.Is("type", "toolCall") {
				continue
			}
			cid := b.Get("id").Str
			if cid == "" || p.done.Has(p.hash(cid)) || p.pending[cid] != nil {
				continue
			}
			c := &call{name: b.Get("name").Str, args: bytes.Clone(b.Raw("arguments")),
				ts: strings.Clone(ts), line: rec.Line, offset: rec.Offset, seq: p.ncalls}
			p.ncalls++
			if cut {
				p.done.Add(p.hash(cid))
				why := "assistant reply stopped (" + stop + ": " + emit.FirstLine(m.Get("errorMessage").Str) + "): its tool calls were never run"
				if p.h.Event != nil {
					t, _ := time.Parse(time.RFC3339Nano, ts)
					p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: rec.Line, Tool: c.name, Target: target(c.args),
						CallID: cid, Outcome: manifest.OutcomeFailed, Detail: why})
				}
				p.build(rec, cid, c, manifest.OutcomeFailed, why, entry, nil)
				continue
			}
			// A call that changes no file is still tracked (the session may
			// die in it), but its result will not be read.
			c.inert = !relevant(c.name) && c.name != "read" || (c.name == "bash" && !shellcmd.Parse(jsonl.GetOf(c.args, "command").Str).Writes())
			p.pending[cid] = c
		}
	case "toolResult":
		cid := m.Get("toolCallId").Str
		c := p.pending[cid]
		if c == nil {
			return
		}
		if c.inert && p.h.Event == nil {
			delete(p.pending, cid)
			p.done.Add(p.hash(cid))
			return // read, grep, …: nothing to build, the result stays unread
		}
		delete(p.pending, cid)
		p.done.Add(p.hash(cid))
		content := m.Raw("content")
		text := contentText(content)
		o, why := manifest.OutcomeApplied, "toolResult: "+emit.FirstLine(text)
		if m.Get("isError").Bool() {
			o, why = manifest.OutcomeFailed, "toolResult isError: "+emit.FirstLine(text)
		}
		if p.h.Event != nil {
			t, _ := time.Parse(time.RFC3339Nano, c.ts)
			end, _ := time.Parse(time.RFC3339Nano, ts)
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.args),
				CallID: cid, Outcome: o, Detail: why, Ended: end})
		}
		if c.name == "read" {
			p.read(rec, cid, c, m, o, text, content)
			return
		}
		p.build(rec, cid, c, o, why, entry, m.Raw("details"))
	case "bashExecution":
		// A command the user ran with "!": it ran on the same files.
		cmd := m.Get("command").Str
		sh := shellcmd.Parse(cmd)
		if !sh.Writes() {
			return
		}
		o, why := manifest.OutcomeApplied, "bashExecution exitCode 0"
		switch {
		case m.Get("cancelled").Bool():
			o, why = manifest.OutcomeUnknown, "bashExecution cancelled while running"
		case m.Get("exitCode").Type == gjson.Number && m.Get("exitCode").Int() != 0:
			o, why = manifest.OutcomeFailed, fmt.Sprintf("bashExecution exitCode %d", m.Get("exitCode").Int())
		}
		c := &call{name: "bash", ts: ts, line: rec.Line, offset: rec.Offset}
		op := p.newOp(c, "", manifest.KindShell)
		op.Provenance.Carrier = "pi_user_bash"
		op.Command = strings.Clone(cmd)
		shellcmd.Fill(&op, sh, p.cwd, resolve)
		op.Outcome, op.OutcomeEvidence = o, why
		p.emitOp(op, entry, "user bash command (line "+fmt.Sprint(rec.Line)+")")
	}
}

func (p *parser) hash(id string) uint64 { return maphash.String(p.seed, id) }

// relevant reports whether a tool's call can change files (a bash command
// is read further when its result comes).
func relevant(name string) bool {
	switch name {
	case "write", "edit", "bash":
		return true
	}
	return false
}

// contentText joins the text blocks of a message's content (or returns
// the content when it is a string). A single block's text is returned as
// it is unescaped, not copied again.
func contentText(raw []byte) string {
	if isString(raw) {
		s, _ := jsonl.Text(raw)
		return s
	}
	var parts []string
	for b := range jsonl.Each(raw) {
		f := b.Obj
		if f.Is("type", "text") {
			s, _ := f.Str("text")
			parts = append(parts, s)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, "")
}

// isString reports whether a value, as written, is a JSON string.
func isString(raw []byte) bool { return len(raw) > 0 && raw[0] == '"' }

// resolve makes a tool path absolute against the session's cwd, as pi
// does: a leading "@" (a mention) is dropped.
func resolve(cwd, p string) string {
	p = strings.TrimPrefix(p, "@")
	if p == "" {
		return ""
	}
	if q, ok := home.Expand(cwd, p); ok {
		return q // the tool expands ~ to the home directory
	}
	if path.IsAbs(p) || cwd == "" {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

func (p *parser) newOp(c *call, id string, kind manifest.OpKind) manifest.Op {
	t, _ := time.Parse(time.RFC3339Nano, c.ts)
	op := manifest.Op{Kind: kind, Tool: c.name, Cwd: p.cwd,
		Provenance: manifest.Provenance{Transcript: p.file, Line: c.line, Offset: c.offset, Time: t, CallID: strings.Clone(id), Carrier: manifest.CarrierPi}}
	if id != "" {
		op.Identity = "pi:" + id
	}
	return op
}

// edits reads an edit call's replacements: edits[] (an array, or the same
// array sent as a JSON string), with a top-level oldText/newText folded in.
func edits(args jsonl.Object) []manifest.Edit {
	var out []manifest.Edit
	list := args.Raw("edits")
	if isString(list) {
		s, _ := jsonl.Text(list)
		list = []byte(s)
	}
	for el := range jsonl.Each(list) {
		e := el.Obj
		old, _ := e.Str("oldText")
		neu, _ := e.Str("newText")
		out = append(out, manifest.Edit{Old: old, New: neu})
	}
	if old, ok := args.Str("oldText"); ok {
		neu, _ := args.Str("newText")
		out = append(out, manifest.Edit{Old: old, New: neu})
	}
	return out
}

// read turns a whole-file read into evidence: pi's read without offset or
// limit, and not truncated (pi then says so in details.truncation and in a
// closing note), answers with the file's text exactly as it is (BOM and
// CRLF included).
func (p *parser) read(rec jsonl.Record, id string, c *call, m jsonl.Object, o manifest.Outcome, text string, content []byte) {
	args := jsonl.Fields(c.args)
	fp := firstNonEmpty(args.Get("path").Str, args.Get("file_path").Str)
	if o != manifest.OutcomeApplied || fp == "" || args.Get("offset").Exists() || args.Get("limit").Exists() || jsonl.RawOf(m.Raw("details"), "truncation") != nil {
		return
	}
	// One block, of type text: the content is an array of one element
	// (gjson's "#"), and the text is that block's, as contentText read it.
	if len(content) == 0 || content[0] != '[' {
		return
	}
	n, isText := 0, false
	for b := range jsonl.Each(content) {
		if n++; n > 1 {
			break
		}
		isText = b.Obj.Is("type", "text")
	}
	if n != 1 || !isText {
		return // an image, or more than the text
	}
	if partial(text) {
		return // a partial read that says where to go on
	}
	op := p.newOp(c, id, manifest.KindObserve)
	op.Paths = []string{resolve(p.cwd, fp)}
	op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: text, Source: "full-file read"}}
	op.Outcome, op.OutcomeEvidence = o, "toolResult of a whole-file read"
	op.Provenance.Line, op.Provenance.Offset = rec.Line, rec.Offset
	p.emitOp(op, "", "")
}

// partial reports whether a read's text ends with pi's note saying where
// to go on ("[… Use offset=N to continue.]"). The words are looked for
// first: LastIndex reads a whole file backwards a byte at a time, and
// without them there is no note.
func partial(text string) bool {
	if !strings.Contains(text, "Use offset=") {
		return false
	}
	i := strings.LastIndex(text, "\n\n[")
	return i >= 0 && strings.Contains(text[i:], "Use offset=")
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// build makes the operation of a finished call.
func (p *parser) build(rec jsonl.Record, id string, c *call, o manifest.Outcome, why, entry string, details []byte) {
	args := jsonl.Fields(c.args)
	var op manifest.Op
	switch c.name {
	case "write", "edit":
		fp := args.Get("path").Str
		if fp == "" {
			fp = args.Get("file_path").Str
		}
		if fp == "" {
			p.warn(rec, "%s call %s names no file", c.name, id)
			return
		}
		if c.name == "write" {
			op = p.newOp(c, id, manifest.KindWrite)
			content, _ := args.Str("content")
			op.Content = &content
		} else {
			op = p.newOp(c, id, manifest.KindEdit)
			op.Edits = edits(args)
			if len(op.Edits) == 0 {
				p.warn(rec, "edit call %s has no oldText or edits", id)
				return
			}
		}
		op.Paths = []string{resolve(p.cwd, fp)}
		// pi's record of the change: a unified diff (details.patch, since
		// edits[]) and its own numbered diff (details.diff); neither holds
		// the whole file, so they check the replay rather than replace it.
		df := jsonl.Fields(details)
		for _, k := range []string{"patch", "diff"} {
			if d, ok := df.Str(k); c.name == "edit" && ok && d != "" {
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidenceDiff, Content: d, Source: "details." + k})
			}
		}
	case "bash":
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
	op.Outcome, op.OutcomeEvidence = o, why
	p.emitOp(op, entry, fmt.Sprintf("%s call %s (line %d)", c.name, id, c.line))
}

func (p *parser) emitOp(op manifest.Op, entry, what string) {
	if entry != "" {
		p.opEntry = append(p.opEntry, opAt{p.hash(entry), what, op.Provenance.Line})
	}
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

func (p *parser) header() { p.out.Header(p.h, p.headerSession) }

// headerSession is the header's session: its working directory and
// start are known by the time the first operation is settled.
func (p *parser) headerSession() manifest.Session {
	s := p.sess
	s.Cwd = p.cwd
	s.Start = p.span.Start()
	return s
}

func (p *parser) finish() {
	p.out.Line = nil // what is emitted now is from lines gone by, all owned
	// Calls that never got a result: reported, not replayed.
	open := func(id string) *call {
		if c := p.pending[id]; c != nil {
			return c
		}
		return p.interrupted[id]
	}
	ids := emit.Unsettled(func(c *call) int { return c.seq }, p.interrupted, p.pending)
	for _, id := range ids {
		c := open(id)
		detail, why := "no toolResult: still running when the session ends", "no toolResult: the call never finished (interrupted or crashed)"
		if p.pending[id] == nil {
			detail = "no toolResult: interrupted, the conversation went on without it"
			why = detail
		}
		if p.h.Event != nil {
			t, _ := time.Parse(time.RFC3339Nano, c.ts)
			ended, _ := time.Parse(time.RFC3339Nano, c.stopped)
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: c.line, Tool: c.name, Target: target(c.args),
				CallID: id, Outcome: manifest.OutcomeUnknown, Detail: detail, Ended: ended})
		}
		p.build(jsonl.Record{Line: c.line, Offset: c.offset}, id, c, manifest.OutcomeUnknown, why, "", nil)
	}
	// The current branch: from the last entry back to the root.
	if p.leaf != "" {
		// Only whether the entries of operations are on the branch is
		// asked, so only they are marked: a set of every entry of the
		// branch cost a map insert a line. The walk is bounded by the
		// number of entries as before; a cycle then goes round the same
		// entries again, so the entries found are the same.
		on := make(map[uint64]bool, len(p.opEntry))
		for _, oe := range p.opEntry {
			on[oe.entry] = false
		}
		p.parent.walk(p.hash(""), func(e uint64) {
			if _, ok := on[e]; ok {
				on[e] = true
			}
		})
		for _, oe := range p.opEntry {
			if !on[oe.entry] {
				p.warns.Add("abandoned", manifest.Warning{File: p.file, Line: oe.line,
					Message: fmt.Sprintf("the %s is on a branch the session left (its current position is entry %s); it happened on disk and stays in the replay", oe.what, emit.Excerpt(p.leaf, 40))})
			}
		}
	}
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.cwd
	s.Start = p.span.Start()
	s.End = p.span.End()
	s.EndState = emit.EndOf(s.Warnings, len(p.pending) > 0, false)
	p.header()
}

func target(raw []byte) string {
	args := jsonl.Fields(raw)
	for _, k := range []string{"path", "file_path", "command", "pattern"} {
		if v := args.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return emit.Excerpt(jsonl.Canonical(string(raw)), 120)
}
