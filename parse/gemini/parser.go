package gemini

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/parse/jsonl"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
)

// Options tune a parse.
type Options struct {
	// Cwd is the project root when it is known from elsewhere (the
	// .project_root marker beside the chats directory).
	Cwd string
}

// loc locates a record (a line of the JSON Lines layout, or a message of
// the single-JSON one).
type loc struct {
	line   int
	offset int64
}

// held is an operation waiting for the session's working directory, which
// Gemini does not record: it is learnt from the first result that names a
// file by its absolute path.
type held struct {
	msg   string
	build func(cwd string) (manifest.Op, bool)
}

type pending struct {
	name, target, ts, msg string
	raw                   []byte // the call as last seen, copied
	// cmd is a shell call's command as last seen, sh what it does: Gemini
	// writes the call again when it ends, most often with the same one.
	cmd string
	sh  *shellcmd.Result
	at  loc
	// seq is the call's place among the session's calls: the calls of one
	// message share its line.
	seq int
}

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer // numbers the operations, sends the header once
	sess  manifest.Session
	opts  Options

	projectHash string
	idSeen      bool
	cwd         string // the project root, once known
	cwdVerified bool
	guess       string // a root read from a result, not confirmed by projectHash

	// Ids are kept as their hashes: a few bytes each, whatever their length.
	seed    maphash.Seed
	settled jsonl.HashSet
	pending map[string]*pending
	ncalls  int // calls made so far (pending.seq)
	held    []held
	turns   map[uint64]bool // user messages already told as turns

	// live is the conversation's messages in order, as Gemini CLI keeps
	// them; ops says which operations each message carried, for $rewindTo.
	live   []uint64
	isLive jsonl.HashSet
	ops    map[uint64][]string
	span   emit.Span // the first and last times
}

// stream reads a Gemini CLI session from r and hands each operation to h
// once its call has reached a final status. It returns the session.
func stream(ctx context.Context, r io.Reader, file string, opts Options, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h, opts: opts, pending: map[string]*pending{},
		turns: map[uint64]bool{}, ops: map[uint64][]string{}, seed: maphash.MakeSeed()}
	p.sess = manifest.Session{Agent: manifest.AgentGemini, Transcript: file, ID: idFromFilename(file)}
	if opts.Cwd != "" {
		p.cwd, p.cwdVerified = path.Clean(opts.Cwd), true
	}
	br := bufio.NewReaderSize(r, 64<<10)
	peek, _ := br.Peek(4096)
	var err error
	if Pretty(peek) {
		err = p.single(br, jsonl.MaxLine(ctx))
	} else {
		rd := jsonl.NewReader(br, file)
		err = rd.Each(ctx, func(rec jsonl.Record) { p.record(rec) })
		rd.Fill(&p.sess)
		rd.Close()
	}
	p.finish()
	return p.sess, err
}

// Pretty reports whether a session's first bytes are the pretty-printed
// single-JSON layout: an object whose "{" ends its line. (A single JSON
// object written on one line reads as a JSON Lines file of one record,
// which the JSON Lines reading handles too.)
func Pretty(peek []byte) bool {
	t := bytes.TrimLeft(jsonl.TrimBOM(peek), " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	rest := bytes.TrimLeft(t[1:], " \t\r")
	return len(rest) > 0 && rest[0] == '\n'
}

var uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

func idFromFilename(file string) string {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	if m := uuidRe.FindString(base); m != "" {
		return strings.ToLower(m)
	}
	for _, ext := range []string{".zst", ".gz", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

func (p *parser) warn(at loc, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: at.line, Offset: at.offset, Message: fmt.Sprintf(format, args...)})
}

// single reads the legacy layout: one JSON document, held whole, so it
// obeys the line limit as a record does.
func (p *parser) single(r io.Reader, maxLine int64) error {
	data, err := io.ReadAll(io.LimitReader(r, maxLine+1))
	if err != nil {
		return fmt.Errorf("%s: %w", p.file, err)
	}
	if int64(len(data)) > maxLine {
		return fmt.Errorf("%s: a single-JSON Gemini session longer than --max-line (%d bytes): not read", p.file, maxLine)
	}
	p.sess.Bytes = int64(len(data))
	p.sess.Lines = bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		p.sess.Lines++
	}
	data = jsonl.TrimBOM(data)
	if !json.Valid(data) {
		// gjson reads a document as far as it goes: everything before the
		// damage is still read.
		p.sess.Warnings = append(p.sess.Warnings, manifest.Warning{File: p.file, Line: p.sess.Lines,
			Message: manifest.TruncatedLastLine + ": the single-JSON session is not valid JSON (cut short?); messages read up to the damage"})
	}
	doc := gjson.ParseBytes(data)
	p.metadata(doc)
	p.learnAll(doc.Get("messages"))
	line, counted := 1, 0
	doc.Get("messages").ForEach(func(_, m gjson.Result) bool {
		// Messages carry no line of their own: count newlines up to each.
		if m.Index >= counted {
			line += bytes.Count(data[counted:m.Index], []byte{'\n'})
			counted = m.Index
		}
		p.message(loc{line: line, offset: int64(m.Index)}, m)
		return true
	})
	return nil
}

