package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/applypatch"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Result is a parsed rollout.
type Result struct {
	Session manifest.Session
	Ops     []manifest.Op
	// Calls counts every tool call seen, file-changing or not.
	Calls int
}

type parser struct {
	// warns keeps the first warnings of each kind and counts the rest.
	warns jsonl.Warner
	file  string
	res   Result

	cwd, envCwd, metaCwd string
	turnID               string
	lastTime, firstTime  time.Time
	// lastTS is the current line's timestamp as written (its buffer
	// reused from line to line: most lines' time is never needed), and
	// parsedTS the one lastTime was parsed from.
	lastTS   []byte
	parsedTS string
	metaTime string
	metaSeen bool
	first    bool

	byCall map[string]int // call_id -> absolute index of a pending op
	// seen and open hold 64-bit hashes of call ids (every call seen, and
	// those awaiting an output): a few bytes a call, however long the rollout.
	seen    jsonl.HashSet // calls met, by the hash of their id
	open    jsonl.HashSet // calls awaiting their output
	seed    maphash.Seed
	codeOps []int // code-mode patch ops awaiting a patch_apply_end

	// queue holds the operations whose outcome is not settled yet, in line
	// order; queue[0] has absolute index base. Settled operations leave from
	// the head, so memory holds only the few calls still in flight.
	queue []pend
	base  int
	// qmem is the whole array queue is in. When the queue reaches its end
	// with room behind the head (settled operations leave from there), it
	// moves back to the start instead of into a new array: appending after
	// the head had left made a new array every few operations, a tenth of
	// what a Codex parse allocated. No one keeps a *pend across addOp (a
	// new array would leave it behind too).
	qmem []pend
	// calls are the tool calls awaiting output, for timeline events (only
	// when the handler wants events).
	calls   map[string]*callInfo
	records int64
	h       Handler
	headed  bool

	turnsStarted, turnsEnded int
	lastTurnEvent            string
	lastCompact              int    // line of the last compaction event
	plain                    []byte // reused by jsonl.Plain
}

type outcome struct {
	o   manifest.Outcome
	why string
}

// callInfo is a tool call awaiting its output, for the timeline.
type callInfo struct {
	ev manifest.Event
	// patchEnd is the outcome a patch_apply_end gave, which wins.
	patchEnd *outcome
}

// pend is an operation waiting for its outcome.
type pend struct {
	op       manifest.Op
	out, ev  *outcome
	outAt    int64 // record count when the output arrived
	closed   bool  // its turn moved on
	dead     bool  // its turn ended: no output will come
	shellEnd *outcome
}

const (
	// lookahead is how many records an operation that has its output waits
	// for a patch_apply_end before it is settled without one.
	lookahead = 64
	// maxPending bounds the queue whatever the transcript does.
	maxPending = 4096
)

// Handler receives a rollout's session and operations as they are settled.
type Handler = emit.Handler

// parse reads a whole Codex rollout from r. file names it in warnings and
// provenance. It never fails on damaged content (that becomes warnings); it
// returns an error only when reading r fails, together with everything
// parsed before the failure.
func parse(ctx context.Context, r io.Reader, file string) (*Result, error) {
	var ops []manifest.Op
	sess, calls, err := stream(ctx, r, file, Handler{Op: func(op manifest.Op) { ops = append(ops, op) }})
	return &Result{Session: sess, Ops: ops, Calls: calls}, err
}

// Stream reads a Codex rollout from r and hands each operation to h as soon
// as its outcome is settled, so memory holds only the calls still in flight.
// It returns the complete session at the end.
func Stream(ctx context.Context, r io.Reader, file string, h Handler) (manifest.Session, error) {
	sess, _, err := stream(ctx, r, file, h)
	return sess, err
}

func stream(ctx context.Context, r io.Reader, file string, h Handler) (manifest.Session, int, error) {
	p := &parser{
		file: file, byCall: map[string]int{}, first: true, h: h,
		seed: maphash.MakeSeed(),
	}
	if h.Event != nil {
		p.calls = map[string]*callInfo{}
	}
	p.res.Session = manifest.Session{Agent: manifest.AgentCodex, Transcript: file, ID: idFromFilename(file)}
	br := newPeekReader(r)
	if SingleJSON(br.peek) {
		err := p.parseSingleJSON(br, jsonl.MaxLine(ctx))
		p.finish(nil)
		return p.res.Session, p.res.Calls, err
	}
	rd := jsonl.NewReader(br, file)
	defer rd.Close()
	readErr := rd.Each(ctx, func(rec jsonl.Record) {
		p.record(rec)
		p.records++
		if len(p.queue) > 0 {
			p.flush(false)
		}
	})
	p.finish(rd)
	return p.res.Session, p.res.Calls, readErr
}

// at returns the pending operation with absolute index i, or nil when it
// has already been settled and handed on.
func (p *parser) at(i int) *pend {
	if i < p.base || i-p.base >= len(p.queue) {
		return nil
	}
	return &p.queue[i-p.base]
}

// flush hands on the settled operations at the head of the queue.
func (p *parser) flush(force bool) {
	for len(p.queue) > 0 {
		q := &p.queue[0]
		ready := force || q.ev != nil || q.dead || len(p.queue) > maxPending ||
			(q.out != nil && (q.closed || p.records-q.outAt > lookahead))
		if !ready {
			return
		}
		op := p.settle(q)
		if id := op.Provenance.CallID; id != "" && p.byCall[id] == p.base {
			delete(p.byCall, id)
		}
		for k, c := range p.codeOps {
			if c == p.base {
				p.codeOps = append(p.codeOps[:k], p.codeOps[k+1:]...)
				break
			}
		}
		p.queue[0] = pend{}
		p.queue = p.queue[1:]
		p.base++
		p.header()
		if p.h.Op != nil {
			p.h.Op(op)
		}
	}
}

