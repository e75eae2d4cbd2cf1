package claude

import (
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

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/home"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Options tune a parse.
type Options struct {
	// Backup returns a file-history backup of a session by its file name
	// (<sha256(path)[:16]>@v<N>), when the backups are available.
	Backup func(sessionID, name string) ([]byte, bool)
}

// toolUse is a call waiting for its result.
type toolUse struct {
	name      string
	input     string // raw JSON, copied (not a slice of the line's copy, which it would keep whole)
	cwd       string
	line      int
	offset    int64
	time      string
	sidechain bool
	agent     string
	// seq is the call's place among the session's calls: the calls of one
	// message share its line.
	seq int
}

type parser struct {
	// warns keeps the first warnings of each kind and counts the rest.
	warns jsonl.Warner
	file  string
	opts  Options
	h     emit.Handler
	out   emit.Sequencer // numbers the operations, sends the header once
	sess  manifest.Session

	seed    maphash.Seed
	pending map[string]*toolUse
	ncalls  int // calls made so far (toolUse.seq)
	// calls are every tool call awaiting its result, for timeline events
	// (only when the handler wants events).
	calls   map[string]*manifest.Event
	settled jsonl.HashSet // calls settled, by the hash of their id
	// seen are the ids of every call read (by hash): a result of a call
	// not among them lost its call's line, and is read for what it says.
	seen jsonl.HashSet

	firstCwd   string
	span       span
	sessionIDs map[string]bool
	plain      []byte // reused by jsonl.Plain
	// tur is the toolUseResult of the line being read, split once for
	// all its results (readTurInto): it is kept by nothing past the line.
	tur struct {
		read bool // t is the line's (record clears it)
		t    turResult
	}

	// For the timeline only: the root of each sidechain message's chain
	// (a subagent of a session that names none), the Task calls by their
	// prompt, and the assistant messages whose token usage is counted.
	sideRoot map[string]string
	tasks    map[string]string
	usage    map[string]bool
}

// stream reads a Claude Code transcript from r and hands each operation to
// h as soon as its tool result is read. It returns the complete session.
func stream(ctx context.Context, r io.Reader, file string, opts Options, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, opts: opts, h: h, seed: maphash.MakeSeed(), pending: map[string]*toolUse{},
		sessionIDs: map[string]bool{}}
	p.sess = manifest.Session{Agent: manifest.AgentClaude, Transcript: file, ID: idFromFilename(file)}
	if h.Event != nil {
		p.calls = map[string]*manifest.Event{}
		p.sideRoot, p.tasks, p.usage = map[string]string{}, map[string]string{}, map[string]bool{}
	}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	readErr := rd.Each(ctx, p.record)
	p.finish(rd)
	return p.sess, readErr
}

var uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