// learnAll looks for the working directory in every tool call of a list
// of messages before any operation is built: a document held whole can be
// read twice.
func (p *parser) learnAll(msgs gjson.Result) {
	msgs.ForEach(func(_, m gjson.Result) bool {
		for tc := range jsonl.Each([]byte(m.Get("toolCalls").Raw)) {
			c := readCall(tc.Obj)
			p.learn(&c)
			if p.cwd != "" {
				break
			}
		}
		return p.cwd == ""
	})
}

// record handles one line of the JSON Lines layout. Its top-level fields
// are found without reading the values they hold (a message can hold whole
// files): only what a record is, its id and its tool calls are read.
func (p *parser) record(rec jsonl.Record) {
	// Without a timeline the line is read in place and is the only memory
	// read that the parser does not own (what it holds, it clones or
	// copies): an operation copies only the strings in it
	// (emit.Sequencer.Line), not every file's content a second time. What
	// is read through a copy (a whole session on one line, a timeline's
	// message) is copied string by string, so that no operation keeps the
	// copy alive.
	p.out.Line = nil
	if p.h.Event == nil {
		p.out.Line = rec.Data
	}
	at := loc{line: rec.Line, offset: rec.Offset}
	// "$rewindTo" and "$set" can be keys of a record only if it holds a
	// "$", or spells a short string with a \u escape (Escaped): JSON has
	// no other way to write one. A message holds neither as a rule, and
	// the look-up of each goes through every key.
	if rec.Escaped || bytes.IndexByte(rec.Data, '$') >= 0 {
		if p.dollar(at, rec) {
			return
		}
	}
	typ := rec.Field("type")
	if rec.Field("projectHash") != nil || (typ == nil && rec.Field("sessionId") != nil) {
		p.out.Line = nil // read through a copy
		v := gjson.ParseBytes(rec.Data)
		p.metadata(v)
		v.Get("messages").ForEach(func(_, m gjson.Result) bool {
			if m.IsObject() {
				p.message(at, m)
			}
			return true
		})
		return
	}
	id, idOK := jsonl.String(rec.Field("id"))
	t, typOK := jsonl.String(typ)
	if !idOK || !typOK {
		p.warn(at, "record is neither a message nor session metadata")
		return
	}
	ts, _ := jsonl.String(rec.Field("timestamp"))
	var content gjson.Result
	if p.h.Event != nil && string(t) == "user" {
		content = gjson.ParseBytes(rec.Field("content"))
	}
	p.messageOf(at, string(id), string(t), string(ts), content, rec.Field("toolCalls"))
}