// header announces the session once.
func (p *parser) header() {
	if p.headed {
		return
	}
	p.headed = true
	if p.h.Header != nil {
		s := p.res.Session
		s.Cwd = p.metaCwd
		if s.Cwd == "" {
			s.Cwd = p.turnCwd()
		}
		s.Start, _ = p.span()
		s.Warnings = nil
		p.h.Header(s)
	}
}

// closeTurn marks the pending calls of a turn that moved on: those with an
// output are settled; when the turn ended (ended), the others will never get
// one.
func (p *parser) closeTurn(ended bool) {
	for i := range p.queue {
		p.queue[i].closed = true
		if ended {
			p.queue[i].dead = true
		}
	}
}

// settle decides an operation's outcome: the event's, else the output's,
// else unknown.
func (p *parser) settle(q *pend) manifest.Op {
	op := q.op
	op.Session = p.res.Session.ID
	switch {
	case q.ev != nil:
		op.Outcome, op.OutcomeEvidence = q.ev.o, q.ev.why
	case q.shellEnd != nil:
		op.Outcome, op.OutcomeEvidence = q.shellEnd.o, q.shellEnd.why
	case q.out != nil:
		op.Outcome, op.OutcomeEvidence = q.out.o, q.out.why
	default:
		op.Outcome, op.OutcomeEvidence = manifest.OutcomeUnknown, "no output: the call never finished"
	}
	if op.Kind == manifest.KindPatch && op.Patch == nil && op.Outcome == manifest.OutcomeApplied {
		// Codex refuses a patch it cannot parse, so a success claim for one
		// means the text here is not what codex saw (redacted, trimmed) or the
		// grammar here is wrong: keep the claim, and recovery reports the files
		// as unrecoverable rather than guessing.
		op.OutcomeEvidence += "; but the patch text does not parse here"
	}
	return op
}

// record handles one JSON object. The cheap checks come first: most lines of
// a rollout (reasoning, token counts, messages, outputs of other calls) are
// dismissed after reading two or three short fields, found by the reader's
// key offsets and by path, without scanning the rest of the line. A
// top-level key named twice counts the last time, however the record is
// spelled.
func (p *parser) record(rec jsonl.Record) {
	data := rec.Data
	first := p.first
	p.first = false
	if typ, ok := jsonl.String(rec.Field("type")); ok {
		if ts, ok := jsonl.String(rec.Field("timestamp")); ok {
			p.lastTS = append(p.lastTS[:0], ts...)
		}
		// The payload's type is read from its start: the line's end (another
		// cache line) is looked at only for a record that is read further.
		var pl []byte
		ptype, hasType, ok := payloadTypeFast(rec.FieldFrom("payload"))
		if !ok {
			pl = rec.Field("payload")
			ptype, hasType = payloadType(pl)
		}
		if hasType || string(typ) == "session_meta" || string(typ) == "turn_context" || string(typ) == "compacted" {
			kind := intern(typ)
			if kind == "response_item" && !relevantItem(ptype) || kind == "event_msg" && !relevantEvent(ptype) && p.calls == nil {
				return // what wrapped would dismiss first
			}
			if pl == nil {
				pl = rec.Field("payload")
			}
			p.wrapped(rec, kind, ptype, pl)
			return
		}
		// A bare legacy ResponseItem.
		if relevantItem(string(typ)) {
			p.item(rec, string(typ), gjson.ParseBytes(data))
		}
		return
	}
	if rec.Field("record_type") != nil {
		return
	}
	if first || !p.metaSeen {
		if rec.Field("id") != nil && rec.Field("timestamp") != nil {
			p.meta(rec, gjson.ParseBytes(data))
			return
		}
	}
	p.warn(rec, "record has no \"type\": not a rollout line")
}

// relevantItem says whether a response item can hold or settle a file
// operation.
func relevantItem(t string) bool {
	switch t {
	case "function_call", "custom_tool_call", "local_shell_call", "apply_patch_call",
		"function_call_output", "custom_tool_call_output", "apply_patch_call_output", "message":
		return true
	}
	return false
}