func idFromFilename(file string) string {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	if m := uuidRe.FindString(base); m != "" {
		return m
	}
	for _, ext := range []string{".zst", ".gz", ".jsonl"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// markUse is the part of "tool_use" and "tool_use_id" that a line is
// searched for: its first byte, '_', is rare in JSON text, so the search
// skips through a line fast.
var markUse = []byte(`_use`)

// wanted reports whether a record can change anything but the session's
// time span: a file-history snapshot, or a message that holds a tool call
// or a result that a tracked call waits for. It decides on what the record
// says, not on how it is written: its type is read as a value, and names
// are searched for only once any \u escapes of them are spelled out. The
// Reader marks the strings that start with "tool_use" (jsonl.MarkWord) as
// it scans: a result that waits for nothing is told by its one mark, and
// the command output after it is never read here.
func (p *parser) wanted(rec jsonl.Record, typ []byte) bool {
	switch string(typ) {
	case "file-history-snapshot":
		return true
	case "assistant", "user", "progress":
	default:
		return false // the full read does nothing else with a record
	}
	data := rec.Data
	if rec.Escaped {
		if plain, ok := jsonl.Plain(data, p.plain); ok {
			data, p.plain = plain, plain[:0]
		}
		return p.toolLine(data)
	}
	first, n, ok := rec.Marks()
	switch {
	case !ok:
		return p.toolLine(data)
	case n == 0:
		return false // no string starts with "tool_use"
	case n == 1:
		// One: decided there. A result's output is not read.
		return p.toolAt(data[first+len(`"tool_use`):])
	}
	return p.toolLine(data[first:])
}

// toolLine reports whether a line has a "tool_use" string (a call, in any
// message or mirror) or a "tool_use_id" key whose value a tracked call
// waits for. Result lines are the largest of a session (file contents,
// command output), and most answer calls that change nothing.
func (p *parser) toolLine(data []byte) bool {
	for i := 0; ; {
		k := bytes.Index(data[i:], markUse)
		if k < 0 {
			return false
		}
		i += k + len(markUse)
		if i-len(markUse) < len(`"tool`) || string(data[i-len(markUse)-len(`"tool`):i-len(markUse)]) != `"tool` {
			continue
		}
		if p.toolAt(data[i:]) {
			return true
		}
	}
}

// toolAt tells, from what follows a `"tool_use` in a line, whether it is a
// "tool_use" string (a call) or a "tool_use_id" key whose value a tracked
// call waits for; a string that only starts so is neither.
func (p *parser) toolAt(rest []byte) bool {
	switch {
	case len(rest) > 0 && rest[0] == '"':
		return true // "tool_use": a call
	case bytes.HasPrefix(rest, []byte(`_id"`)):
		return p.waited(rest[len(`_id"`):])
	}
	return false
}

// waited reads the value after a "tool_use_id" key (b starts just after
// the key) and reports whether a tracked call waits for it.
func (p *parser) waited(b []byte) bool {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) || b[i] != ':' {
		return false // not a key
	}
	i++
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) || b[i] != '"' {
		return false // not a string: the full read takes it as no id
	}
	end := i + 1
	for {
		k := bytes.IndexByte(b[end:], '"')
		if k < 0 {
			return true // malformed: let the full parse decide
		}
		end += k
		bs := 0
		for m := end - 1; m > i && b[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			break
		}
		end++
	}
	id, ok := jsonl.String(b[i : end+1])
	if !ok {
		return true
	}
	_, pending := p.pending[string(id)]
	// A result whose call was never read lost the call's line: what it
	// says of the file is read.
	return pending || !p.seen.Has(p.hash(string(id)))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// record handles one line. Most lines of a session (thinking, text,
// prompts, hook progress) can hold no tool call or result: their type and a
// byte search tell them, and only their timestamp is read. The others are
// read in one pass over their top-level fields. Either way a top-level key
// named twice counts the last time.
func (p *parser) record(rec jsonl.Record) {
	data := rec.Data
	p.tur.read = false
	// Read in place (below), the line is the only memory whose strings
	// an operation must copy; read through a copy for the timeline, every
	// string is copied (its events keep the copy).
	p.out.Line = nil
	if p.calls == nil {
		p.out.Line = data
	}
	if p.firstCwd == "" || p.sess.AgentVersion == "" {
		p.envelope(rec)
	}
	if p.calls == nil {
		// A type the quick read cannot take (none, or a value with bytes
		// after it that no JSON allows) goes to the full read, which reads
		// it as a timeline does (gjson takes the first value it finds) and
		// says when there is none: dismissed here, a damaged line's call
		// was lost in place and kept with a timeline.
		if typ, ok := jsonl.String(rec.Field("type")); ok && len(typ) > 0 && !p.wanted(rec, typ) {
			ts, _ := jsonl.String(rec.Field("timestamp"))
			stamp(&p.span, ts)
			return
		}
	}
	var typ, cwd, agent, ts, uuid, parent, subtype, parentTool string
	var sid []byte
	var side bool
	var message, tur, dat, snap gjson.Result
	var update bool
	// The values read below are slices of the line; each top-level value is
	// found from the key offsets, not by parsing the values before it. The
	// line is read in place when only operations come of it (Op.Own copies
	// what they keep, and the parser clones what it keeps itself), and
	// copied once when the timeline's events, which keep text as read, do
	// too. The tests poison each record once read (testhook.Poison).
	var line string
	if p.calls == nil {
		line = zerocopy.String(data)
	} else {
		line = string(data)
	}
	rec.EachField(func(name []byte, start, end int) {
		v := func() gjson.Result { return jsonl.Parse(line[start:end]) }
		switch string(name) {
		case "type":
			typ = v().Str
		case "cwd":
			cwd = v().Str
		case "isSidechain":
			side = v().Bool()
		case "agentId":
			agent = v().Str
		case "timestamp":
			ts = v().Str
		case "message":
			message = v()
		case "toolUseResult":
			tur = v()
		case "data":
			dat = v()
		case "snapshot":
			snap = v()
		case "isSnapshotUpdate":
			update = v().Bool()
		case "sessionId":
			// Read as the envelope reads it (jsonl.String): gjson stops
			// at a bad escape and gave a cut id, so that a damaged first
			// line named the session differently with and without a
			// timeline.
			if id, ok := jsonl.String(data[start:end]); ok {
				sid = id
			}
		case "uuid":
			uuid = v().Str
		case "parentUuid":
			parent = v().Str
		case "subtype":
			subtype = v().Str
		case "parentToolUseID":
			parentTool = v().Str
		}
	})
	p.sessionID(sid)
	stamp(&p.span, ts)
	if p.calls != nil {
		if side && agent == "" {
			agent = p.chain(uuid, parent)
		}
		if side && parent == "" && typ == "user" {
			p.spawned(promptOf(message.Get("content")), agent)
		}
		if typ == "assistant" {
			p.tokens(message)
		}
		if typ == "system" && subtype == "compact_boundary" {
			t, _ := time.Parse(time.RFC3339Nano, ts)
			text := "the conversation was compacted"
			if m := gjson.GetBytes(data, "compactMetadata"); m.Exists() {
				text += fmt.Sprintf(" (%s, %d tokens before)", emit.Excerpt(m.Get("trigger").String(), 40), m.Get("preTokens").Int())
			}
			p.h.Event(manifest.Event{Kind: manifest.EventCompact, Time: t, Line: rec.Line, Text: text, Sidechain: side, Agent: agent})
		}
	}
	switch typ {
	case "assistant":
		md := jsonl.DocOfResult(message)
		p.message(rec, typ, &md, gjson.Result{}, cwd, ts, side, agent)
	case "user":
		md := jsonl.DocOfResult(message)
		p.message(rec, typ, &md, tur, cwd, ts, side, agent)
	case "progress":
		if dat.Get("type").Str == "agent_progress" {
			// A subagent's messages mirrored into the parent file (2.1.x).
			m := dat.Get("message")
			if p.calls != nil {
				if ev := p.calls[parentTool]; ev != nil && ev.Subagent == "" {
					ev.Subagent = strings.Clone(dat.Get("agentId").Str)
				}
			}
			md := jsonl.DocOfResult(m.Get("message"))
			p.message(rec, m.Get("type").Str, &md, gjson.Result{}, cwd, firstNonEmpty(m.Get("timestamp").Str, ts), true, dat.Get("agentId").Str)
		}
	case "file-history-snapshot":
		p.snapshot(rec, snap, update)
	case "":
		p.warn(rec, "record has no \"type\"")
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// envelope takes the session's cwd and version from its first lines.
func (p *parser) envelope(rec jsonl.Record) {
	if p.firstCwd == "" {
		if c, _ := jsonl.String(rec.Field("cwd")); len(c) > 0 {
			p.firstCwd = string(c)
			// The branch is stamped on the same lines as the cwd.
			b, _ := jsonl.String(rec.Field("gitBranch"))
			p.sess.GitBranch = string(b)
		}
	}
	if p.sess.AgentVersion == "" {
		v, _ := jsonl.String(rec.Field("version"))
		p.sess.AgentVersion = string(v)
	}
	id, _ := jsonl.String(rec.Field("sessionId"))
	p.sessionID(id)
}

// sessionID notes a session id seen on a line; a file not named by its
// session (a subagent's, a copy) takes the first one.
func (p *parser) sessionID(id []byte) {
	if len(id) == 0 || p.sessionIDs[string(id)] {
		return
	}
	p.sessionIDs[string(id)] = true
	if len(p.sessionIDs) == 1 && !uuidRe.MatchString(path.Base(p.file)) {
		p.sess.ID = string(id)
	}
}

// message handles the content blocks of an assistant or user message (md,
// the message object: its content is read as gjson reads it, and in place,
// each block split once, where the message is JSON throughout).
func (p *parser) message(rec jsonl.Record, typ string, md *jsonl.Doc, tur gjson.Result, cwd, ts string, side bool, agent string) {
	content := md.Get("content")
	if p.calls != nil && typ == "user" {
		p.userText(rec, content, ts, side)
	}
	if !content.IsArray() {
		return
	}
	md.Each("content", func(b gjson.Result, e jsonl.Doc) bool {
		switch e.Get("type").Str {
		case "text":
			if p.calls != nil && typ == "assistant" {
				if text, cut := manifest.CutText(e.Get("text").Str, manifest.OutputMax); text != "" {
					t, _ := time.Parse(time.RFC3339Nano, ts)
					p.h.Event(manifest.Event{Kind: manifest.EventMessage, Time: t, Line: rec.Line, Text: text, OutputCut: cut,
						Sidechain: side, Agent: strings.Clone(agent)})
				}
			}
		case "tool_use":
			if typ != "assistant" {
				return true
			}
			id, name := e.Get("id").Str, e.Get("name").Str
			if id != "" {
				p.seen.Add(p.hash(id))
			}
			if p.calls != nil && id != "" && p.calls[id] == nil && !p.settled.Has(p.hash(id)) {
				t, _ := time.Parse(time.RFC3339Nano, ts)
				ev := &manifest.Event{Kind: manifest.EventCall, Time: t, Line: rec.Line, Tool: strings.Clone(name),
					Target: toolTarget(name, e.Get("input")), CallID: strings.Clone(id), Outcome: manifest.OutcomeUnknown, Sidechain: side,
					Agent: strings.Clone(agent)}
				switch name {
				case "TodoWrite":
					for _, td := range b.Get("input.todos").Array() {
						ev.Todos = append(ev.Todos, manifest.Todo{Text: emit.Excerpt(td.Get("content").String(), 300), Status: emit.Excerpt(td.Get("status").String(), 40)})
					}
				case "Task", "Agent":
					if pr := b.Get("input.prompt").Str; pr != "" {
						p.tasks[strings.TrimSpace(pr)] = ev.CallID
					}
				}
				p.calls[ev.CallID] = ev
			}
			if !relevant(name) || id == "" {
				return true
			}
			if p.settled.Has(p.hash(id)) || p.pending[id] != nil {
				return true // a copy (compaction replay, mirror, resumed history)
			}
			if name == "Bash" || name == "PowerShell" {
				if cmd := jsonl.Field(e.Get("input"), "command").Str; !shellcmd.Parse(cmd).Writes() && (name != "Bash" || catFile(cmd) == "" && !gitDiffCmd(cmd)) {
					p.settled.Add(p.hash(id)) // runs something, writes nothing we can see
					return true
				}
			}
			p.pending[strings.Clone(id)] = &toolUse{name: strings.Clone(name), input: strings.Clone(e.Get("input").Raw), cwd: strings.Clone(cwd),
				line: rec.Line, offset: rec.Offset, time: strings.Clone(ts), sidechain: side, agent: strings.Clone(agent), seq: p.ncalls}
			p.ncalls++
		case "tool_result":
			id := e.Get("tool_use_id").Str
			ev, tu := p.calls[id], p.pending[id]
			if ev == nil && tu == nil {
				if typ != "user" || id == "" || p.seen.Has(p.hash(id)) {
					return true // a copy, or a mirror of a subagent's
				}
				p.seen.Add(p.hash(id))
				tr := p.readTur(tur)
				if tu = rebuiltUse(tr, cwd, ts, rec, side, agent); tu != nil {
					p.warn(rec, "the result of call %s is here but not its call (a line lost?): its %s of %s is rebuilt from the result", id, tu.name,
						tr.Get("filePath").Str)
					p.settled.Add(p.hash(id))
					p.result(rec, id, tu, b, tr)
				} else {
					p.warn(rec, "the result of call %s is here but not its call (a line lost?): what the call did cannot be told", id)
				}
				return true
			}
			tr := p.readTur(tur)
			if ev != nil {
				delete(p.calls, id)
				ev.Outcome, ev.Detail = outcome(ev.Tool, b, tr)
				ev.Ended, _ = time.Parse(time.RFC3339Nano, ts)
				ev.Output, ev.OutputCut = manifest.CutText(resultText(b), manifest.OutputMax)
				if a := tr.Get("agentId"); ev.Subagent == "" && a.Type == gjson.String {
					ev.Subagent = strings.Clone(a.Str)
				}
				p.h.Event(*ev)
			}
			if tu == nil {
				return true
			}
			delete(p.pending, id)
			p.settled.Add(p.hash(id))
			p.result(rec, id, tu, b, tr)
		}
		return true
	})
}

func (p *parser) hash(id string) uint64 { return maphash.String(p.seed, id) }

// rebuiltUse is the call a result answers, as the result tells it, when
// the call's own line is lost: a Write (the content written) or an Edit
// (the strings replaced) of the file it names, or nil when it tells
// neither. Claude Code records both in the result's toolUseResult.
func rebuiltUse(tr *turResult, cwd, ts string, rec jsonl.Record, side bool, agent string) *toolUse {
	fp := tr.Get("filePath")
	if fp.Type != gjson.String || fp.Str == "" {
		return nil
	}
	var name string
	var in any
	c, old, nw := tr.Get("content"), tr.Get("oldString"), tr.Get("newString")
	switch t := tr.Get("type").Str; {
	case (t == "create" || t == "update") && c.Type == gjson.String:
		name, in = "Write", map[string]any{"file_path": fp.Str, "content": c.Str}
	case old.Type == gjson.String && nw.Type == gjson.String:
		name, in = "Edit", map[string]any{"file_path": fp.Str, "old_string": old.Str, "new_string": nw.Str, "replace_all": tr.Get("replaceAll").Bool()}
	default:
		return nil
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil
	}
	return &toolUse{name: name, input: string(raw), cwd: strings.Clone(cwd), line: rec.Line, offset: rec.Offset, time: strings.Clone(ts),
		sidechain: side, agent: strings.Clone(agent)}
}

// userText emits a user turn, or an interruption, for the timeline.
func (p *parser) userText(rec jsonl.Record, content gjson.Result, ts string, side bool) {
	var text string
	switch {
	case content.Type == gjson.String:
		text = content.Str
	case content.IsArray():
		content.ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "text" {
				text += b.Get("text").Str
			}
			return true
		})
	}
	text = strings.TrimSpace(text)
	if text == "" || side {
		return
	}
	t, _ := time.Parse(time.RFC3339Nano, ts)
	if strings.HasPrefix(text, "[Request interrupted by user") {
		p.h.Event(manifest.Event{Kind: manifest.EventAborted, Time: t, Line: rec.Line, Text: "interrupted by the user: " + emit.Excerpt(text, 120)})
		return
	}
	if strings.HasPrefix(text, "<command-") || strings.HasPrefix(text, "<local-command") || strings.HasPrefix(text, "Caveat:") {
		return
	}
	p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: t, Line: rec.Line, Text: emit.Excerpt(text, 200)})
}