// dollar handles a record of Gemini CLI's $rewindTo or $set, and reports
// whether the record was one.
func (p *parser) dollar(at loc, rec jsonl.Record) bool {
	if rt := rec.Field("$rewindTo"); rt != nil {
		id, _ := jsonl.String(rt)
		p.rewind(at, string(id))
		return true
	}
	if set := rec.Field("$set"); len(set) > 0 && set[0] == '{' {
		// Most are a lastUpdated alone: the object is split into its
		// fields rather than copied whole to be read.
		v := jsonl.Fields(set)
		last, _ := v.Str("lastUpdated")
		p.span.Add(last)
		jsonl.Value(v.Raw("directories")).ForEach(func(_, d gjson.Result) bool { // /dir add
			return !p.tryRoot(d.Str)
		})
		if msgs := jsonl.Value(v.Raw("messages")); msgs.IsArray() {
			// A checkpoint: the conversation is the list given.
			p.live, p.isLive = nil, jsonl.HashSet{}
			msgs.ForEach(func(_, m gjson.Result) bool {
				if m.IsObject() {
					p.message(at, m)
				}
				return true
			})
		}
		return true
	}
	return false
}

// metadata takes the session's identity and span from its metadata.
func (p *parser) metadata(v gjson.Result) {
	if id := v.Get("sessionId").Str; id != "" && !p.idSeen {
		p.idSeen = true
		p.sess.ID = strings.Clone(id)
	}
	if h := v.Get("projectHash").Str; h != "" && p.projectHash == "" {
		p.projectHash = strings.ToLower(strings.Clone(h))
	}
	p.span.Add(v.Get("startTime").Str)
	p.span.Add(v.Get("lastUpdated").Str)
	v.Get("directories").ForEach(func(_, d gjson.Result) bool {
		p.tryRoot(d.Str)
		return p.cwd == ""
	})
}

// message handles one message of a list (the legacy document, a $set
// checkpoint, metadata that holds messages), read in one pass over its keys.
func (p *parser) message(at loc, m gjson.Result) {
	var id, typ, ts string
	var content gjson.Result
	var calls []byte
	m.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			id = v.Str
		case "type":
			typ = v.Str
		case "timestamp":
			ts = v.Str
		case "content":
			content = v
		case "toolCalls":
			calls = []byte(v.Raw)
		}
		return true
	})
	p.messageOf(at, id, typ, ts, content, calls)
}

// messageOf handles a message: a new one, or a later copy of one whose tool
// calls have moved on.
func (p *parser) messageOf(at loc, id, typ, ts string, content gjson.Result, calls []byte) {
	p.span.Add(ts)
	h := p.hash(id)
	// Gemini CLI writes a message again as its calls move on: the copy
	// right after it needs no look-up to know it is live.
	if id != "" && !(len(p.live) > 0 && p.live[len(p.live)-1] == h) && !p.isLive.Has(h) {
		p.isLive.Add(h)
		p.live = append(p.live, h)
	}
	if typ == "user" && p.h.Event != nil && id != "" && !p.turns[h] {
		p.turns[h] = true
		if text := contentText(content); text != "" {
			t, _ := time.Parse(time.RFC3339Nano, ts)
			p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: t, Line: at.line, Text: emit.Excerpt(text, 200)})
		}
	}
	for tc := range jsonl.Each(calls) {
		if len(tc.Raw) > 0 && tc.Raw[0] == '{' {
			p.call(at, id, tc.Raw, tc.Obj)
		}
	}
}

// contentText joins the text of a message's content (a string, or parts).
func contentText(c gjson.Result) string {
	if c.Type == gjson.String {
		return strings.TrimSpace(c.Str)
	}
	var sb strings.Builder
	c.ForEach(func(_, part gjson.Result) bool {
		sb.WriteString(part.Get("text").Str)
		return true
	})
	return strings.TrimSpace(sb.String())
}

// final reports whether a tool call's status is one it ends in.
func final(status string) bool {
	switch status {
	case "success", "error", "cancelled":
		return true
	}
	return false
}

// tcall is a tool call's fields, found in one pass; strings are unescaped,
// the tool's arguments, result and display are left as they are written,
// the arguments and display split into their fields when first asked for
// (the first copy of a write holds its content in args, and is not read).
type tcall struct {
	id, name, status, ts string
	argsRaw, result      []byte
	display              []byte
	args, dispFields     jsonl.Object
	argsSplit, dispSplit bool
	// out and txt cache the answer, as written and as text.
	out    []byte
	outSet bool
	txt    *string
	// plain: txt is the response's output string (not an error, not a
	// part of another kind).
	plain bool
}