func relevantEvent(t string) bool {
	switch t {
	case "patch_apply_end", "item_completed", "task_started", "turn_started", "task_complete", "turn_complete",
		"turn_aborted", "exec_command_end":
		return true
	}
	return false
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// now returns the time of the current line (parsed only when an
// operation needs it).
func (p *parser) now() time.Time {
	if string(p.lastTS) != p.parsedTS {
		p.parsedTS = string(p.lastTS)
		if t, err := time.Parse(time.RFC3339Nano, p.parsedTS); err == nil {
			p.lastTime = t
			if p.firstTime.IsZero() {
				p.firstTime = t
			}
		}
	}
	return p.lastTime
}

// wrapped handles a record of the current layout: kind is its type, ptype
// and pl its payload's type and raw payload (which aliases the line: gjson
// reads it through a copy when anything of it may outlive the line).
func (p *parser) wrapped(rec jsonl.Record, kind, ptype string, pl []byte) {
	switch kind {
	case "session_meta":
		p.meta(rec, gjson.ParseBytes(pl))
	case "turn_context":
		if c := gjson.GetBytes(pl, "cwd").Str; c != "" && c != p.cwd {
			p.cwd = strings.Clone(c)
		}
		if t := gjson.GetBytes(pl, "turn_id").Str; t != "" {
			p.turnID = t
		}
		if p.calls != nil {
			p.res.Session.Model = manifest.AddModel(p.res.Session.Model, gjson.GetBytes(pl, "model").Str)
		}
	case "response_item":
		if !relevantItem(ptype) {
			return
		}
		if ptype == "message" && !p.envContext(rec.Data) && p.calls == nil {
			return
		}
		if ptype == "function_call_output" || ptype == "custom_tool_call_output" || ptype == "apply_patch_call_output" {
			// Outputs are the largest lines: look at the call id first. It
			// is read in place (GetBytes would copy it): it is only looked
			// up here, never kept.
			id := gjson.Get(zerocopy.String(pl), "call_id").Str
			p.open.Del(p.hash(id))
			_, tracked := p.byCall[id]
			_, timed := p.calls[id]
			if !tracked && !timed {
				return
			}
		}
		p.item(rec, ptype, gjson.ParseBytes(pl))
	case "event_msg":
		if relevantEvent(ptype) {
			p.event(rec, gjson.ParseBytes(pl))
		} else if p.calls != nil {
			p.timelineEvent(rec, ptype, pl)
		}
	case "compacted":
		// replacement_history re-embeds earlier calls: never descend into it.
		if p.calls != nil {
			p.compacted(rec, "the conversation was compacted")
		}
	}
}

var envMark = []byte("<environment_context>")

// envContext reports whether a message line carries the environment
// context, whose <cwd> sets the effective cwd: a byte search, over the line
// with its \u escapes of ASCII spelled out when it has any.
func (p *parser) envContext(data []byte) bool {
	if bytes.Contains(data, envMark) {
		return true
	}
	if !bytes.Contains(data, []byte(`\u`)) {
		return false
	}
	plain, ok := jsonl.Plain(data, p.plain)
	if !ok {
		return false
	}
	p.plain = plain[:0]
	return bytes.Contains(plain, envMark)
}

func (p *parser) meta(rec jsonl.Record, m gjson.Result) {
	s := &p.res.Session
	if p.metaSeen {
		// A later session_meta is a fork copy or a resume: the first one is the file's identity.
		return
	}
	p.metaSeen = true
	// These outlive the line, and gjson strings alias it (and session_meta
	// carries kilobytes of instructions): copy them.
	c := func(path string) string { return strings.Clone(m.Get(path).Str) }
	s.ID = c("id")
	if s.ID == "" {
		s.ID = c("session_id")
	}
	s.AgentVersion = c("cli_version")
	s.Originator = c("originator")
	s.GitCommit = c("git.commit_hash")
	s.GitBranch = c("git.branch")
	s.ForkedFrom = c("forked_from_id")
	p.metaCwd = c("cwd")
	p.metaTime = c("timestamp")
}

var envCwdRe = regexp.MustCompile(`<cwd>([^<]*)</cwd>`)

func (p *parser) item(rec jsonl.Record, typ string, it gjson.Result) {
	switch typ {
	case "message":
		if !p.envContext(rec.Data) {
			if p.calls != nil && it.Get("role").Str == "assistant" {
				var text strings.Builder
				for _, t := range it.Get("content.#.text").Array() {
					text.WriteString(t.Str)
					text.WriteByte('\n')
				}
				if t, cut := manifest.CutText(text.String(), manifest.OutputMax); t != "" {
					p.h.Event(manifest.Event{Kind: manifest.EventMessage, Time: p.now(), Line: rec.Line, Text: t, OutputCut: cut})
				}
			}
			if p.calls != nil && it.Get("role").Str == "user" {
				var text strings.Builder
				for _, t := range it.Get("content.#.text").Array() {
					text.WriteString(t.Str)
					text.WriteByte(' ')
				}
				p.turn(rec, text.String())
			}
			return
		}
		// The texts as they read, not as JSON: a path may be written with escapes.
		var text strings.Builder
		for _, t := range it.Get("content.#.text").Array() {
			text.WriteString(t.Str)
			text.WriteByte('\n')
		}
		if m := envCwdRe.FindStringSubmatch(text.String()); m != nil {
			p.envCwd = strings.Clone(strings.TrimSpace(m[1]))
		}
	case "function_call":
		p.functionCall(rec, it)
	case "custom_tool_call":
		p.customCall(rec, it)
	case "local_shell_call":
		id := callID(it)
		p.callSeen(id)
		var argv []string
		for _, a := range it.Get("action.command").Array() {
			argv = append(argv, a.String())
		}
		p.callStarted(rec, id, "local_shell_call", applypatch.ShellScript(argv))
		p.shell(rec, id, "local_shell_call", "local_shell_call", argv, "", it.Get("action.working_directory").Str)
	case "function_call_output", "custom_tool_call_output":
		d := jsonl.DocOfResult(it) // split once: call_id, then output
		id := d.Get("call_id").Str
		p.open.Del(p.hash(id))
		out := d.Get("output") // read once: it can be megabytes
		p.callEnded(rec, id, out)
		q := p.at(p.byCallIndex(id))
		if q == nil || q.out != nil {
			return
		}
		o, why := decideOutput(out)
		op := &q.op
		if op.Kind == manifest.KindPatch && op.Provenance.Carrier == "shell_nonintercepted" && o == manifest.OutcomeApplied &&
			!strings.Contains(textOf(out), successText) {
			o, why = manifest.OutcomeUnknown, why+", but no apply_patch success line: the non-intercepted apply_patch may not have run"
		}
		q.out, q.outAt = &outcome{o, why}, p.records
	case "apply_patch_call":
		p.applyPatchCall(rec, it)
	case "apply_patch_call_output":
		id := it.Get("call_id").Str
		p.open.Del(p.hash(id))
		p.callEnded(rec, id, it.Get("output"))
		if q := p.at(p.byCallIndex(id)); q != nil {
			switch it.Get("status").Str {
			case "completed":
				q.out, q.outAt = &outcome{manifest.OutcomeApplied, "apply_patch_call_output status=completed"}, p.records
			case "failed":
				q.out, q.outAt = &outcome{manifest.OutcomeFailed, "apply_patch_call_output status=failed"}, p.records
			}
		}
	}
}

// timeline: calls and turns, only when the handler wants events.

var promptNoise = []string{"<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions", "<INSTRUCTIONS>"}

// turn emits a user turn.
func (p *parser) turn(rec jsonl.Record, text string) {
	t := strings.TrimSpace(text)
	for _, n := range promptNoise {
		if strings.HasPrefix(t, n) {
			return
		}
	}
	p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: p.now(), Line: rec.Line, Text: emit.Excerpt(t, 200)})
}

