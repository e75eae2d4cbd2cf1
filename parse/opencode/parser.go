package opencode

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/applypatch"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// carrier is the provenance carrier of every opencode operation: recover
// replays an opencode edit with opencode's replacers when it sees it.
const carrier = manifest.CarrierOpencode

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer // numbers the operations, sends the header once
	sess  manifest.Session

	cwd string
	// revertMsg and revertPart are where a pending revert (/undo) starts:
	// that message (from that part, when set) and everything after it.
	revertMsg, revertPart string
	reverted              int
	// The current message.
	msgID, role      string
	msgCreated       time.Time
	msgCompleted     bool
	msgAborted       bool
	lastRole         string
	lastDone         bool
	lastAborted      bool
	open             int // tool calls still pending or running
	lastBad          bool
	first, last      time.Time
	turnText         bool
	seenSession      bool
	sessionDirectory string
}

// stream reads an opencode record stream (see doc.go) from r and hands each
// file operation to h in order. It returns the complete session.
func stream(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h}
	p.sess = manifest.Session{Agent: manifest.AgentOpencode, Transcript: file, ID: idFromName(file)}
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(64 << 10); !IsStream(head) && IsExport(head) {
		// The JSON of opencode export: read as the same record stream.
		rc := exportRecords(br, file)
		defer rc.Close()
		r = rc
	} else {
		r = br
	}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	err := rd.Each(ctx, p.record)
	p.finish(rd)
	return p.sess, err
}

// Result is a whole parsed session.
type Result struct {
	Session manifest.Session
	Ops     []manifest.Op
}

// Parse reads a whole opencode record stream.
func Parse(ctx context.Context, r io.Reader, file string) (*Result, error) {
	res := &Result{}
	sess, err := stream(ctx, r, file, emit.Handler{Op: func(op manifest.Op) { res.Ops = append(res.Ops, op) }})
	res.Session = sess
	return res, err
}

