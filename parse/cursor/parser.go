package cursor

import (
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// carrier is how Cursor CLI's operations are carried: a tool_use block.
const carrier = "cursor_tool_use"

// unknown is the outcome evidence of every call: the transcript has none.
const unknown = "Cursor CLI's transcript records no result: the call may have been rejected, failed or interrupted"

type parser struct {
	warns jsonl.Warner
	file  string
	h     emit.Handler
	out   emit.Sequencer
	sess  manifest.Session
	cwd   string
	// slug is the project folder's name the transcript lies under, which
	// the working directory is found from ("" when it lies elsewhere).
	slug     string
	lastCall bool // the last turn is the assistant's, with a call
}

// stream reads a Cursor CLI transcript from r and hands each operation to
// h as it is read. It returns the session.
func stream(ctx context.Context, r io.Reader, file string, h emit.Handler) (manifest.Session, error) {
	p := &parser{file: file, h: h, slug: projectSlug(file)}
	p.sess = manifest.Session{Agent: name, Transcript: file, ID: idFromPath(file)}
	rd := jsonl.NewReader(r, file)
	defer rd.Close()
	err := rd.Each(ctx, p.record)
	rd.Fill(&p.sess)
	p.finish()
	return p.sess, err
}

// idFromPath is the chat id: the transcript's name.
func idFromPath(file string) string {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	for _, ext := range []string{".zst", ".gz", ".jsonl"} {
		base = strings.TrimSuffix(base, ext)
	}
	return strings.ToLower(base)
}

// projectSlug is the name of the project folder a transcript lies in
// (…/projects/<slug>/agent-transcripts/…), or "".
func projectSlug(file string) string {
	parts := strings.Split(strings.ReplaceAll(file, `\`, "/"), "/")
	for i := len(parts) - 2; i >= 1; i-- {
		if parts[i] == "agent-transcripts" && i >= 2 && parts[i-2] == "projects" {
			return parts[i-1]
		}
	}
	return ""
}

// slugOf is the project folder's name Cursor gives a directory: the path
// without its leading slash, every character but a letter or a digit made
// a dash.
func slugOf(dir string) string {
	b := []byte(strings.TrimPrefix(dir, "/"))
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// rootFor is the directory above (or at) an absolute path p whose folder
// name is slug, or "": the working directory the path says.
func rootFor(slug, p string) string {
	if slug == "" || !path.IsAbs(p) {
		return ""
	}
	for d := path.Dir(path.Clean(p)); d != "/" && d != "."; d = path.Dir(d) {
		if slugOf(d) == slug {
			return d
		}
	}
	return ""
}

// pathValue finds the paths a transcript's head names.
var pathValue = regexp.MustCompile(`"(?:path|working_directory)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// projectRoot is the working directory of the transcript file, from the
// paths its head names.
func projectRoot(file string, head []byte) string {
	slug := projectSlug(file)
	if slug == "" {
		return ""
	}
	for _, m := range pathValue.FindAllSubmatch(head, -1) {
		p, err := strconv.Unquote(`"` + string(m[1]) + `"`)
		if err != nil {
			continue
		}
		if r := rootFor(slug, p); r != "" {
			return r
		}
	}
	return ""
}

func (p *parser) warn(rec jsonl.Record, format string, args ...any) {
	p.warns.Add(format, manifest.Warning{File: p.file, Line: rec.Line, Offset: rec.Offset, Message: fmt.Sprintf(format, args...)})
}

// record handles one turn.
func (p *parser) record(rec jsonl.Record) {
	p.out.Line = rec.Data
	role, _ := jsonl.String(rec.Field("role"))
	if len(role) == 0 {
		if typ, _ := jsonl.String(rec.Field("type")); len(typ) > 0 {
			return // a later build's turn_ended and the like
		}
		p.warn(rec, "record has no \"role\"")
		return
	}
	msg := jsonl.Fields(rec.Field("message"))
	content := msg.Raw("content")
	p.lastCall = false
	switch string(role) {
	case "user":
		if p.h.Event != nil {
			if text := userText(content); text != "" {
				p.h.Event(manifest.Event{Kind: manifest.EventTurn, Line: rec.Line, Text: emit.Excerpt(text, 200)})
			}
		}
	case "assistant":
		for b := range jsonl.Each(content) {
			blk := b.Obj
			if !blk.Is("type", "tool_use") {
				continue
			}
			p.lastCall = true
			name := blk.Get("name").Str
			input := jsonl.Fields(blk.Raw("input"))
			if p.h.Event != nil {
				p.h.Event(manifest.Event{Kind: manifest.EventCall, Line: rec.Line, Tool: name, Target: target(&input),
					Outcome: manifest.OutcomeUnknown, Detail: unknown})
			}
			p.build(rec, name, &input)
		}
	}
}

// userText is a user turn's text, without the tags Cursor wraps it in.
func userText(content []byte) string {
	var parts []string
	for b := range jsonl.Each(content) {
		blk := b.Obj
		if blk.Is("type", "text") {
			s, _ := blk.Str("text")
			parts = append(parts, s)
		}
	}
	text := strings.Join(parts, "\n")
	if i := strings.Index(text, "<user_query>"); i >= 0 {
		text = text[i+len("<user_query>"):]
		if j := strings.Index(text, "</user_query>"); j >= 0 {
			text = text[:j]
		}
	}
	return strings.TrimSpace(text)
}

func target(in *jsonl.Object) string {
	for _, k := range []string{"path", "file_path", "command"} {
		if v := in.Get(k).Str; v != "" {
			return emit.Excerpt(v, 160)
		}
	}
	return ""
}

// resolve makes a tool path absolute against the working directory.
func resolve(cwd, p string) string {
	if p == "" {
		return ""
	}
	if path.IsAbs(p) || cwd == "" {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

// learnCwd takes the working directory from the first path that says it.
func (p *parser) learnCwd(paths ...string) {
	for _, fp := range paths {
		if p.cwd != "" {
			return
		}
		p.cwd = rootFor(p.slug, fp)
	}
}

// build makes the operation of a call. Its outcome is unknown.
func (p *parser) build(rec jsonl.Record, name string, in *jsonl.Object) {
	fp := in.Get("path").Str
	if fp == "" {
		fp = in.Get("file_path").Str
	}
	op := manifest.Op{Tool: name, Provenance: manifest.Provenance{Transcript: p.file, Line: rec.Line, Offset: rec.Offset, Carrier: carrier}}
	switch name {
	case "Write", "StrReplace", "Delete":
		if fp == "" {
			p.warn(rec, "%s call names no file", name)
			return
		}
		p.learnCwd(fp)
		target := resolve(p.cwd, fp)
		op.Paths = []string{target}
		switch name {
		case "Write":
			op.Kind = manifest.KindWrite
			content, _ := in.Str("contents")
			op.Content = &content
		case "StrReplace":
			op.Kind = manifest.KindEdit
			old, ok := in.Str("old_string")
			if !ok {
				p.warn(rec, "StrReplace call on %s has no old_string", fp)
				return
			}
			neu, _ := in.Str("new_string")
			op.Edits = []manifest.Edit{{Old: old, New: neu, ReplaceAll: in.Get("replace_all").Bool()}}
		case "Delete":
			op.Kind = manifest.KindPatch
			op.Patch = &manifest.Patch{Hunks: []manifest.Hunk{{Kind: manifest.HunkDelete, Path: fp, Target: target, Line: 1}}}
		}
	case "Shell":
		cmd := in.Get("command").Str
		sh := shellcmd.Parse(cmd)
		if !sh.Writes() {
			return
		}
		wd := in.Get("working_directory").Str
		if wd != "" {
			p.learnCwd(wd + "/-") // the directory itself may be the root
		}
		if wd == "" {
			wd = p.cwd
		}
		op.Kind = manifest.KindShell
		op.Command = strings.Clone(cmd)
		shellcmd.Fill(&op, sh, wd, resolve)
	default:
		return
	}
	op.Cwd = p.cwd
	op.Outcome, op.OutcomeEvidence = manifest.OutcomeUnknown, unknown
	p.out.Op(p.h, op, p.sess.ID, p.headerSession)
}

// headerSession is the header's session.
func (p *parser) headerSession() manifest.Session {
	s := p.sess
	s.Cwd = p.cwd
	return s
}

func (p *parser) finish() {
	p.out.Line = nil
	s := &p.sess
	s.Warnings = append(s.Warnings, p.warns.List()...)
	s.Cwd = p.cwd
	s.EndState = emit.EndOf(s.Warnings, p.lastCall, false)
	p.out.Header(p.h, p.headerSession)
}