// callStarted notes a call for the timeline.
func (p *parser) callStarted(rec jsonl.Record, id, tool, target string) {
	if p.calls == nil || id == "" {
		return
	}
	p.calls[strings.Clone(id)] = &callInfo{ev: manifest.Event{Kind: manifest.EventCall, Time: p.now(), Line: rec.Line,
		Tool: tool, Target: emit.Excerpt(target, 160), CallID: strings.Clone(id), Outcome: manifest.OutcomeUnknown}}
}

// callEnded emits a call's timeline event when its output arrives.
func (p *parser) callEnded(rec jsonl.Record, id string, out gjson.Result) {
	c, ok := p.calls[id]
	if !ok {
		return
	}
	delete(p.calls, id)
	o, why := decideOutput(out)
	if c.patchEnd != nil {
		o, why = c.patchEnd.o, c.patchEnd.why
	}
	c.ev.Outcome, c.ev.Detail, c.ev.Ended = o, emit.Excerpt(why, 200), p.now()
	c.ev.Output, c.ev.OutputCut = manifest.CutText(outputText(out), manifest.OutputMax)
	p.h.Event(c.ev)
}

func callID(it gjson.Result) string {
	if id := it.Get("call_id").Str; id != "" {
		return id
	}
	return it.Get("id").Str
}

// callSeen records a tool call as awaiting output and reports whether it is
// new in this file (a resumed or forked rollout repeats call ids).
func (p *parser) callSeen(id string) bool {
	p.res.Calls++
	if id == "" {
		return true
	}
	k := p.hash(id)
	if p.seen.Has(k) {
		return false
	}
	p.seen.Add(k)
	p.open.Add(k)
	return true
}

func (p *parser) hash(id string) uint64 { return maphash.String(p.seed, id) }

func (p *parser) functionCall(rec jsonl.Record, it gjson.Result) {
	d := jsonl.DocOfResult(it) // split once for the three
	id := d.Get("call_id").Str
	if !p.callSeen(id) {
		return
	}
	name := d.Get("name").Str
	argsRaw := d.Get("arguments").Str
	args := gjson.Parse(argsRaw)
	if p.calls != nil {
		target := args.Get("cmd").String()
		switch {
		case args.Get("command").IsArray():
			var argv []string
			for _, a := range args.Get("command").Array() {
				argv = append(argv, a.String())
			}
			target = applypatch.ShellScript(argv)
			if inv, ok := applypatch.FromArgv(argv); ok && len(argv) == 2 {
				target = "apply_patch " + patchTargets(inv.Patch)
			}
		case args.Get("command").Exists():
			target = args.Get("command").String()
		case target == "":
			target = argsRaw
		}
		if name == "apply_patch" {
			target = patchTargets(args.Get("input").String() + args.Get("patch").String())
		} else if inv, ok := applypatch.FromScript(target); ok {
			target = "apply_patch " + patchTargets(inv.Patch)
		}
		p.callStarted(rec, id, name, target)
		if c := p.calls[id]; c != nil && name == "update_plan" {
			for _, st := range args.Get("plan").Array() {
				c.ev.Todos = append(c.ev.Todos, manifest.Todo{Text: emit.Excerpt(st.Get("step").String(), 300), Status: emit.Excerpt(st.Get("status").String(), 40)})
			}
		}
	}
	if argsRaw != "" && !jsonl.Valid(argsRaw) {
		if name == "apply_patch" || isShellTool(name) {
			p.warn(rec, "call %s (%s): arguments are not valid JSON", id, name)
		}
		return
	}
	switch {
	case name == "apply_patch":
		text := args.Get("input")
		if !text.Exists() {
			text = args.Get("patch")
		}
		p.patchOp(rec, id, "function_call", name, text.String(), p.turnCwd(), false)
	case name == "shell" || name == "container.exec":
		var argv []string
		for _, a := range args.Get("command").Array() {
			argv = append(argv, a.String())
		}
		p.shell(rec, id, name, "shell", argv, "", args.Get("workdir").Str)
	case name == "shell_command":
		p.shell(rec, id, name, "shell_command", nil, args.Get("command").String(), args.Get("workdir").Str)
	case name == "exec_command":
		p.shell(rec, id, name, "exec_command", nil, args.Get("cmd").String(), args.Get("workdir").Str)
	}
}

func isShellTool(name string) bool {
	switch name {
	case "shell", "container.exec", "shell_command", "exec_command":
		return true
	}
	return false
}