// toolTarget says briefly what a call works on.
func toolTarget(name string, in gjson.Result) string {
	for _, k := range []string{"file_path", "notebook_path", "path", "command", "pattern", "url", "description", "prompt"} {
		if v := in.Get(k); v.Type == gjson.String && v.Str != "" {
			return emit.Excerpt(v.Str, 160)
		}
	}
	return emit.Excerpt(jsonl.Canonical(in.Raw), 120)
}

func relevant(name string) bool {
	switch name {
	case "Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "PowerShell", "Read":
		return true
	}
	return false
}

var (
	successText = regexp.MustCompile(`^(File created successfully at: |The file .+ has been updated|Applied \d+ edits? to |Updated cell |Inserted cell |Deleted cell )`)
	rejections  = []string{
		"The user doesn't want to proceed", "The user doesn't want to take this action", "User rejected tool use",
		"tool use was rejected", "Permission to use", "Permission for this tool use was denied",
		"Execution stopped by PreToolUse hook", "haven't granted it yet",
	}
)

// resultText joins a tool_result's content (a string, or text blocks).
func resultText(b gjson.Result) string {
	c := jsonl.Field(b, "content")
	if c.Type == gjson.String {
		return c.Str
	}
	var sb strings.Builder
	c.ForEach(func(_, x gjson.Result) bool {
		if x.Get("type").Str == "text" {
			sb.WriteString(x.Get("text").Str)
		}
		return true
	})
	return sb.String()
}

