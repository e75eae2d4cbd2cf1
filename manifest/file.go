package manifest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"unicode/utf8"
)

// Schema is the version of the export manifest.
const Schema = "sandbox.manifest/v1"

// State is a file's content at one point: "content" (with its sha256 and,
// when carried, the content itself), "absent", or "unknown".
type State struct {
	State  string `json:"state"`
	SHA256 string `json:"sha256,omitempty"`
	// Encoding is "utf-8" or "base64" (content that is not UTF-8).
	Encoding string  `json:"encoding,omitempty"`
	Content  *string `json:"content,omitempty"`
}

// States of a file.
const (
	StateContent = "content"
	StateAbsent  = "absent"
	StateUnknown = "unknown"
)

// NewState returns the state of a known content (exists) or absence.
func NewState(known, exists bool, text string, withContent bool, sum func(string) string) State {
	switch {
	case !known:
		return State{State: StateUnknown}
	case !exists:
		return State{State: StateAbsent}
	}
	s := State{State: StateContent, SHA256: sum(text)}
	if withContent {
		s.Encoding, s.Content = "utf-8", &text
		if !utf8.ValidString(text) {
			enc := base64.StdEncoding.EncodeToString([]byte(text))
			s.Encoding, s.Content = "base64", &enc
		}
	}
	return s
}

// Text returns the state's content, decoding base64.
func (s State) Text() (string, error) {
	if s.Content == nil {
		return "", nil
	}
	if s.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(*s.Content)
		return string(b), err
	}
	return *s.Content, nil
}

// File is one reconstructed file in a manifest.
type File struct {
	// Path is the file as the agent saw it.
	Path       string   `json:"path"`
	Sessions   []string `json:"sessions,omitempty"`
	Start      State    `json:"start"`
	Final      State    `json:"final"`
	Confidence string   `json:"confidence"`
	Ops        int      `json:"ops"`
	MovedFrom  string   `json:"moved_from,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Drift      []string `json:"drift,omitempty"`
	Fuzz       []string `json:"fuzz,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	// States are the sha256 of every content the file had during the
	// session, so a host copy that is only behind can be moved forward.
	States []string `json:"states,omitempty"`
	// Redacted says the content was changed by --redact: it is not the
	// file's (nor its sha256's), and apply grades it redacted, written
	// only when asked to be.
	Redacted bool `json:"redacted,omitempty"`
	// Kind is the kind of artefact an agent said it exported (the simple
	// form's "type" when it is not an operation: "adr", "skill", "config").
	Kind string `json:"kind,omitempty"`
	// Outside says the file's path leads outside its root ("..", or an
	// absolute path in a form that has no working directory): never written.
	Outside bool `json:"outside,omitempty"`
	// Base names where Start came from: "transcript", "git:<short hash>"
	// (the session's start commit), "host" or "--base".
	Base string `json:"base,omitempty"`
}

// Redaction is what --redact replaced.
type Redaction struct {
	Where string `json:"where"`
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Writer writes a manifest as a stream: operations first (as they are
// parsed), then sessions, files and redactions. The output depends only on
// what is written, so the same input gives the same bytes.
type Writer struct {
	w     *bufio.Writer
	ops   int
	err   error
	begun bool
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 256<<10)} }

func (m *Writer) raw(s string) {
	if m.err == nil {
		_, m.err = m.w.WriteString(s)
	}
}

func (m *Writer) value(v any, indent string) {
	if m.err != nil {
		return
	}
	b, err := json.MarshalIndent(v, indent, "  ")
	if err != nil {
		m.err = err
		return
	}
	_, m.err = m.w.Write(b)
}

func (m *Writer) begin() {
	if !m.begun {
		m.begun = true
		m.raw("{\n  \"schema\": \"" + Schema + "\",\n  \"operations\": [")
	}
}

// Op writes one operation.
func (m *Writer) Op(op Op) error {
	m.begin()
	if m.ops > 0 {
		m.raw(",")
	}
	m.raw("\n    ")
	m.value(op, "    ")
	m.ops++
	return m.err
}