// arg returns the call's arguments, split into their fields.
func (c *tcall) arg() *jsonl.Object {
	if !c.argsSplit {
		c.args, c.argsSplit = jsonl.Fields(c.argsRaw), true
	}
	return &c.args
}

// disp returns the call's resultDisplay, split into its fields (none when
// it is not an object).
func (c *tcall) disp() *jsonl.Object {
	if !c.dispSplit {
		c.dispFields, c.dispSplit = jsonl.Fields(c.display), true
	}
	return &c.dispFields
}

// readCall reads a call's fields; where a key is written twice the last
// counts, as in a ForEach over the call.
func readCall(o jsonl.Object) tcall {
	c := tcall{}
	c.id, _ = jsonl.Text(o.Last("id"))
	c.name, _ = jsonl.Text(o.Last("name"))
	c.status, _ = jsonl.Text(o.Last("status"))
	c.ts, _ = jsonl.Text(o.Last("timestamp"))
	c.argsRaw = o.Last("args")
	c.result = o.Last("result")
	c.display = o.Last("resultDisplay")
	return c
}

// output returns the JSON string the tool answered with (its output, or
// its error), as written, without reading the rest of the result.
func (c *tcall) output() []byte {
	if c.outSet {
		return c.out
	}
	c.outSet = true
	if isString(c.result) {
		c.out = c.result
		return c.out
	}
	var out []byte
parts:
	for part := range jsonl.Each(c.result) {
		pf := part.Obj
		if t := pf.Raw("text"); isString(t) {
			out = t
			break
		}
		resp := jsonl.Record{Data: jsonl.RawOf(pf.Raw("functionResponse"), "response")}
		for _, k := range []string{"output", "error", "content"} {
			if v := resp.Field(k); isString(v) {
				out = v
				break parts
			}
		}
	}
	if out == nil && isString(c.display) {
		out = c.display
	}
	c.out = out
	return out
}

// isString reports whether a value, as written, is a JSON string.
func isString(raw []byte) bool { return len(raw) > 0 && raw[0] == '"' }

// outputAt returns the string at gjson's path
// "0.functionResponse.response.output" of a call's result, or nil. Each
// step opens the value it names without looking for its end, so a large
// output is read once, to find its own end.
func outputAt(result []byte) []byte {
	v := result
	if i := jsonl.SkipSpace(v, 0); i < len(v) && v[i] == '[' {
		v = v[jsonl.SkipSpace(v, i+1):] // the first element, as "0" of an array
	} else {
		v = open(v, "0")
	}
	v = open(open(open(v, "functionResponse"), "response"), "output")
	if !isString(v) {
		return nil
	}
	if e := jsonl.StringEnd(v, 0); e > 0 {
		return v[:e]
	}
	return nil
}

// open returns raw from the start of the value of the first key named name
// of the object raw starts with (as gjson's Get finds it) to raw's end, or
// nil: where the value ends is not looked for.
func open(raw []byte, name string) []byte {
	i := jsonl.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	i = jsonl.SkipSpace(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		ke := jsonl.StringEnd(raw, i)
		if ke < 0 {
			return nil
		}
		j := jsonl.SkipSpace(raw, ke)
		if j >= len(raw) || raw[j] != ':' {
			return nil
		}
		j = jsonl.SkipSpace(raw, j+1)
		if jsonl.KeyIs(raw[i:ke], name) {
			return raw[j:]
		}
		ve := jsonl.ValueEnd(raw, j)
		if ve <= j {
			return nil
		}
		i = jsonl.SkipSpace(raw, ve)
		if i >= len(raw) || raw[i] != ',' {
			return nil
		}
		i = jsonl.SkipSpace(raw, i+1)
	}
	return nil
}

// text is the tool's whole answer (a copy: it outlives the line).
func (c *tcall) text() string {
	if c.txt == nil {
		// The usual place is found without reading the rest, unescaped
		// once into a copy, as it outlives the record.
		t := ""
		if v := outputAt(c.result); v != nil {
			t, _ = jsonl.Text(v)
			c.plain = true
		} else if out := c.output(); isString(out) {
			t, _ = jsonl.Text(out)
		}
		c.txt = &t
	}
	return *c.txt
}