// idFromName is the session id after the '#' of a candidate's name.
func idFromName(name string) string {
	if i := strings.LastIndexByte(name, '#'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

func (p *parser) warn(rec jsonl.Record, src, format string, args ...any) {
	file := p.file
	if strings.HasSuffix(src, ".json") {
		file = src // a legacy file: name it, it is what can be looked at
	}
	p.warns.Add(format, manifest.Warning{File: file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) stamp(t time.Time) {
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

// markTool is in every part record that is a tool call: its type's value.
var markTool = []byte(`"tool"`)

func (p *parser) record(rec jsonl.Record) {
	// Most parts are text, reasoning and step markers: without a timeline
	// to feed, a part whose bytes cannot spell a tool call is passed over.
	// (A record that writes a letter as a \u escape is always read.)
	if p.h.Event == nil && !rec.Escaped && bytes.HasPrefix(rec.Data, markPart) && !bytes.Contains(rec.Data, markTool) &&
		!bytes.Contains(rec.Data, markBad) && !bytes.Contains(rec.Data, markOrphan) {
		p.lastBad = false
		return
	}
	// The record's own fields, in one pass: data is read only where needed.
	var kind, src, id, msgID string
	var bad, data gjson.Result
	orphan := false
	gjson.ParseBytes(rec.Data).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "oc":
			kind = v.Str
		case "src":
			src = v.Str
		case "id":
			id = v.Str
		case "message_id":
			msgID = v.Str
		case "bad":
			bad = v
		case "data":
			data = v
		case "orphan":
			orphan = v.Bool()
		}
		return true
	})
	if bad.Exists() {
		what := kind
		if id != "" {
			what += " " + id
		}
		p.warn(rec, src, "%s: %s: skipped", strings.TrimSpace(what), bad.Str)
		p.lastBad = strings.Contains(bad.Str, "cut short")
		return
	}
	p.lastBad = false
	switch kind {
	case "session":
		p.session(gjson.ParseBytes(rec.Data))
	case "message":
		p.message(rec, id, data)
	case "part":
		if orphan {
			p.warn(rec, src, "part %s belongs to message %s, which is not in the session: read anyway", id, msgID)
		}
		p.part(rec, id, msgID, data, src)
	default:
		p.warn(rec, src, "not an opencode record: skipped")
	}
}

// markPart is how the encoder starts every part record; markBad and
// markOrphan are in the records it writes for damage, which always count.
var (
	markPart   = []byte(`{"oc":"part",`)
	markBad    = []byte(`"bad":`)
	markOrphan = []byte(`"orphan":`)
)

func (p *parser) session(doc gjson.Result) {
	p.seenSession = true
	if id := doc.Get("id").Str; id != "" {
		p.sess.ID = strings.Clone(id)
	}
	p.sess.AgentVersion = strings.Clone(doc.Get("version").Str)
	p.sessionDirectory = strings.Clone(doc.Get("directory").Str)
	p.cwd = p.sessionDirectory
	if parent := doc.Get("parent_id").Str; parent != "" {
		p.sess.ForkedFrom = strings.Clone(parent)
	}
	p.stamp(ms(doc.Get("created").Int()))
	p.stamp(ms(doc.Get("updated").Int()))
	if rv := doc.Get("revert"); rv.IsObject() {
		p.revertMsg = strings.Clone(rv.Get("messageID").Str)
		p.revertPart = strings.Clone(rv.Get("partID").Str)
	}
	p.header()
}

func (p *parser) message(rec jsonl.Record, id string, data gjson.Result) {
	p.msgID = strings.Clone(id)
	p.role = strings.Clone(data.Get("role").Str)
	p.msgCreated = ms(data.Get("time.created").Int())
	p.msgCompleted = data.Get("time.completed").Exists()
	p.msgAborted = data.Get("error.name").Str == "MessageAbortedError"
	p.stamp(p.msgCreated)
	p.stamp(ms(data.Get("time.completed").Int()))
	if c := data.Get("path.cwd").Str; c != "" {
		p.cwd = strings.Clone(c)
	}
	p.lastRole, p.lastDone, p.lastAborted = p.role, p.msgCompleted, p.msgAborted
	p.turnText = false
	if p.h.Event != nil && p.msgAborted {
		p.h.Event(manifest.Event{Kind: manifest.EventAborted, Time: p.msgCreated, Line: rec.Line,
			Text: "turn aborted: " + emit.FirstLine(data.Get("error.data.message").Str)})
	}
}

// onRevertedBranch says whether a part is on a message that a pending
// revert undid.
func (p *parser) onRevertedBranch(msgID, partID string) bool {
	switch {
	case p.revertMsg == "":
		return false
	case msgID > p.revertMsg:
		return true
	case msgID == p.revertMsg:
		return p.revertPart == "" || partID >= p.revertPart
	}
	return false
}

func (p *parser) part(rec jsonl.Record, id, msgID string, data gjson.Result, src string) {
	switch data.Get("type").Str {
	case "text":
		if p.h.Event != nil && p.role == "user" && !p.turnText && !data.Get("synthetic").Bool() {
			p.turnText = true
			p.h.Event(manifest.Event{Kind: manifest.EventTurn, Time: p.msgCreated, Line: rec.Line, Text: emit.FirstLine(data.Get("text").Str)})
		}
		return
	case "tool":
	default:
		return
	}
	var tool, callID string
	var state gjson.Result
	data.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "tool":
			tool = v.Str
		case "callID":
			callID = v.Str
		case "state":
			state = v
		}
		return true
	})
	var status string
	var in, meta, tm gjson.Result
	state.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "status":
			status = v.Str
		case "input":
			in = v
		case "metadata":
			meta = v
		case "time":
			tm = v
		}
		return true
	})
	if status == "pending" || status == "running" {
		p.open++
	}
	switch tool {
	case "write", "edit", "apply_patch", "patch", "bash":
	default:
		if p.h.Event == nil {
			return // reads, searches and the like change no file
		}
	}
	start, end := ms(tm.Get("start").Int()), ms(tm.Get("end").Int())
	p.stamp(start)
	p.stamp(end)
	o, why := outcome(tool, state)
	if p.h.Event != nil {
		ev := manifest.Event{Kind: manifest.EventCall, Time: start, Line: rec.Line, Tool: strings.Clone(tool),
			Target: strings.Clone(target(tool, in)), CallID: strings.Clone(callID), Outcome: o, Detail: why, Ended: end}
		if ev.Time.IsZero() {
			ev.Time = p.msgCreated
		}
		p.h.Event(ev)
	}
	op := manifest.Op{Tool: strings.Clone(tool), Cwd: p.cwd, Outcome: o, OutcomeEvidence: why,
		Identity: "opencode:" + id,
		Provenance: manifest.Provenance{Transcript: p.file, Line: rec.Line, Offset: rec.Offset, Time: start,
			CallID: strings.Clone(callID), TurnID: p.msgID, Carrier: carrier}}
	if op.Provenance.Time.IsZero() {
		op.Provenance.Time = p.msgCreated
	}
	switch tool {
	case "write":
		fp := in.Get("filePath").Str
		if fp == "" {
			p.warn(rec, src, "write call %s names no file", callID)
			return
		}
		op.Kind = manifest.KindWrite
		op.Paths = []string{resolve(p.cwd, fp)}
		c := in.Get("content").Str
		op.Content = &c
		p.fileDiff(&op, meta.Get("filediff"))
	case "edit":
		fp := in.Get("filePath").Str
		if fp == "" {
			p.warn(rec, src, "edit call %s names no file", callID)
			return
		}
		op.Kind = manifest.KindEdit
		op.Paths = []string{resolve(p.cwd, fp)}
		op.Edits = []manifest.Edit{{Old: in.Get("oldString").Str, New: in.Get("newString").Str, ReplaceAll: in.Get("replaceAll").Bool()}}
		if !p.fileDiff(&op, meta.Get("filediff")) {
			// Newer versions keep only the diff, taken after the formatter ran.
			d := meta.Get("filediff.patch")
			if d.Type != gjson.String {
				d = meta.Get("diff")
			}
			if d.Type == gjson.String && d.Str != "" {
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidenceDiff, Content: d.Str, Source: "metadata diff (indentation may be trimmed)"})
			}
		}
	case "apply_patch", "patch":
		text := in.Get("patchText").Str
		if text == "" {
			p.warn(rec, src, "%s call %s has no patchText", tool, callID)
			return
		}
		op.Kind = manifest.KindPatch
		op.PatchText = text
		if patch, err := applypatch.Parse(text); err != nil {
			// opencode's own parser may have read it: its files are still
			// named by their headers, and what it recorded still counts.
			op.Note = "patch does not parse: " + err.Error()
			op.Paths = headerPaths(text, p.cwd)
			if o == manifest.OutcomeApplied {
				p.warn(rec, src, "%s call %s: %s", tool, callID, op.Note)
			}
		} else {
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
		}
		meta.Get("files").ForEach(func(_, f gjson.Result) bool {
			if f.Get("filePath").Str == "" {
				return true
			}
			fp := resolve(p.cwd, f.Get("filePath").Str)
			if b := f.Get("before"); b.Type == gjson.String && f.Get("type").Str != "add" {
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: fp, Kind: manifest.EvidencePre, Content: b.Str, Source: "metadata.files.before"})
			}
			if a := f.Get("after"); a.Type == gjson.String && f.Get("type").Str != "delete" {
				dst := fp
				if mp := f.Get("movePath").Str; mp != "" {
					dst = resolve(p.cwd, mp)
				}
				op.Evidence = append(op.Evidence, manifest.Evidence{Path: dst, Kind: manifest.EvidencePost, Content: a.Str, Source: "metadata.files.after"})
			}
			return true
		})
		if len(op.Paths) == 0 {
			p.warn(rec, src, "%s call %s names no file", tool, callID)
			return
		}
	case "bash":
		cmd := in.Get("command").Str
		sh := shellcmd.Parse(cmd)
		if !sh.Writes() {
			return
		}
		op.Kind = manifest.KindShell
		op.Command = cmd
		cwd := p.cwd
		if w := in.Get("workdir").Str; w != "" {
			cwd = resolve(p.cwd, w)
			op.Cwd = cwd
		}
		shellcmd.Fill(&op, sh, cwd, resolve)
	default:
		return
	}
	if p.onRevertedBranch(msgID, id) {
		p.reverted++
		note := "on a message reverted with /undo (the revert is still pending): replayed like a rewound branch, since it happened on disk"
		if op.Note != "" {
			op.Note += "; " + note
		} else {
			op.Note = note
		}
	}
	p.emit(op)
}