// head returns the first bytes of a result: rejections, errors and
// success lines are all at the start, and tool outputs can be megabytes.
// The bound is on the text, not on how the transcript spells it (a
// character may take up to six bytes as an escape), so that every spelling
// of a result reads alike.
func head(b gjson.Result) string { return headN(b, 2048) }

// headN is head of at most n bytes.
func headN(b gjson.Result, n int) string {
	c, ok := rawField(b, "content") // as written: not unescaped whole
	if !ok {
		c = b.Get("content").Raw
	}
	if len(c) > 0 && c[0] == '"' {
		if len(c) > 6*n+2 {
			return boundedHead(c, n)
		}
		t := gjson.Parse(c).Str
		if len(t) > n {
			t = t[:n]
		}
		return t
	}
	t := resultText(b)
	if len(t) > n {
		t = t[:n]
	}
	return t
}

// boundedHead returns at most the first n bytes of the text of the long
// JSON string raw, unescaping a bounded prefix of it.
func boundedHead(raw string, n int) string {
	// Cut before any escape the cut would split.
	cut := 6 * n
	if k := strings.LastIndexByte(raw[cut-12:cut], '\\'); k >= 0 {
		k += cut - 12
		bs := 0
		for m := k; m > 0 && raw[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 1 {
			cut = k // raw[k] starts an escape: leave it out
		}
	}
	t := gjson.Parse(raw[:cut] + `"`).Str
	if len(t) > n {
		t = t[:n]
	}
	return t
}

// rawField returns the value of the first field name of the object b as
// written (a substring of b.Raw), when jsonl finds it.
func rawField(b gjson.Result, name string) (string, bool) {
	if !b.IsObject() {
		return "", false
	}
	return jsonl.RawIn(b.Raw, name)
}

// turNames are the fields of a toolUseResult that outcome and result read.
var turNames = [...]string{"agentId", "filePath", "notebook_path", "error", "file", "type", "content", "originalFile",
	"oldString", "newString", "replaceAll", "userModified", "edits", "originalFileContents", "original_file", "updated_file"}

// turResult is a toolUseResult with its fields found in one pass: a Get
// of each would scan the object from its start, past the whole file it
// quotes (originalFile), every time.
type turResult struct {
	gjson.Result
	fields [len(turNames)]gjson.Result
}

// readTur reads the fields of turNames from tur. As with gjson's Get, the
// first of a key named twice counts, and a value that is not an object
// has no fields. The object is split by jsonl (its strings skipped with
// IndexByte) and only the fields named are read, in place: a gjson ForEach
// read every value, unescaping whole files (originalFile, content) that no
// one asked for. The fields are what the ForEach gave, damaged or not
// (FuzzReadTur): an object jsonl does not read whole is read by it.
func readTur(tur gjson.Result) *turResult {
	t := new(turResult)
	readTurInto(t, tur)
	return t
}

// p.readTur is readTur into the parser's one turResult, read once a line:
// every result of a line reads the same toolUseResult (a message can
// answer several calls), and a fresh one of turNames' size for each cost
// an allocation of a kilobyte and a half per result.
func (p *parser) readTur(tur gjson.Result) *turResult {
	if !p.tur.read {
		readTurInto(&p.tur.t, tur)
		p.tur.read = true
	}
	return &p.tur.t
}

// readTurInto is readTur into t, which it clears first.
func readTurInto(t *turResult, tur gjson.Result) {
	*t = turResult{Result: tur}
	if !tur.IsObject() {
		return
	}
	o, whole := jsonl.In(tur.Raw)
	if !whole {
		readTurForEachInto(t, tur) // damaged: gjson's reading, as before
		return
	}
	for i, n := range turNames {
		if raw := o.Raw(n); raw != nil {
			t.fields[i] = jsonl.ValueIn(tur.Raw, raw)
		}
	}
}

// readTurForEach is readTur through one gjson ForEach over the object,
// which reads every value: for an object jsonl does not read whole.
func readTurForEach(tur gjson.Result) *turResult {
	t := new(turResult)
	readTurForEachInto(t, tur)
	return t
}

func readTurForEachInto(t *turResult, tur gjson.Result) {
	*t = turResult{Result: tur}
	if !tur.IsObject() {
		return
	}
	var seen [len(turNames)]bool
	tur.ForEach(func(k, v gjson.Result) bool {
		for i, n := range turNames {
			if k.Str == n && !seen[i] {
				seen[i], t.fields[i] = true, v
				break
			}
		}
		return true
	})
}

// Get returns the field name (one of turNames, or it is looked up).
func (t *turResult) Get(name string) gjson.Result {
	for i, n := range turNames {
		if n == name {
			return t.fields[i]
		}
	}
	return t.Result.Get(name)
}

// outcome classifies a result (formats/claude.md §3.6).
func outcome(name string, b gjson.Result, tur *turResult) (manifest.Outcome, string) {
	if !b.Exists() {
		return manifest.OutcomeUnknown, "no tool_result: the call never finished (interrupted or crashed)"
	}
	text := head(b)
	isErr := b.Get("is_error").Bool()
	turText := ""
	if tur.Type == gjson.String {
		turText = tur.Str
	}
	for _, r := range rejections {
		if strings.Contains(text, r) || strings.Contains(turText, r) {
			return manifest.OutcomeRejected, "tool_result: " + emit.FirstLine(text)
		}
	}
	switch {
	case isErr:
		return manifest.OutcomeFailed, "tool_result is_error: " + emit.FirstLine(text)
	case strings.HasPrefix(text, "<tool_use_error>"):
		return manifest.OutcomeFailed, "tool_result: " + emit.FirstLine(text)
	case tur.Exists() && !tur.IsObject():
		return manifest.OutcomeFailed, "toolUseResult: " + emit.FirstLine(turText)
	}
	switch name {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
	default:
		// Only the file tools must show that they wrote; for the others, no error is success.
		return manifest.OutcomeApplied, "tool_result without error"
	}
	if tur.IsObject() && (tur.Get("filePath").Exists() || tur.Get("notebook_path").Exists()) {
		if e := tur.Get("error"); e.Type == gjson.String && e.Str != "" {
			return manifest.OutcomeFailed, "toolUseResult error: " + emit.FirstLine(e.Str)
		}
		return manifest.OutcomeApplied, "toolUseResult object"
	}
	if successText.MatchString(text) {
		return manifest.OutcomeApplied, "tool_result: " + emit.FirstLine(text)
	}
	return manifest.OutcomeUnknown, "tool_result not recognised: " + emit.FirstLine(text)
}

// resolve makes a tool path absolute against the line's cwd.
func resolve(cwd, p string) string {
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

func (p *parser) newOp(tu *toolUse, id string, kind manifest.OpKind, filePath string) manifest.Op {
	t, _ := time.Parse(time.RFC3339Nano, tu.time)
	carrier := "tool_use"
	if tu.sidechain {
		carrier = "subagent_tool_use"
	}
	op := manifest.Op{Kind: kind, Tool: tu.name, Cwd: tu.cwd, Identity: "claude:" + id,
		Provenance: manifest.Provenance{Transcript: p.file, Line: tu.line, Offset: tu.offset, Time: t, CallID: id, TurnID: tu.agent, Carrier: carrier}}
	if filePath != "" {
		op.Paths = []string{resolve(tu.cwd, filePath)}
	}
	return op
}

// fileOp starts the operation of a file tool's call; a call that names no
// file (a malformed or hand-edited record) is a warning with its line, never
// an operation, so nothing after it can index a path that is not there.
func (p *parser) fileOp(rec jsonl.Record, tu *toolUse, id string, kind manifest.OpKind, filePath string) (manifest.Op, bool) {
	if filePath == "" {
		p.warn(rec, "%s call %s names no file", tu.name, id)
		return manifest.Op{}, false
	}
	return p.newOp(tu, id, kind, filePath), true
}

// result builds the operation of a finished call and hands it on.
func (p *parser) result(rec jsonl.Record, id string, tu *toolUse, b gjson.Result, tur *turResult) {
	in := gjson.Parse(tu.input)
	// Most calls of a session read or run things: tell them first, before
	// looking at their (often large) results.
	var sh shellcmd.Result
	switch tu.name {
	case "Bash", "PowerShell":
		cmd := in.Get("command").Str
		if sh = shellcmd.Parse(cmd); !sh.Writes() {
			if name := catFile(cmd); tu.name == "Bash" && name != "" {
				p.catEvidence(rec, tu, id, name, b, tur)
			} else if tu.name == "Bash" && gitDiffCmd(cmd) {
				p.diffEvidence(rec, tu, id, b, tur)
			}
			return
		}
	case "Read":
		if tur.Get("type").Str != "text" || tur.Get("file").Get("content").Type != gjson.String {
			return
		}
	}
	o, why := outcome(tu.name, b, tur)
	obj := tur.IsObject()
	var op manifest.Op
	ok := true
	switch tu.name {
	case "Write":
		fp := firstNonEmpty(tur.Get("filePath").Str, in.Get("file_path").Str)
		if op, ok = p.fileOp(rec, tu, id, manifest.KindWrite, fp); !ok {
			return
		}
		var content string
		if c := tur.Get("content"); obj && c.Type == gjson.String {
			content = c.Str // what was written; the input is not read
		} else {
			content = jsonl.Field(in, "content").Str
		}
		op.Content = &content
		if orig := tur.Get("originalFile"); orig.Type == gjson.String {
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePre, Content: orig.Str, Source: "toolUseResult.originalFile", LFNormalized: true})
		}
	case "Edit":
		fp := firstNonEmpty(tur.Get("filePath").Str, in.Get("file_path").Str)
		if op, ok = p.fileOp(rec, tu, id, manifest.KindEdit, fp); !ok {
			return
		}
		// What ran can differ from what the model asked (user edits,
		// hooks): the result's strings count, the input's where it has
		// none (read only then: each is a part of a file, unescaped).
		ind := jsonl.DocOfResult(in)
		asked := func(v gjson.Result, ok bool, name string) gjson.Result {
			if obj && ok {
				return v
			}
			return ind.Get(name)
		}
		old, nw, all := tur.Get("oldString"), tur.Get("newString"), tur.Get("replaceAll")
		e := manifest.Edit{Old: asked(old, old.Type == gjson.String, "old_string").Str, New: asked(nw, nw.Type == gjson.String, "new_string").Str,
			ReplaceAll: asked(all, all.Exists(), "replace_all").Bool()}
		op.Edits = []manifest.Edit{e}
		if orig := tur.Get("originalFile"); orig.Type == gjson.String {
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePre, Content: orig.Str, Source: "toolUseResult.originalFile", LFNormalized: true})
		}
		if tur.Get("userModified").Bool() {
			op.Note = "the user modified the proposed edit before accepting it"
		}
	case "MultiEdit":
		fp := firstNonEmpty(tur.Get("filePath").Str, in.Get("file_path").Str)
		if op, ok = p.fileOp(rec, tu, id, manifest.KindEdit, fp); !ok {
			return
		}
		edits := in.Get("edits")
		if obj && tur.Get("edits").IsArray() {
			edits = tur.Get("edits")
		}
		edits.ForEach(func(_, e gjson.Result) bool {
			op.Edits = append(op.Edits, manifest.Edit{Old: e.Get("old_string").Str, New: e.Get("new_string").Str, ReplaceAll: e.Get("replace_all").Bool()})
			return true
		})
		if orig := tur.Get("originalFileContents"); orig.Type == gjson.String {
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePre, Content: orig.Str, Source: "toolUseResult.originalFileContents", LFNormalized: true})
		}
	case "NotebookEdit":
		fp := firstNonEmpty(tur.Get("notebook_path").Str, in.Get("notebook_path").Str)
		if op, ok = p.fileOp(rec, tu, id, manifest.KindNotebook, fp); !ok {
			return
		}
		op.Notebook = &manifest.NotebookCell{CellID: in.Get("cell_id").Str, NewSource: in.Get("new_source").Str,
			CellType: in.Get("cell_type").Str, EditMode: in.Get("edit_mode").Str}
		if v := tur.Get("original_file"); v.Type == gjson.String {
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePre, Content: v.Str, Source: "toolUseResult.original_file"})
		}
		if v := tur.Get("updated_file"); v.Type == gjson.String {
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: v.Str, Source: "toolUseResult.updated_file"})
		}
	case "Bash", "PowerShell":
		cmd := in.Get("command").Str
		op = p.newOp(tu, id, manifest.KindShell, "")
		op.Command = cmd
		shellcmd.Fill(&op, sh, tu.cwd, resolve)
	case "Read":
		f := tur.Get("file")
		if o != manifest.OutcomeApplied || f.Get("content").Type != gjson.String {
			return
		}
		if op, ok = p.fileOp(rec, tu, id, manifest.KindObserve, firstNonEmpty(f.Get("filePath").Str, in.Get("file_path").Str)); !ok {
			return
		}
		start, n, total := f.Get("startLine").Int(), f.Get("numLines").Int(), f.Get("totalLines").Int()
		switch {
		case start == 1 && n == total:
			op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: f.Get("content").Str, Source: "full-file Read", LFNormalized: true, NoFinalNewline: true}}
		case start >= 1 && n >= 1 && total >= start+n-1 && total <= 1<<31:
			// Lines start..start+n-1 of the file as it was: checked
			// against the replay, never a base.
			op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePartial, Content: f.Get("content").Str,
				Source: fmt.Sprintf("partial Read (lines %d-%d of %d)", start, start+n-1, total), LFNormalized: true,
				StartLine: int(start), TotalLines: int(total)}}
		default:
			return // numbers that place the lines nowhere
		}
	default:
		return
	}
	if len(op.Paths) == 0 && op.Kind != manifest.KindShell {
		p.warn(rec, "%s call %s names no file", tu.name, id)
		return
	}
	op.Outcome, op.OutcomeEvidence = o, why
	if !obj && tu.sidechain && o == manifest.OutcomeApplied && op.Kind != manifest.KindShell && op.Kind != manifest.KindObserve {
		op.OutcomeEvidence += " (subagent call: no toolUseResult, the input is what was asked)"
	}
	p.emit(op)
}