// plainOutput reports whether the tool answered with an output string (a
// read_file of a text file, not an image or an error).
func (c *tcall) plainOutput() bool {
	c.text()
	return c.plain
}

// first is the first line of the tool's answer, read from a bounded prefix
// unless the whole answer was read already.
func (c *tcall) first() string {
	if c.txt != nil {
		return emit.FirstLine(*c.txt)
	}
	h, _ := jsonl.Head(c.output(), 2048)
	return emit.FirstLine(h)
}

// call handles one tool call of a message: settled the first time it is
// seen in a final status, waiting until then. Calls that change no file are
// told apart first, from their name and command, before their (often
// large) results are read.
func (p *parser) call(at loc, msg string, tc []byte, f jsonl.Object) {
	// The first id, as gjson's Get finds it (readCall keeps the last).
	if id, ok := jsonl.Text(f.Raw("id")); !ok || id == "" || p.settled.Has(p.hash(id)) {
		return
	}
	c := readCall(f)
	pc := p.pending[c.id]
	var sh *shellcmd.Result
	var cmd string
	changes := relevant(c.name)
	if c.name == "run_shell_command" {
		cmd = c.arg().Get("command").Str
		if pc != nil && pc.sh != nil && pc.cmd == cmd {
			sh = pc.sh // the command read when the call was first seen
		} else {
			r := shellcmd.Parse(cmd)
			sh = &r
		}
		changes = sh.Writes()
	}
	if !final(c.status) {
		if pc == nil {
			pc = &pending{name: c.name, ts: c.ts, at: at, msg: strings.Clone(msg), seq: p.ncalls}
			p.ncalls++
			if p.h.Event != nil { // only a timeline shows it
				pc.target = target(c.arg(), c.argsRaw)
			}
			p.pending[strings.Clone(c.id)] = pc
		}
		if changes {
			pc.raw = bytes.Clone(tc)
		}
		if sh != nil {
			pc.cmd, pc.sh = cmd, sh
		}
		return
	}
	delete(p.pending, c.id)
	p.settled.Add(p.hash(c.id))
	p.span.Add(c.ts)
	if !p.cwdVerified {
		p.learn(&c)
	}
	if !changes && c.name != "read_file" && p.h.Event == nil {
		return
	}
	if c.name == "read_file" && c.status == "success" {
		c.text() // its content is evidence: read once, whole
	}
	o, why := outcome(&c, changes)
	if p.h.Event != nil {
		t, _ := time.Parse(time.RFC3339Nano, c.ts)
		p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: at.line, Tool: c.name, Target: target(c.arg(), c.argsRaw),
			CallID: c.id, Outcome: o, Detail: why, Ended: t})
	}
	if !changes && c.name != "read_file" {
		return
	}
	build, ok := p.opFor(at, &c, sh, o, why)
	if !ok {
		return
	}
	if c.name != "read_file" {
		p.ops[p.hash(msg)] = append(p.ops[p.hash(msg)], fmt.Sprintf("%s call %s (line %d)", c.name, c.id, at.line))
	}
	p.held = append(p.held, held{msg: strings.Clone(msg), build: build})
	p.flush(false)
}

// flush hands on the operations waiting for the working directory, once it
// is known (or, with force, at the end whatever is known).
func (p *parser) flush(force bool) {
	if p.cwd == "" && !force {
		return
	}
	for _, h := range p.held {
		if op, ok := h.build(p.cwd); ok {
			p.emit(op)
		}
	}
	p.held = p.held[:0]
}

// outcome classifies a finished call from its status (and, for a shell
// command that writes, its exit code, which Gemini reports as a success of
// the tool).
func outcome(c *tcall, changes bool) (manifest.Outcome, string) {
	first := c.first()
	switch c.status {
	case "error":
		return manifest.OutcomeFailed, "status error: " + first
	case "cancelled":
		if c.name == "run_shell_command" && changes && strings.Contains(c.text(), "before it could complete") {
			return manifest.OutcomeUnknown, "status cancelled while running: " + first
		}
		return manifest.OutcomeRejected, "status cancelled: " + first
	case "success":
	default:
		return manifest.OutcomeUnknown, "status " + c.status
	}
	if c.name == "run_shell_command" && changes {
		text := c.text()
		if strings.Contains(text, "was cancelled by user before it could complete") || strings.Contains(text, "automatically cancelled because it exceeded the timeout") {
			return manifest.OutcomeUnknown, "status success, but the command was stopped: " + first
		}
		if code, ok := exitCode(text); ok && code != "0" {
			return manifest.OutcomeFailed, "output: Exit Code: " + code
		}
	}
	return manifest.OutcomeApplied, "status success: " + first
}