// Close writes the sessions, files and redactions and ends the document.
func (m *Writer) Close(sessions []Session, files []File, redactions []Redaction) error {
	m.begin()
	if m.ops > 0 {
		m.raw("\n  ")
	}
	m.raw("],\n  \"sessions\": ")
	if sessions == nil {
		sessions = []Session{}
	}
	m.value(sessions, "  ")
	m.raw(",\n  \"files\": [")
	for i, f := range files {
		if i > 0 {
			m.raw(",")
		}
		m.raw("\n    ")
		m.value(f, "    ")
	}
	if len(files) > 0 {
		m.raw("\n  ")
	}
	m.raw("]")
	if len(redactions) > 0 {
		m.raw(",\n  \"redactions\": ")
		m.value(redactions, "  ")
	}
	m.raw("\n}\n")
	if m.err == nil {
		m.err = m.w.Flush()
	}
	return m.err
}

// Export is one file in the simple form an agent can write inside a
// sandbox: {"session": "…", "exports": [{"path", "content", "type", "created"}]}.
// Fields the reader does not know are ignored, never an error: agents write
// this form by hand.
type Export struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	// Type is "delete" for a deletion; any other value ("file", "text",
	// "binary", or the kind of artefact: "adr", "skill", "config"…) is a
	// file with this content. Encoding "base64" marks content that is not
	// text.
	Type     string `json:"type,omitempty"`
	Encoding string `json:"encoding,omitempty"`
	// Created is when the agent made it, as the agent wrote it (RFC 3339
	// by sandbox; kept as text, since agents write dates in many forms).
	Created string `json:"created,omitempty"`
}

// SimpleForm is the agent-written manifest.
type SimpleForm struct {
	Session string   `json:"session"`
	Cwd     string   `json:"cwd,omitempty"`
	Exports []Export `json:"exports"`
}

// Reader reads a manifest as a stream: Read calls back for every session
// list, operation and file, so a manifest of any size is read one file's
// content at a time. The simple agent-written form reads as files.
type Reader struct {
	// Sessions is called once with the sessions, before the files.
	Sessions func([]Session) error
	Op       func(Op) error
	File     func(File) error
}

// ReadError is a manifest that cannot be read.
type ReadError struct {
	Offset int64
	Err    error
}

func (e *ReadError) Error() string { return fmt.Sprintf("byte %d: %v", e.Offset, e.Err) }
func (e *ReadError) Unwrap() error { return e.Err }