// catFile is the file a command prints whole when it is "cat FILE" and
// nothing else, FILE one literal word; "" otherwise (the output of
// anything more cannot be placed in one file).
func catFile(cmd string) string {
	if !strings.HasPrefix(cmd, "cat ") {
		return ""
	}
	f := strings.Fields(cmd)
	if len(f) != 2 || f[1][0] == '-' || strings.ContainsAny(f[1], "$`\"'\\*?[]{}<>|&;()~!#") {
		return ""
	}
	return f[1]
}

// catMax is the length of Bash output past which Claude Code may have cut
// it: longer output is no evidence of a whole file.
const catMax = 25000

// catEvidence takes a Bash call that printed one file whole, "cat FILE"
// and nothing else, that succeeded with nothing on stderr and output short
// of any cut, as partial evidence of the file from its first line: Claude
// Code trims the output's trailing newlines, so it says nothing of how the
// file ends. Lines that disagree with the replay are drift.
func (p *parser) catEvidence(rec jsonl.Record, tu *toolUse, id, name string, b gjson.Result, tur *turResult) {
	o, why := outcome("Bash", b, tur)
	out := tur.Get("stdout")
	if o != manifest.OutcomeApplied || !tur.IsObject() || out.Type != gjson.String || tur.Get("stderr").Str != "" ||
		tur.Get("interrupted").Bool() || len(out.Str) >= catMax || strings.Contains(out.Str, "truncated") {
		return
	}
	op, ok := p.fileOp(rec, tu, id, manifest.KindObserve, name)
	if !ok {
		return
	}
	op.Evidence = []manifest.Evidence{{Path: op.Paths[0], Kind: manifest.EvidencePartial, Content: out.Str,
		Source: "cat output", LFNormalized: true, StartLine: 1}}
	op.Outcome, op.OutcomeEvidence = o, why
	p.emit(op)
}