// exitCode finds the "Exit Code: N" line of a shell command's output block.
func exitCode(text string) (string, bool) {
	for rest := text; ; {
		i := strings.Index(rest, "Exit Code: ")
		if i < 0 {
			return "", false
		}
		if i == 0 || rest[i-1] == '\n' {
			j := i + len("Exit Code: ")
			k := j
			if k < len(rest) && rest[k] == '-' {
				k++
			}
			for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
				k++
			}
			if k > j {
				return rest[j:k], true
			}
		}
		rest = rest[i+1:]
	}
}

func argPath(args *jsonl.Object) string {
	for _, k := range []string{"file_path", "absolute_path", "path"} {
		if v := args.Get(k); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}

// learn looks for the project root in a tool call: an absolute path the
// tool reports (its resultDisplay.filePath, its output's first line, an
// absolute argument), read up to the root whose sha256 is the session's
// projectHash, or, when that cannot be checked, as the absolute path less
// the relative one the model gave.
func (p *parser) learn(c *tcall) {
	if p.cwdVerified {
		return
	}
	rel := argPath(c.arg())
	var abs []string
	if fp := c.disp().Get("filePath"); fp.Type == gjson.String && path.IsAbs(fp.Str) {
		abs = append(abs, fp.Str)
	}
	if path.IsAbs(rel) {
		abs = append(abs, rel)
	}
	for _, k := range []string{"dir_path", "directory"} {
		if d := c.arg().Get(k).Str; path.IsAbs(d) {
			abs = append(abs, d)
		}
	}
	first := c.first()
	if i := strings.Index(first, ": /"); i >= 0 {
		rest := first[i+2:]
		if rel != "" && !path.IsAbs(rel) {
			suffix := "/" + path.Clean(rel)
			if j := strings.Index(rest, suffix); j > 0 {
				abs = append(abs, rest[:j+len(suffix)])
				if p.guess == "" {
					p.guess = strings.Clone(rest[:j])
				}
			}
		}
		if j := strings.IndexAny(rest, " \t"); j > 0 {
			abs = append(abs, strings.TrimRight(rest[:j], ".,;:"))
		}
	}
	for _, a := range abs {
		if p.tryRoot(a) {
			return
		}
	}
}

// tryRoot checks a path and its parents against the projectHash.
func (p *parser) tryRoot(a string) bool {
	if p.cwdVerified || p.projectHash == "" || !path.IsAbs(a) {
		return false
	}
	for d := path.Clean(a); ; d = path.Dir(d) {
		sum := sha256.Sum256([]byte(d))
		if hex.EncodeToString(sum[:]) == p.projectHash {
			p.cwd, p.cwdVerified = strings.Clone(d), true
			return true
		}
		if d == "/" {
			return false
		}
	}
}

// resolve makes a tool path absolute against the project root.
func resolve(cwd, p string) string {
	if p == "" {
		return ""
	}
	if path.IsAbs(p) || cwd == "" {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

// opFor returns how to build the operation of a finished file-changing
// call, once the working directory is known; ok is false for a call that
// changes no file.
func (p *parser) opFor(at loc, c *tcall, sh *shellcmd.Result, o manifest.Outcome, why string) (func(string) (manifest.Op, bool), bool) {
	args := c.arg()
	id, name := c.id, c.name
	t, _ := time.Parse(time.RFC3339Nano, c.ts)
	base := manifest.Op{Tool: name, Outcome: o, OutcomeEvidence: why, Identity: "gemini:" + id,
		Provenance: manifest.Provenance{Transcript: p.file, Line: at.line, Offset: at.offset, Time: t, CallID: id, Carrier: manifest.CarrierGemini}}
	rd := c.disp()
	switch name {
	case "write_file":
		fp := argPath(args)
		if fp == "" {
			p.warn(at, "%s call %s names no file", name, id)
			return nil, false
		}
		op := base
		op.Kind = manifest.KindWrite
		// Each of the whole files the call holds is unescaped once, and
		// only when it is used: originalContent not for a new file, the
		// content sent when Gemini recorded the one it wrote.
		var pre *string
		if s, ok := rd.Str("originalContent"); ok && !rd.Get("isNewFile").Bool() {
			pre = &s
		}
		content, ok := rd.Str("newContent")
		if ok {
			// Gemini writes CRLF when the file it overwrote had CRLF; the
			// recorded newContent is before that.
			if pre != nil && strings.Contains(*pre, "\r\n") {
				content = toCRLF(content)
			}
		} else {
			content, _ = args.Str("content")
			if strings.Contains(c.text(), "User modified the `content`") {
				op.Note = "the user modified the proposed content before accepting it, and the transcript does not record the content written"
				op.LowConfidence = true
			}
		}
		op.Content = &content
		return func(cwd string) (manifest.Op, bool) {
			op := op
			op.Cwd = cwd
			op.Paths = []string{resolve(cwd, fp)}
			if pre != nil {
				op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePre, Content: *pre, Source: "resultDisplay.originalContent"}}
			}
			return op, true
		}, true
	case "replace", "edit":
		fp := argPath(args)
		if fp == "" {
			p.warn(at, "%s call %s names no file", name, id)
			return nil, false
		}
		op := base
		op.Kind = manifest.KindEdit
		old, _ := args.Str("old_string")
		neu, _ := args.Str("new_string")
		e := manifest.Edit{Old: old, New: neu, ReplaceAll: args.Get("allow_multiple").Bool()}
		if n := args.Get("expected_replacements"); n.Exists() {
			e.Expected = int(n.Int())
			e.ReplaceAll = e.Expected > 1
		}
		op.Edits = []manifest.Edit{e}
		var pre, post *string
		if s, ok := rd.Str("originalContent"); ok && !rd.Get("isNewFile").Bool() {
			pre = &s
		}
		if s, ok := rd.Str("newContent"); ok {
			post = &s
		}
		if strings.Contains(c.text(), "User modified the `new_string`") {
			op.Note = "the user modified the proposed new_string before accepting it"
			if post == nil {
				op.LowConfidence = true
			}
		}
		return func(cwd string) (manifest.Op, bool) {
			op := op
			op.Cwd = cwd
			op.Paths = []string{resolve(cwd, fp)}
			if pre != nil {
				// Gemini reads the file with CRLF turned into LF.
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePre, Content: *pre, Source: "resultDisplay.originalContent", LFNormalized: true})
			}
			if post != nil {
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: *post, Source: "resultDisplay.newContent", LFNormalized: true})
			}
			return op, true
		}, true
	case "read_file":
		// A whole text file read shows its content (CRLF turned into LF,
		// no BOM): evidence, as Claude Code's full Read is. A partial or
		// shortened read says so in its display or output.
		fp := argPath(args)
		if o != manifest.OutcomeApplied || fp == "" || !c.plainOutput() || (c.display != nil && jsonl.Value(c.display).Str != "") {
			return nil, false
		}
		for _, k := range []string{"offset", "limit", "start_line", "end_line"} {
			if args.Get(k).Exists() {
				return nil, false
			}
		}
		content := c.text()
		if strings.HasPrefix(strings.TrimSpace(content), "IMPORTANT: The file content has been truncated") {
			return nil, false
		}
		op := base
		op.Kind = manifest.KindObserve
		return func(cwd string) (manifest.Op, bool) {
			op := op
			op.Cwd = cwd
			op.Paths = []string{resolve(cwd, fp)}
			op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: content, Source: "full-file read_file", LFNormalized: true}}
			return op, true
		}, true
	case "run_shell_command":
		cmd := args.Get("command").Str
		if sh == nil {
			r := shellcmd.Parse(cmd)
			sh = &r
		}
		if !sh.Writes() {
			return nil, false
		}
		dir := firstNonEmpty(args.Get("dir_path").Str, args.Get("directory").Str)
		op := base
		op.Kind = manifest.KindShell
		op.Command = cmd
		return func(cwd string) (manifest.Op, bool) {
			op := op
			op.Cwd = cwd
			if dir != "" {
				op.Cwd = resolve(cwd, dir)
			}
			shellcmd.Fill(&op, *sh, op.Cwd, resolve)
			return op, true
		}, true
	}
	return nil, false
}