func (p *parser) customCall(rec jsonl.Record, it gjson.Result) {
	d := jsonl.DocOfResult(it)
	id := d.Get("call_id").Str
	if !p.callSeen(id) {
		return
	}
	name := d.Get("name").Str
	var input string
	if p.calls != nil || name == "apply_patch" || name == "exec" {
		input = d.Get("input").String() // read once: a whole patch
	}
	if p.calls != nil {
		target := input
		if name == "apply_patch" {
			target = patchTargets(target)
		}
		p.callStarted(rec, id, name, target)
	}
	switch name {
	case "apply_patch":
		p.patchOp(rec, id, "custom_tool_call", "apply_patch", input, p.turnCwd(), false)
	case "exec":
		// Code mode: JavaScript calling tools.apply_patch(...). The patch text is
		// pulled from the script's string literals; the nested patch_apply_end
		// (call id exec-<uuid>) confirms it.
		for _, lit := range jsPatchLiterals(input) {
			i := p.patchOp(rec, id, "code_mode", "exec", lit, p.turnCwd(), true)
			if i >= 0 {
				p.codeOps = append(p.codeOps, i)
			}
		}
	}
}

// turnCwd is the effective cwd of the current turn (formats/codex.md §2.3).
func (p *parser) turnCwd() string {
	switch {
	case p.cwd != "":
		return p.cwd
	case p.envCwd != "":
		return p.envCwd
	}
	return p.metaCwd
}

// shell handles the shell tools: an intercepted apply_patch becomes a patch
// op, any other write a shell op.
func (p *parser) shell(rec jsonl.Record, id, tool, carrier string, argv []string, script, workdir string) {
	cwd := p.turnCwd()
	if workdir != "" {
		cwd = resolve(cwd, workdir)
	}
	var inv applypatch.Invocation
	var ok bool
	if argv != nil {
		inv, ok = applypatch.FromArgv(argv)
		script = applypatch.ShellScript(argv)
	} else {
		inv, ok = applypatch.FromScript(script)
	}
	if ok {
		c := carrier
		if len(argv) == 2 {
			c = "shell_argv"
		} else if inv.Heredoc {
			c = "shell_heredoc"
		}
		if !inv.Intercepted {
			c = "shell_nonintercepted"
		}
		if inv.Cd != "" {
			cwd = resolve(cwd, inv.Cd)
		}
		i := p.patchOp(rec, id, c, tool, inv.Patch, cwd, !inv.Intercepted)
		if i >= 0 && !inv.Intercepted {
			p.at(i).op.Note = "apply_patch run as a plain shell command (not intercepted by codex)"
		}
		return
	}
	if id != "" && script == "" {
		return
	}
	sh := shellcmd.Parse(script)
	if !sh.Writes() {
		return
	}
	op := p.newOp(rec, id, manifest.KindShell, tool, carrier, cwd)
	op.Command = script
	shellcmd.Fill(&op, sh, cwd, resolve)
	p.addOp(op, id)
}

func (p *parser) newOp(rec jsonl.Record, id string, kind manifest.OpKind, tool, carrier, cwd string) manifest.Op {
	return manifest.Op{
		Kind: kind, Tool: tool, Cwd: cwd, Outcome: manifest.OutcomeUnknown,
		Provenance: manifest.Provenance{Transcript: p.file, Line: rec.Line, Offset: rec.Offset, Time: p.now(),
			CallID: id, TurnID: p.turnID, Carrier: carrier},
	}
}

// byCallIndex returns the absolute index of the pending op for a call id,
// or -1.
func (p *parser) byCallIndex(id string) int {
	if i, ok := p.byCall[id]; ok {
		return i
	}
	return -1
}

func (p *parser) addOp(op manifest.Op, id string) int {
	i := p.base + len(p.queue)
	op.Seq = i
	if n := len(p.queue); n == cap(p.queue) && n <= cap(p.qmem)/2 {
		copy(p.qmem[:n], p.queue)
		clear(p.qmem[n:cap(p.qmem)])
		p.queue = p.qmem[:n]
	}
	p.queue = append(p.queue, pend{op: op})
	if cap(p.queue) > cap(p.qmem) {
		p.qmem = p.queue // append moved it to a new, larger array
	}
	if id != "" {
		if _, dup := p.byCall[id]; !dup {
			p.byCall[strings.Clone(id)] = i
		}
	}
	return i
}

// patchOp adds a patch operation; a patch that does not parse is still an
// operation (codex refused it, so it is a failed one) and a warning.
func (p *parser) patchOp(rec jsonl.Record, id, carrier, tool, text, cwd string, low bool) int {
	op := p.newOp(rec, id, manifest.KindPatch, tool, carrier, cwd)
	op.PatchText = text
	op.LowConfidence = low
	if !utf8.ValidString(text) {
		p.warn(rec, "call %s: patch text is not valid UTF-8", id)
	}
	patch, err := applypatch.Parse(text)
	if err != nil {
		op.Note = err.Error()
		p.warn(rec, "call %s: %v", id, err)
		op.Paths = headerPaths(text, cwd)
	} else {
		op.Patch = patch
		for i := range patch.Hunks {
			h := &patch.Hunks[i]
			h.Target = resolve(cwd, h.Path)
			op.Paths = append(op.Paths, h.Target)
			if h.MovePath != "" {
				h.MoveTarget = resolve(cwd, h.MovePath)
				op.Paths = append(op.Paths, h.MoveTarget)
			}
		}
	}
	return p.addOp(op, id)
}