// fileDiff adds the before/after content an opencode version recorded in
// metadata.filediff; it says whether there was any.
func (p *parser) fileDiff(op *manifest.Op, fd gjson.Result) bool {
	if !fd.IsObject() {
		return false
	}
	found := false
	if b := fd.Get("before"); b.Type == gjson.String && op.Kind == manifest.KindEdit {
		op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePre, Content: b.Str, Source: "metadata.filediff.before"})
		found = true
	}
	if a := fd.Get("after"); a.Type == gjson.String {
		op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePost, Content: a.Str, Source: "metadata.filediff.after"})
		found = true
	}
	return found
}

// headerPaths are the files a patch that does not parse names in its
// headers.
func headerPaths(text, cwd string) []string {
	names := applypatch.HeaderPaths(text)
	for i, n := range names {
		names[i] = resolve(cwd, n)
	}
	return names
}

// target is what a call works on, for the timeline.
func target(tool string, in gjson.Result) string {
	switch tool {
	case "bash":
		return emit.FirstLine(in.Get("command").Str)
	case "apply_patch", "patch":
		return emit.FirstLine(strings.TrimPrefix(strings.TrimSpace(in.Get("patchText").Str), "*** Begin Patch\n"))
	}
	for _, k := range []string{"filePath", "path", "pattern", "url"} {
		if v := in.Get(k).Str; v != "" {
			return emit.FirstLine(v)
		}
	}
	return ""
}