func (p *parser) emit(op manifest.Op) {
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

func (p *parser) header() { p.out.Header(p.h, p.headerSession) }

// headerSession is the header's session: its working directory and
// start are known by the time the first operation is settled.
func (p *parser) headerSession() manifest.Session {
	s := p.sess
	s.Cwd = p.firstCwd
	s.Start = timeOf(p.span.first)
	return s
}

// snapshot turns a file-history-snapshot into evidence: a v1 backup is the
// file before the session first changed it; a later version, in a snapshot
// taken at a user prompt, is the file at that prompt.
func (p *parser) snapshot(rec jsonl.Record, snap gjson.Result, update bool) {
	sd := jsonl.DocOfResult(snap) // its time is after the files it tracks
	stamp(&p.span, sd.Get("timestamp").Str)
	if p.opts.Backup == nil || p.firstCwd == "" {
		return
	}
	type tracked struct {
		path    string
		backup  string
		version int64
	}
	var files []tracked
	sd.Get("trackedFileBackups").ForEach(func(k, v gjson.Result) bool {
		files = append(files, tracked{k.String(), v.Get("backupFileName").Str, v.Get("version").Int()})
		return true
	})
	sort.Slice(files, func(a, b int) bool { return files[a].path < files[b].path })
	for _, f := range files {
		abs := resolve(p.firstCwd, f.path)
		if f.version != 1 && update {
			continue // amended mid-turn: only its v1 entries are new
		}
		ev := manifest.Evidence{Path: abs, Source: "file-history " + f.backup}
		switch {
		case f.backup == "" && f.version == 1:
			ev.Kind, ev.Absent, ev.Source = manifest.EvidenceBase, true, "file-history (no backup: the file did not exist)"
		case f.backup == "":
			continue // deleted at this prompt; the deletion itself is not a tool call
		default:
			if !strings.HasPrefix(f.backup, backupName(abs)) {
				p.warn(rec, "file-history backup %s does not match the hash of %s", f.backup, abs)
			}
			data, ok := p.opts.Backup(p.sess.ID, f.backup)
			if !ok {
				continue
			}
			ev.Content = string(data)
			ev.Kind = manifest.EvidencePost
			if f.version == 1 {
				ev.Kind = manifest.EvidenceBase
			}
		}
		t := timeOf(p.span.last)
		op := manifest.Op{Kind: manifest.KindObserve, Tool: "file-history", Cwd: p.firstCwd, Paths: []string{abs},
			Outcome: manifest.OutcomeApplied, OutcomeEvidence: "file-history-snapshot", Evidence: []manifest.Evidence{ev},
			Provenance: manifest.Provenance{Transcript: p.file, Line: rec.Line, Offset: rec.Offset, Time: t, Carrier: "file-history-snapshot"}}
		p.emit(op)
	}
}

// backupName is the file-history name prefix of an absolute path.
func backupName(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(h[:])[:16] + "@v"
}

func (p *parser) finish(rd *jsonl.Reader) {
	p.out.Line = nil // what is emitted now is from lines gone by, all owned
	defer func() {
		// The parser's own warnings join the reader's, in line order.
		s := &p.sess
		s.Warnings = append(s.Warnings, p.warns.List()...)
		sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	}()
	s := &p.sess
	rd.Fill(s)
	s.Cwd = p.firstCwd
	s.Start, s.End = timeOf(p.span.first), timeOf(p.span.max)
	// Calls that never got a result: reported, not replayed (unless opted in).
	var open []*toolUse
	var ids []string
	for id, tu := range p.pending {
		open = append(open, tu)
		ids = append(ids, id)
	}
	// In the order they were made: the calls of one message share a line,
	// and the map gives its ids in any order, so that the operations of
	// one transcript came in a different order from run to run.
	sort.Slice(ids, func(a, b int) bool { return p.pending[ids[a]].seq < p.pending[ids[b]].seq })
	for _, id := range ids {
		tu := p.pending[id]
		if tu.name == "Read" {
			continue
		}
		p.result(jsonl.Record{Line: tu.line, Offset: tu.offset}, id, tu, gjson.Result{}, readTur(gjson.Result{}))
	}
	if p.calls != nil {
		var open []*manifest.Event
		for _, ev := range p.calls {
			open = append(open, ev)
		}
		// The calls of one message share a line: their ids settle the
		// order, which the map would give differently from run to run.
		sort.Slice(open, func(a, b int) bool {
			return open[a].Line < open[b].Line || open[a].Line == open[b].Line && open[a].CallID < open[b].CallID
		})
		for _, ev := range open {
			ev.Detail = "no tool_result: still running when the transcript ends"
			p.h.Event(*ev)
		}
	}
	truncated := false
	for _, w := range s.Warnings {
		truncated = truncated || w.Truncated()
	}
	switch {
	case truncated:
		s.EndState = manifest.EndTruncated
	case len(open) > 0:
		s.EndState = manifest.EndInTool
	default:
		s.EndState = manifest.EndClean
	}
	p.header()
}

// chain returns the subagent a sidechain message belongs to when the
// transcript names none (Claude Code 1.x kept subagents inline): the first
// message of its chain, found through parentUuid.
func (p *parser) chain(uuid, parent string) string {
	root := uuid
	if parent != "" {
		if r, ok := p.sideRoot[parent]; ok {
			root = r
		} else {
			root = parent
		}
	}
	if uuid != "" {
		p.sideRoot[strings.Clone(uuid)] = strings.Clone(root)
	}
	if len(root) > 8 {
		root = root[:8]
	}
	return "sidechain-" + root
}

// spawned links the Task call whose prompt starts a sidechain to it.
func (p *parser) spawned(prompt, agent string) {
	id, ok := p.tasks[strings.TrimSpace(prompt)]
	if !ok || prompt == "" {
		return
	}
	delete(p.tasks, strings.TrimSpace(prompt))
	if ev := p.calls[id]; ev != nil && ev.Subagent == "" {
		ev.Subagent = agent
	}
}

// promptOf is the text of a user message's content.
func promptOf(content gjson.Result) string {
	if content.Type == gjson.String {
		return content.Str
	}
	var b strings.Builder
	for _, t := range content.Get("#(type==\"text\")#.text").Array() {
		b.WriteString(t.Str)
	}
	return b.String()
}

// tokens adds an assistant message's usage to the session's totals, once
// per message (Claude Code writes one line per content block, each with
// the message's usage), and notes its model.
func (p *parser) tokens(message gjson.Result) {
	p.sess.Model = manifest.AddModel(p.sess.Model, message.Get("model").Str)
	u := message.Get("usage")
	if !u.Exists() {
		return
	}
	if id := message.Get("id").Str; id != "" {
		if p.usage[id] {
			return
		}
		p.usage[strings.Clone(id)] = true
	}
	if p.sess.Tokens == nil {
		p.sess.Tokens = &manifest.Tokens{}
	}
	t := p.sess.Tokens
	t.Input += u.Get("input_tokens").Int()
	t.CacheRead += u.Get("cache_read_input_tokens").Int()
	t.CacheWrite += u.Get("cache_creation_input_tokens").Int()
	t.Output += u.Get("output_tokens").Int()
}