// applyPatchCall handles a Responses-API apply_patch_call item (§3.10):
// create_file / update_file / delete_file with a V4A diff body.
func (p *parser) applyPatchCall(rec jsonl.Record, it gjson.Result) {
	id := it.Get("call_id").Str
	if !p.callSeen(id) {
		return
	}
	opn := it.Get("operation")
	file := opn.Get("path").Str
	diff := opn.Get("diff").Str
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	switch opn.Get("type").Str {
	case "create_file":
		b.WriteString("*** Add File: " + file + "\n")
		for _, l := range splitKeep(diff) {
			if !strings.HasPrefix(l, "+") {
				l = "+" + l
			}
			b.WriteString(l + "\n")
		}
	case "update_file":
		b.WriteString("*** Update File: " + file + "\n" + diff)
		if !strings.HasSuffix(diff, "\n") {
			b.WriteByte('\n')
		}
	case "delete_file":
		b.WriteString("*** Delete File: " + file + "\n")
	default:
		p.warn(rec, "apply_patch_call %s: unknown operation type %q", id, opn.Get("type").Str)
		return
	}
	b.WriteString("*** End Patch\n")
	i := p.patchOp(rec, id, "apply_patch_call", "apply_patch_call", b.String(), p.turnCwd(), false)
	if st := it.Get("status").Str; st == "completed" && i >= 0 {
		q := p.at(i)
		q.out, q.outAt = &outcome{manifest.OutcomeApplied, "apply_patch_call status=completed"}, p.records
	}
}

// headerPaths scans a patch that does not parse for its file headers, so
// that the files it meant to touch can still be reported.
func headerPaths(text, cwd string) []string {
	names := applypatch.HeaderPaths(text)
	for i, n := range names {
		names[i] = resolve(cwd, n)
	}
	return names
}