// outcome reads a tool part's state: completed ran, error did not (a
// permission the user refused is a rejection), and a call still pending or
// running, or aborted while it ran, may or may not have taken effect.
func outcome(tool string, state gjson.Result) (manifest.Outcome, string) {
	switch st := state.Get("status").Str; st {
	case "completed":
		if tool == "bash" {
			if ex := state.Get("metadata.exit"); ex.Type == gjson.Number && ex.Int() != 0 {
				return manifest.OutcomeFailed, fmt.Sprintf("state.status=completed, metadata.exit=%d", ex.Int())
			}
		}
		return manifest.OutcomeApplied, "state.status=completed"
	case "error":
		e := state.Get("error").Str
		why := "state.status=error: " + emit.FirstLine(e)
		switch {
		case strings.Contains(e, "rejected permission") || strings.Contains(e, "permission was denied") || strings.Contains(e, "user dismissed"):
			return manifest.OutcomeRejected, why
		case strings.Contains(e, "aborted"):
			// Interrupted while it ran: the file may or may not have been written.
			return manifest.OutcomeUnknown, why
		}
		return manifest.OutcomeFailed, why
	case "pending", "running":
		return manifest.OutcomeUnknown, "state.status=" + st + ": the call never finished"
	case "":
		return manifest.OutcomeUnknown, "no state.status"
	default:
		return manifest.OutcomeUnknown, "state.status=" + emit.FirstLine(st)
	}
}

// resolve makes a tool path absolute against the working directory, as
// opencode does (path.join with the instance directory).
func resolve(cwd, p string) string {
	if p == "" {
		return ""
	}
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
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func (p *parser) emit(op manifest.Op) {
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

func (p *parser) header() { p.out.Header(p.h, p.headerSession) }

// headerSession is the header's session: its working directory and
// start are known by the time the first operation is settled.
func (p *parser) headerSession() manifest.Session {
	s := p.sess
	s.Cwd = p.sessionDirectory
	s.Start = p.first
	return s
}

func (p *parser) finish(rd *jsonl.Reader) {
	s := &p.sess
	rd.Fill(s)
	if !p.seenSession {
		p.warns.Add("no session record", manifest.Warning{File: p.file, Line: 1, Message: "no session record: not an opencode session stream"})
	}
	if p.reverted > 0 {
		p.warns.Add("reverted", manifest.Warning{File: p.file, Line: 1, Message: fmt.Sprintf(
			"%d file operation(s) are on messages reverted with /undo (from message %s): opencode restored their files from its snapshot; they are replayed like a rewound branch, since they happened on disk", p.reverted, p.revertMsg)})
	}
	s.Warnings = append(s.Warnings, p.warns.List()...)
	sort.SliceStable(s.Warnings, func(a, b int) bool { return s.Warnings[a].Line < s.Warnings[b].Line })
	s.Cwd = p.sessionDirectory
	if s.Cwd == "" {
		s.Cwd = p.cwd
	}
	s.Start, s.End = p.first, p.last
	switch {
	case p.lastBad:
		s.EndState = manifest.EndTruncated
	case p.open > 0:
		s.EndState = manifest.EndInTool
	case p.lastAborted:
		s.EndState = "aborted"
	case p.lastRole == "assistant" && !p.lastDone:
		s.EndState = manifest.EndOpen
	case p.lastRole == "":
		s.EndState = manifest.EndUnknown
	default:
		s.EndState = manifest.EndClean
	}
	p.header()
}