// Read reads a manifest from r.
func (rd Reader) Read(r io.Reader) error {
	d := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	fail := func(err error) error { return &ReadError{Offset: d.InputOffset(), Err: err} }
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return fail(err)
	}
	var schema string
	var simple SimpleForm
	isSimple := false
	var sessions []Session
	sessionsDone := false
	flushSessions := func() error {
		if sessionsDone || rd.Sessions == nil {
			sessionsDone = true
			return nil
		}
		sessionsDone = true
		return rd.Sessions(sessions)
	}
	// The simple form's one session, reported once however many "exports"
	// lists the document holds.
	simpleSessions := func() error {
		if sessionsDone {
			return nil
		}
		sessionsDone = true
		return rd.simpleSessions(simple)
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := t.(string)
		switch key {
		case "schema":
			if err := d.Decode(&schema); err != nil {
				return fail(err)
			}
			if schema != Schema {
				return fail(fmt.Errorf("schema %q: this sandbox reads %s", schema, Schema))
			}
		case "operations":
			if err := eachElement(d, func() error {
				var op Op
				if err := d.Decode(&op); err != nil {
					return err
				}
				if rd.Op != nil {
					return rd.Op(op)
				}
				return nil
			}); err != nil {
				return fail(err)
			}
		case "sessions":
			if err := d.Decode(&sessions); err != nil {
				return fail(err)
			}
		case "files":
			if err := flushSessions(); err != nil {
				return err
			}
			if err := eachElement(d, func() error {
				var f File
				if err := d.Decode(&f); err != nil {
					return err
				}
				if rd.File != nil {
					return rd.File(f)
				}
				return nil
			}); err != nil {
				return fail(err)
			}
		case "session":
			isSimple = true
			if err := d.Decode(&simple.Session); err != nil {
				return fail(err)
			}
		case "cwd":
			if err := d.Decode(&simple.Cwd); err != nil {
				return fail(err)
			}
		case "exports":
			// One export at a time: the form can carry hundreds of MB.
			isSimple = true
			n := 0
			if err := eachElement(d, func() error {
				var e Export
				if err := d.Decode(&e); err != nil {
					return err
				}
				if err := simpleSessions(); err != nil {
					return err
				}
				n++
				return rd.simpleExport(simple.Session, simple.Cwd, n-1, e)
			}); err != nil {
				return fail(err)
			}
			if err := simpleSessions(); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	// More is false at the end of the input too: only the closing brace
	// says the manifest is whole. A manifest cut between two keys would
	// otherwise read as a smaller one (without the files that say which
	// content was redacted, say).
	if t, err := d.Token(); err != nil || t != json.Delim('}') {
		if err == nil {
			err = errors.New("expected the end of the object")
		}
		return fail(err)
	}
	if isSimple {
		return simpleSessions()
	}
	if schema == "" {
		return fail(errors.New(`neither a sandbox manifest ("schema") nor the simple form ("exports")`))
	}
	return flushSessions()
}

func eachElement(d *json.Decoder, each func() error) error {
	if t, err := d.Token(); err != nil || t != json.Delim('[') {
		if err == nil {
			err = errors.New("expected an array")
		}
		return err
	}
	for d.More() {
		if err := each(); err != nil {
			return err
		}
	}
	_, err := d.Token()
	return err
}

// simpleSessions reports the simple form's one session. Its "session" and
// "cwd" are read when they come before "exports", as sandbox writes them.
func (rd Reader) simpleSessions(s SimpleForm) error {
	if rd.Sessions == nil {
		return nil
	}
	return rd.Sessions([]Session{{ID: s.Session, Cwd: s.Cwd, Agent: "export"}})
}

// RelativeRoot stands for the destination root in the paths of a simple form
// that names no working directory; it can be no real path (it holds a NUL).
const RelativeRoot = "/\x00relative"

// simpleExport reads one export of the agent-written form as a file whose
// final content is exact and whose start is unknown.
func (rd Reader) simpleExport(session, cwd string, i int, e Export) error {
	if e.Path == "" {
		return fmt.Errorf("exports[%d]: no path", i)
	}
	f := File{Path: e.Path, Sessions: []string{session}, Start: State{State: StateUnknown}, Confidence: "exact", Ops: 1}
	switch e.Type {
	case "delete":
		f.Final = State{State: StateAbsent}
	default:
		if e.Type != "" && e.Type != "file" && e.Type != "text" && e.Type != "binary" {
			f.Kind = e.Type
		}
		content := e.Content
		if e.Encoding == "base64" || e.Type == "binary" {
			b, err := base64.StdEncoding.DecodeString(e.Content)
			if err != nil {
				return fmt.Errorf("exports[%d] %s: content is not base64: %w", i, e.Path, err)
			}
			content = string(b)
		}
		f.Final = State{State: StateContent, Encoding: "utf-8", Content: &content}
		if !utf8.ValidString(content) {
			// A State says "utf-8" only of text that is: written out as
			// JSON, other bytes would turn into U+FFFD.
			enc := base64.StdEncoding.EncodeToString([]byte(content))
			f.Final.Encoding, f.Final.Content = "base64", &enc
		}
	}
	// A relative path is relative to the form's working directory (or the
	// destination); one that climbs out with ".." never maps anywhere.
	if !path.IsAbs(e.Path) {
		if !filepath.IsLocal(filepath.FromSlash(e.Path)) {
			f.Outside = true
		} else if cwd != "" {
			f.Path = path.Join(cwd, e.Path)
		} else {
			f.Path = path.Join(RelativeRoot, e.Path)
		}
	} else if cwd == "" {
		// With no working directory, nothing says where an absolute path
		// belongs: it is not re-rooted into the destination.
		f.Outside = true
	}
	if rd.File != nil {
		return rd.File(f)
	}
	return nil
}