func splitKeep(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (p *parser) event(rec jsonl.Record, pl gjson.Result) {
	switch pl.Get("type").Str {
	case "patch_apply_end":
		p.patchEnd(rec, pl.Get("call_id").Str, pl.Get("turn_id").Str, pl, pl.Get("changes"))
	case "item_completed":
		if it := pl.Get("item"); it.Get("type").Str == "FileChange" {
			p.patchEnd(rec, it.Get("id").Str, pl.Get("turn_id").Str, it, it.Get("changes"))
		}
	case "task_started", "turn_started":
		p.closeTurn(false)
		p.turnsStarted++
		p.lastTurnEvent = "started"
		if t := pl.Get("turn_id").Str; t != "" {
			p.turnID = t
		}
	case "task_complete", "turn_complete":
		p.closeTurn(true)
		p.turnsEnded++
		p.lastTurnEvent = "complete"
	case "turn_aborted":
		if p.calls != nil {
			p.h.Event(manifest.Event{Kind: manifest.EventAborted, Time: p.now(), Line: rec.Line, Text: "turn aborted: " + pl.Get("reason").Str})
		}
		p.closeTurn(true)
		p.turnsEnded++
		p.lastTurnEvent = "aborted"
	case "exec_command_end":
		if q := p.at(p.byCallIndex(pl.Get("call_id").Str)); q != nil && q.op.Kind == manifest.KindShell && q.shellEnd == nil {
			o, why := exitOutcome(pl.Get("exit_code").Raw, "exec_command_end exit_code ")
			q.shellEnd = &outcome{o, why}
		}
	}
}

// patchEnd attaches a patch_apply_end (or FileChange item) to its call and
// records its changes as evidence. A code-mode event (call id exec-…) goes to
// the oldest code-mode patch still waiting for one; an event with no call at
// all becomes an operation of its own, rebuilt from its changes.
func (p *parser) patchEnd(rec jsonl.Record, id, turn string, ev, changes gjson.Result) {
	i, ok := p.byCall[id]
	if !ok && len(p.codeOps) > 0 {
		i, ok = p.codeOps[0], true
		p.codeOps = p.codeOps[1:]
		p.at(i).op.LowConfidence = false
	} else if ok {
		for k, c := range p.codeOps {
			if c == i {
				p.codeOps = append(p.codeOps[:k], p.codeOps[k+1:]...)
				break
			}
		}
	}
	if seen := p.seen.Has(p.hash(id)); !ok && seen {
		if len(changeEvidence(changes)) > 0 {
			p.warn(rec, "patch_apply_end for call %s came after the call was settled; its evidence is not used", id)
		}
		return
	}
	if !ok {
		i = p.opFromChanges(rec, id, changes)
		if i < 0 {
			return
		}
	}
	q := p.at(i)
	if q == nil {
		return
	}
	op := &q.op
	status := ev.Get("status").Str
	defer func() {
		if c, ok := p.calls[op.Provenance.CallID]; ok && q.ev != nil {
			c.patchEnd = q.ev
		}
	}()
	success := ev.Get("success")
	switch {
	case status == "declined":
		q.ev = &outcome{manifest.OutcomeRejected, "patch_apply_end status=declined"}
	case status == "failed" || (success.Exists() && !success.Bool()):
		q.ev = &outcome{manifest.OutcomeFailed, "patch_apply_end success=false " + emit.FirstLine(ev.Get("stderr").Str)}
	case success.Bool() || status == "completed":
		q.ev = &outcome{manifest.OutcomeApplied, "patch_apply_end success=true"}
	}
	op.Evidence = append(op.Evidence, changeEvidence(changes)...)
}

// changeEvidence turns a changes map (either serialization, §3.7) into
// evidence, sorted by path since the map's order is arbitrary.
func changeEvidence(changes gjson.Result) []manifest.Evidence {
	var out []manifest.Evidence
	changes.ForEach(func(k, v gjson.Result) bool {
		typ := v.Get("type").Str
		body := v
		if typ == "" {
			// old, externally tagged form
			switch {
			case v.Type == gjson.String:
				typ = v.Str
			case v.Get("add").Exists():
				typ, body = "add", v.Get("add")
			case v.Get("delete").Exists():
				typ, body = "delete", v.Get("delete")
			case v.Get("update").Exists():
				typ, body = "update", v.Get("update")
			}
		}
		e := manifest.Evidence{Path: k.String(), Source: "patch_apply_end"}
		switch typ {
		case "add":
			e.Kind, e.Content = manifest.EvidencePost, body.Get("content").String()
		case "delete":
			if c := body.Get("content"); c.Exists() {
				e.Kind, e.Content = manifest.EvidencePre, c.String()
			} else {
				e.Kind = manifest.EvidenceDeleted
			}
		case "update":
			e.Kind, e.Content, e.MovePath = manifest.EvidenceDiff, body.Get("unified_diff").String(), body.Get("move_path").Str
		default:
			return true
		}
		out = append(out, e)
		return true
	})
	sort.SliceStable(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out
}

// opFromChanges builds an operation from a patch_apply_end whose call is
// not in the rollout: adds and deletes are exact; an update's diff (context
// radius 1, no headers) becomes a located-by-context patch.
func (p *parser) opFromChanges(rec jsonl.Record, id string, changes gjson.Result) int {
	ev := changeEvidence(changes)
	if len(ev) == 0 {
		return -1
	}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, e := range ev {
		switch e.Kind {
		case manifest.EvidencePost:
			b.WriteString("*** Add File: " + e.Path + "\n")
			for _, l := range splitKeep(e.Content) {
				b.WriteString("+" + l + "\n")
			}
		case manifest.EvidencePre, manifest.EvidenceDeleted:
			b.WriteString("*** Delete File: " + e.Path + "\n")
		case manifest.EvidenceDiff:
			b.WriteString("*** Update File: " + e.Path + "\n")
			if e.MovePath != "" {
				b.WriteString("*** Move to: " + e.MovePath + "\n")
			}
			for _, l := range splitKeep(e.Content) {
				if strings.HasPrefix(l, "@@") {
					l = "@@"
				}
				if strings.HasPrefix(l, `\ No newline`) {
					continue
				}
				b.WriteString(l + "\n")
			}
		}
	}
	b.WriteString("*** End Patch\n")
	i := p.patchOp(rec, id, "patch_apply_end", "apply_patch", b.String(), p.turnCwd(), true)
	p.at(i).op.Note = "rebuilt from patch_apply_end: the call itself is not in the rollout"
	return i
}

func (p *parser) finish(rd *jsonl.Reader) {
	defer func() {
		// The parser's own warnings join the reader's, in line order.
		s := &p.res.Session
		s.Warnings = append(s.Warnings, p.warns.List()...)
		sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	}()
	s := &p.res.Session
	if rd != nil {
		rd.Fill(s)
	}
	if s.ID == "" {
		s.ID = idFromFilename(p.file)
	}
	s.Start, s.End = p.span()
	s.Cwd = p.metaCwd
	if s.Cwd == "" {
		s.Cwd = p.turnCwd()
	}
	truncated := false
	for _, w := range s.Warnings {
		if w.Truncated() {
			truncated = true
		}
	}
	switch {
	case truncated:
		s.EndState = manifest.EndTruncated
	case p.open.Size() > 0:
		s.EndState = manifest.EndInTool
	case p.lastTurnEvent == "started":
		s.EndState = manifest.EndOpen
	case p.lastTurnEvent == "aborted":
		s.EndState = manifest.EndAborted
	default:
		s.EndState = manifest.EndClean
	}
	p.flush(true)
	p.header()
	if p.calls != nil {
		// Calls that never got an output: the session died (or was cut off) in them.
		open := make([]*callInfo, 0, len(p.calls))
		for _, c := range p.calls {
			open = append(open, c)
		}
		// Ids settle the order of calls on one line, which the map would
		// give differently from run to run.
		sort.Slice(open, func(a, b int) bool {
			x, y := open[a].ev, open[b].ev
			return x.Line < y.Line || x.Line == y.Line && x.CallID < y.CallID
		})
		for _, c := range open {
			c.ev.Detail = "no output: still running when the transcript ends"
			p.h.Event(c.ev)
		}
	}
}

// patchTargets lists the files a patch names, for the timeline.
func patchTargets(text string) string {
	var names []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		for _, m := range []string{"*** Add File: ", "*** Delete File: ", "*** Update File: "} {
			if rest, ok := strings.CutPrefix(l, m); ok {
				names = append(names, rest)
			}
		}
	}
	if len(names) == 0 {
		return emit.Excerpt(text, 80)
	}
	return strings.Join(names, ", ")
}

// span returns the session's first and last timestamps.
func (p *parser) span() (time.Time, time.Time) {
	start, _ := time.Parse(time.RFC3339Nano, p.metaTime)
	end := p.now()
	if p.firstTime.Before(start) && !p.firstTime.IsZero() || start.IsZero() {
		start = p.firstTime
	}
	if start.IsZero() {
		start = end
	}
	if end.Before(start) {
		end = start
	}
	return start, end
}

var uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// idFromFilename takes the session id from a rollout's name, scanning from
// the right for a UUID as codex does.
func idFromFilename(file string) string {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	all := uuidRe.FindAllString(base, -1)
	if len(all) > 0 {
		return all[len(all)-1]
	}
	for _, ext := range []string{".zst", ".gz", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// resolve joins a path as the agent wrote it to the effective cwd.
func resolve(cwd, p string) string {
	p = strings.TrimSpace(p)
	if isWindows(cwd) || isWindows(p) {
		p = strings.ReplaceAll(p, `\`, "/")
		cwd = strings.ReplaceAll(cwd, `\`, "/")
		if isWindows(p) {
			return path.Clean(p)
		}
	}
	if path.IsAbs(p) || cwd == "" {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

func isWindows(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

// --- the early single-JSON layout (TypeScript codex-cli) ---

type peekReader struct {
	io.Reader
	peek []byte
}

func newPeekReader(r io.Reader) *peekReader {
	buf := make([]byte, 512)
	n, _ := io.ReadFull(r, buf)
	buf = buf[:n]
	return &peekReader{Reader: io.MultiReader(bytes.NewReader(buf), r), peek: buf}
}

// SingleJSON tells the early single-JSON layout of the TypeScript
// codex-cli from a transcript's first bytes: the first line holds only "{",
// or the object's first key is "session" (however it is spelled).
func SingleJSON(peek []byte) bool {
	t := bytes.TrimLeft(jsonl.TrimBOM(peek), " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	rest := bytes.TrimLeft(t[1:], " \t\r")
	if len(rest) > 0 && rest[0] == '\n' {
		return true
	}
	// The first key, read as gjson reads it (its unescaping stops at a bad
	// escape or a control character) from a bounded prefix: a head is 64
	// KiB, and a copy of it for one word costs a home of thousands of
	// transcripts dearly. 64 bytes hold "session" however it is spelled (7
	// escapes of six bytes), and any longer key reads as more than 7
	// characters from them too.
	rest = bytes.TrimLeft(rest, " \t\r\n")
	key := gjson.ParseBytes(rest[:min(len(rest), 64)])
	return key.Type == gjson.String && key.Str == "session"
}

func (p *parser) parseSingleJSON(r io.Reader, maxLine int64) error {
	data, err := io.ReadAll(io.LimitReader(r, maxLine+1))
	if err != nil {
		return fmt.Errorf("%s: %w", p.file, err)
	}
	if int64(len(data)) > maxLine {
		// One JSON document is one record: it is held whole, so it obeys the line limit.
		return fmt.Errorf("%s: a single-JSON rollout longer than --max-line (%d bytes): not read", p.file, maxLine)
	}
	data = jsonl.TrimBOM(data)
	p.res.Session.Bytes = int64(len(data))
	p.res.Session.Lines = bytes.Count(data, []byte{'\n'})
	if !json.Valid(data) {
		p.res.Session.Warnings = append(p.res.Session.Warnings, manifest.Warning{File: p.file, Line: 1,
			Message: "single-JSON rollout is not valid JSON (cut short?): items read up to the damage"})
	}
	doc := gjson.ParseBytes(data)
	sess := doc.Get("session")
	p.metaSeen = true
	p.res.Session.ID = sess.Get("id").Str
	p.metaTime = sess.Get("timestamp").Str
	p.lastTS = []byte(p.metaTime)
	rec := jsonl.Record{Line: 1}
	counted := 0
	doc.Get("items").ForEach(func(_, it gjson.Result) bool {
		// Items carry no line of their own: count newlines up to each one.
		if it.Index >= counted {
			rec.Line += bytes.Count(data[counted:it.Index], []byte{'\n'})
			counted = it.Index
		}
		rec.Offset = int64(it.Index)
		rec.Data = []byte(it.Raw)
		p.item(rec, it.Get("type").Str, it)
		return true
	})
	return nil
}

// timelineEvent reads the event messages only the timeline wants: token
// totals and compaction.
func (p *parser) timelineEvent(rec jsonl.Record, ptype string, pl []byte) {
	switch ptype {
	case "token_count":
		// Totals are cumulative: the last one stands for the session.
		u := gjson.GetBytes(pl, "info.total_token_usage")
		if !u.Exists() {
			return
		}
		p.res.Session.Tokens = &manifest.Tokens{Input: u.Get("input_tokens").Int(), CacheRead: u.Get("cached_input_tokens").Int(),
			Output: u.Get("output_tokens").Int(), Reasoning: u.Get("reasoning_output_tokens").Int()}
	case "context_compacted":
		p.compacted(rec, "the conversation was compacted")
	}
}

// compacted emits one compaction event: a compacted record and the
// context_compacted event that follows it are the same compaction.
func (p *parser) compacted(rec jsonl.Record, text string) {
	if p.lastCompact > 0 && rec.Line-p.lastCompact <= 3 {
		return
	}
	p.lastCompact = rec.Line
	p.h.Event(manifest.Event{Kind: manifest.EventCompact, Time: p.now(), Line: rec.Line, Text: text})
}

// outputText is a call's output as text: the "output" of a JSON-encoded
// result, the texts of an array of content items, or the string itself.
func outputText(out gjson.Result) string {
	if out.IsArray() {
		var b strings.Builder
		out.ForEach(func(_, v gjson.Result) bool {
			b.WriteString(v.Get("text").String())
			b.WriteByte('\n')
			return true
		})
		return b.String()
	}
	if out.IsObject() {
		return textOf(out.Get("content"))
	}
	t := out.String()
	if s := strings.TrimLeft(t, " \t\r\n"); strings.HasPrefix(s, "{") && gjson.Valid(s) {
		if o := gjson.Get(s, "output"); o.Exists() {
			return o.String()
		}
	}
	return t
}