func (p *parser) hash(id string) uint64 { return maphash.String(p.seed, id) }

// toCRLF turns every line end into CRLF, as Gemini CLI does when it keeps
// a file's CRLF line endings.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// rewind handles $rewindTo: the conversation loses that message and every
// one after it. Their operations happened on disk, so they stay in the
// replay, as Claude Code's rewound branches do; each is reported.
func (p *parser) rewind(at loc, id string) {
	i := -1
	want := p.hash(id)
	for k, m := range p.live {
		if m == want {
			i = k
			break
		}
	}
	if i < 0 {
		p.warn(at, "$rewindTo names message %s, which the conversation does not hold: Gemini CLI then drops the whole conversation", emit.Excerpt(id, 60))
		i = 0
	}
	for _, m := range p.live[i:] {
		for _, d := range p.ops[m] {
			p.warn(at, "$rewindTo %s: the conversation was rewound past the %s; it happened on disk and stays in the replay", emit.Excerpt(id, 60), d)
		}
		p.isLive.Del(m)
	}
	p.live = p.live[:i]
	// No timeline event: a rewind is neither a prompt (it would count as a
	// turn of --at and --to-branch) nor an abort (the session goes on); the
	// warnings above are how it is reported.
}

func (p *parser) emit(op manifest.Op) {
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
	if p.cwd == "" && p.guess != "" {
		p.cwd = p.guess
		p.warn(loc{line: 1}, "the project root %s is read from a tool's output and does not match the session's projectHash", p.guess)
	}
	if p.cwd == "" && len(p.held) > 0 {
		p.warn(loc{line: 1}, "the session does not say its project root: relative paths stay relative")
	}
	// Calls that never reached a final status: reported, not replayed.
	ids := make([]string, 0, len(p.pending))
	for id := range p.pending {
		ids = append(ids, id)
	}
	// In the order they were made: the calls of one message share a line,
	// and the map gives its ids in any order.
	sort.Slice(ids, func(a, b int) bool { return p.pending[ids[a]].seq < p.pending[ids[b]].seq })
	for _, id := range ids {
		pc := p.pending[id]
		if pc.raw != nil {
			c := readCall(jsonl.Fields(pc.raw))
			if build, ok := p.opFor(pc.at, &c, nil, manifest.OutcomeUnknown, "no final status: the call never finished (interrupted or crashed)"); ok {
				p.held = append(p.held, held{msg: pc.msg, build: build})
			}
		}
		if p.h.Event != nil {
			t, _ := time.Parse(time.RFC3339Nano, pc.ts)
			p.h.Event(manifest.Event{Kind: manifest.EventCall, Time: t, Line: pc.at.line, Tool: pc.name, Target: pc.target, CallID: id,
				Outcome: manifest.OutcomeUnknown, Detail: "no final status: still running when the transcript ends"})
		}
	}
	p.flush(true)
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.cwd
	s.Start = p.span.Start()
	s.End = p.span.End()
	truncated := false
	for _, w := range s.Warnings {
		truncated = truncated || w.Truncated()
	}
	switch {
	case truncated:
		s.EndState = manifest.EndTruncated
	case len(p.pending) > 0:
		s.EndState = manifest.EndInTool
	default:
		s.EndState = manifest.EndClean
	}
	p.header()
}

// target says briefly what a call works on.
func target(args *jsonl.Object, raw []byte) string {
	for _, k := range []string{"file_path", "absolute_path", "path", "dir_path", "command", "pattern", "url", "query", "prompt"} {
		if v := args.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return emit.Excerpt(jsonl.Canonical(string(raw)), 120)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// relevant reports whether a tool may change files.
func relevant(name string) bool {
	switch name {
	case "write_file", "replace", "edit", "run_shell_command":
		return true
	}
	return false
}
