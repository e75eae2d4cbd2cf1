package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// read reads a manifest and returns what the Reader called back with, in
// order: "sessions", "op" and "file" events.
type read struct {
	Sessions      []Session
	Ops           []Op
	Files         []File
	SessionsCalls int
	// FileBeforeSessions is set when a file came before the sessions.
	FileBeforeSessions bool
}

func readAll(data []byte) (*read, error) {
	got := &read{}
	rd := Reader{
		Sessions: func(s []Session) error {
			got.SessionsCalls++
			got.Sessions = s
			return nil
		},
		Op: func(op Op) error { got.Ops = append(got.Ops, op); return nil },
		File: func(f File) error {
			if got.SessionsCalls == 0 {
				got.FileBeforeSessions = true
			}
			got.Files = append(got.Files, f)
			return nil
		},
	}
	return got, rd.Read(bytes.NewReader(data))
}

func mustRead(t *testing.T, data string) *read {
	t.Helper()
	got, err := readAll([]byte(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if got.SessionsCalls != 1 || got.FileBeforeSessions {
		t.Fatalf("sessions reported %d times (want once, before the files)", got.SessionsCalls)
	}
	return got
}

func str(s string) *string { return &s }

// sampleManifest is a manifest with every kind of content the writer
// carries: operations of each payload, sessions with warnings, files with
// text, non-UTF-8 (base64), absent and unknown states, and redactions.
func sampleManifest() ([]Op, []Session, []File, []Redaction) {
	at := time.Date(2026, 11, 20, 9, 12, 5, 123000000, time.UTC)
	ctx := "func main() {"
	ops := []Op{
		{Session: "s1", Seq: 0, Kind: KindPatch, Tool: "apply_patch", Cwd: "/w", Paths: []string{"/w/a.go", "/w/b.go"},
			Patch: &Patch{Hunks: []Hunk{
				{Kind: HunkAdd, Path: "a.go", Target: "/w/a.go", Contents: "package a\n", Line: 2},
				{Kind: HunkUpdate, Path: "b.go", MovePath: "c.go", Target: "/w/b.go", MoveTarget: "/w/c.go", Line: 4,
					Chunks: []Chunk{{Context: &ctx, OldLines: []string{"x"}, NewLines: []string{"y", ""}, EOF: true}}},
				{Kind: HunkDelete, Path: "d.go", Target: "/w/d.go", Line: 9},
			}},
			PatchText: "*** Begin Patch\n…", Outcome: OutcomeApplied, OutcomeEvidence: "patch_apply_end success=true",
			Evidence: []Evidence{{Path: "/w/a.go", Kind: EvidencePost, Content: "package a\n", Source: "patch_apply_end"},
				{Path: "/w/d.go", Kind: EvidencePre, Content: "gone\r\n", Source: "patch_apply_end", LFNormalized: true, NoFinalNewline: true}},
			Provenance: Provenance{Transcript: "r.jsonl", Line: 5, Offset: 2048, Time: at, CallID: "c1", TurnID: "t1", Carrier: "custom_tool_call"}},
		{Session: "s1", Seq: 1, Kind: KindWrite, Tool: "Write", Cwd: "/w", Paths: []string{"/w/n.txt"}, Content: str("héllo <&>\n"),
			Identity: "claude:toolu_1", Outcome: OutcomeApplied, OutcomeEvidence: "toolUseResult object",
			Provenance: Provenance{Transcript: "c.jsonl", Line: 7, Time: at.Add(time.Second), Carrier: "tool_use"}},
		{Session: "s1", Seq: 2, Kind: KindEdit, Tool: "MultiEdit", Cwd: "/w", Paths: []string{"/w/n.txt"},
			Edits: []Edit{{Old: "héllo", New: "hello"}, {Old: "<", New: "", ReplaceAll: true}}, Outcome: OutcomeFailed,
			OutcomeEvidence: "tool_result is_error: no", Note: "the user modified the proposed edit", LowConfidence: true},
		{Session: "s1", Seq: 3, Kind: KindNotebook, Tool: "NotebookEdit", Cwd: "/w", Paths: []string{"/w/nb.ipynb"},
			Notebook: &NotebookCell{CellID: "c2", NewSource: "print(1)", CellType: "code", EditMode: "insert"}, Outcome: OutcomeUnknown},
		{Session: "s1", Seq: 4, Kind: KindShell, Tool: "Bash", Cwd: "/w", Command: "rm -f a.go && cat <<'EOF' > b.go\nx\nEOF",
			Effects: []ShellEffect{{Kind: ShellDelete, Verb: "rm", Paths: []string{"/w/a.go"}, Cond: true},
				{Kind: ShellCreate, Verb: "redirect", Paths: []string{"/w/b.go"}, Content: str("x\n")},
				{Kind: ShellMove, Verb: "mv", Paths: []string{"/w/x", "/w/dir"}, IntoDir: true, Recursive: true}},
			Outcome: OutcomeRejected, OutcomeEvidence: "rejected"},
	}
	sessions := []Session{
		{ID: "s1", Agent: AgentCodex, AgentVersion: "0.130.0", Originator: "codex_cli_rs", Cwd: "/w", Transcript: "r.jsonl",
			TranscriptSHA256: strings.Repeat("ab", 32), Start: at, End: at.Add(time.Minute), EndState: EndTruncated,
			GitCommit: "deadbeef", ForkedFrom: "s0", Lines: 20, Bytes: 8618,
			Warnings: []Warning{{File: "r.jsonl", Line: 20, Offset: 8000, Message: "truncated last line"}}},
		{ID: "s2", Agent: AgentClaude, Cwd: "/w", Transcript: "c.jsonl", EndState: EndClean},
	}
	text, binary := "package a\n", "\xff\xfe\x00bin"
	files := []File{
		fileWith("/w/a.go", NewState(true, false, "", true, fakeSum), NewState(true, true, text, true, fakeSum)),
		fileWith("/w/bin.dat", NewState(false, false, "", true, fakeSum), NewState(true, true, binary, true, fakeSum)),
		fileWith("/w/gone.txt", NewState(true, true, "x", false, fakeSum), NewState(true, false, "", true, fakeSum)),
	}
	files[0].Sessions, files[0].States, files[0].Drift, files[0].Notes = []string{"s1", "s2"}, []string{"aa", "bb"}, []string{"drift"}, []string{"note"}
	files[1].Confidence, files[1].Reason, files[1].Fuzz, files[1].Redacted = "host-based", "why", []string{"fuzz"}, true
	files[2].MovedFrom, files[2].Kind, files[2].Outside = "/w/old.txt", "adr", true
	return ops, sessions, files, []Redaction{{Where: "/w/.env", Kind: "env-assignment", Count: 2}}
}

// fakeSum stands for sha256: the manifest carries digests, it does not
// compute them.
func fakeSum(string) string { return strings.Repeat("0a", 32) }

// fileWith is a file with a start and a final state.
func fileWith(path string, start, final State) File {
	return File{Path: path, Start: start, Final: final, Confidence: "exact", Ops: 1}
}

func write(t *testing.T, ops []Op, sessions []Session, files []File, reds []Redaction) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, op := range ops {
		if err := w.Op(op); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(sessions, files, reds); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteReadRoundTrip: reading what the Writer wrote gives the same
// operations, sessions and files, and writing them again the same bytes.
func TestWriteReadRoundTrip(t *testing.T) {
	ops, sessions, files, reds := sampleManifest()
	for _, tc := range []struct {
		name     string
		ops      []Op
		sessions []Session
		files    []File
	}{
		{"full", ops, sessions, files},
		{"no operations", nil, sessions, files},
		{"nothing", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := write(t, tc.ops, tc.sessions, tc.files, reds)
			if !json.Valid(data) {
				t.Fatalf("not JSON:\n%s", data)
			}
			got := mustRead(t, string(data))
			if !reflect.DeepEqual(got.Ops, tc.ops) {
				t.Errorf("operations differ:\ngot  %+v\nwant %+v", got.Ops, tc.ops)
			}
			wantSessions := tc.sessions
			if wantSessions == nil {
				wantSessions = []Session{}
			}
			if !reflect.DeepEqual(got.Sessions, wantSessions) {
				t.Errorf("sessions differ:\ngot  %+v\nwant %+v", got.Sessions, wantSessions)
			}
			if !reflect.DeepEqual(got.Files, tc.files) {
				t.Errorf("files differ:\ngot  %+v\nwant %+v", got.Files, tc.files)
			}
			if again := write(t, got.Ops, got.Sessions, got.Files, reds); !bytes.Equal(again, data) {
				t.Errorf("written again, the manifest differs:\n%s\nwas\n%s", again, data)
			}
		})
	}
	// Base64 content decodes back to the bytes it stands for.
	if b, err := files[1].Final.Text(); err != nil || b != "\xff\xfe\x00bin" || files[1].Final.Encoding != "base64" {
		t.Errorf("non-UTF-8 content: %q %v (encoding %s)", b, err, files[1].Final.Encoding)
	}
}

// TestReadFullForm reads hand-arranged full manifests: any key order the
// Writer does not produce, unknown keys, and a manifest without operations.
func TestReadFullForm(t *testing.T) {
	got := mustRead(t, `{"files": [{"path": "/w/a", "start": {"state": "absent"}, "final": {"state": "content", "encoding": "utf-8", "content": "A"}, "confidence": "exact", "ops": 1, "future": {"x": [1, 2]}}],
		"schema": "sandbox.manifest/v1", "generator": "a later sandbox", "operations": []}`)
	if len(got.Files) != 1 || got.Files[0].Path != "/w/a" || got.Sessions != nil {
		t.Fatalf("got %+v", got)
	}
	if s, _ := got.Files[0].Final.Text(); s != "A" {
		t.Fatalf("final content %q", s)
	}
	// Without files, the sessions are still reported, once, at the end.
	got = mustRead(t, `{"schema": "sandbox.manifest/v1", "sessions": [{"id": "s", "agent": "codex", "cwd": "/w", "transcript": "t", "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:00Z", "end_state": "clean", "lines": 1, "bytes": 1}]}`)
	if len(got.Sessions) != 1 || got.Sessions[0].ID != "s" {
		t.Fatalf("sessions: %+v", got.Sessions)
	}
}

// TestReadSimpleForm reads the agent-written form in every shape the
// design allows (docs/manifest.md, "The simple form").
func TestReadSimpleForm(t *testing.T) {
	type want struct {
		path    string
		final   string // "absent", or the content
		kind    string
		outside bool
	}
	for _, tc := range []struct {
		name     string
		doc      string
		sessions []Session
		files    []want
	}{
		{"the documented example", `{"session": "task1", "cwd": "/workspace", "exports": [
  {"path": "/workspace/report.txt", "content": "all tests passed\n", "type": "file", "created": "2026-11-21T10:00:00Z"},
  {"path": "dist/app.bin", "content": "AAEC/w==", "encoding": "base64"},
  {"path": "old.txt", "type": "delete"}
]}`, []Session{{ID: "task1", Cwd: "/workspace", Agent: "export"}}, []want{
			{"/workspace/report.txt", "all tests passed\n", "", false},
			{"/workspace/dist/app.bin", "\x00\x01\x02\xff", "", false},
			{"/workspace/old.txt", "absent", "", false}}},
		{"relative paths without cwd go under the destination", `{"session": "s", "exports": [{"path": "a/b.txt", "content": "x"}, {"path": "./c.txt", "content": "y"}]}`,
			[]Session{{ID: "s", Agent: "export"}}, []want{{RelativeRoot + "/a/b.txt", "x", "", false}, {RelativeRoot + "/c.txt", "y", "", false}}},
		{"an absolute path without cwd is outside", `{"session": "s", "exports": [{"path": "/etc/passwd", "content": "x"}]}`,
			[]Session{{ID: "s", Agent: "export"}}, []want{{"/etc/passwd", "x", "", true}}},
		{"a path that climbs out is outside, with or without cwd", `{"session": "s", "cwd": "/w", "exports": [{"path": "../x", "content": "1"}, {"path": "a/../../y", "content": "2"}, {"path": "a/../z", "content": "3"}]}`,
			[]Session{{ID: "s", Cwd: "/w", Agent: "export"}}, []want{{"../x", "1", "", true}, {"a/../../y", "2", "", true}, {"/w/z", "3", "", false}}},
		{"binary type means base64, artefact types are kinds", `{"session": "s", "cwd": "/w", "exports": [{"path": "b", "content": "aGk=", "type": "binary"}, {"path": "adr.md", "content": "# ADR", "type": "adr"}, {"path": "t", "content": "t", "type": "text"}]}`,
			[]Session{{ID: "s", Cwd: "/w", Agent: "export"}}, []want{{"/w/b", "hi", "", false}, {"/w/adr.md", "# ADR", "adr", false}, {"/w/t", "t", "", false}}},
		{"unknown fields anywhere are ignored", `{"version": 2, "session": "s", "meta": {"a": [1, {"b": null}]}, "cwd": "/w", "exports": [{"path": "a", "content": "x", "mode": "0644", "tags": ["t"], "sha256": null}], "trailer": true}`,
			[]Session{{ID: "s", Cwd: "/w", Agent: "export"}}, []want{{"/w/a", "x", "", false}}},
		{"no exports at all", `{"session": "s", "cwd": "/w"}`, []Session{{ID: "s", Cwd: "/w", Agent: "export"}}, nil},
		{"an empty list", `{"session": "s", "exports": []}`, []Session{{ID: "s", Agent: "export"}}, nil},
		{"two exports lists: one session, every file", `{"session": "s", "cwd": "/w", "exports": [{"path": "a", "content": "1"}], "exports": [{"path": "b", "content": "2"}]}`,
			[]Session{{ID: "s", Cwd: "/w", Agent: "export"}}, []want{{"/w/a", "1", "", false}, {"/w/b", "2", "", false}}},
		{"content that is not UTF-8 is carried as base64", `{"session": "s", "cwd": "/w", "exports": [{"path": "b", "content": "/w==", "encoding": "base64"}]}`,
			[]Session{{ID: "s", Cwd: "/w", Agent: "export"}}, []want{{"/w/b", "\xff", "", false}}},
		{"empty content is an empty file", `{"session": "s", "cwd": "/w", "exports": [{"path": "e"}]}`,
			[]Session{{ID: "s", Cwd: "/w", Agent: "export"}}, []want{{"/w/e", "", "", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRead(t, tc.doc)
			if !reflect.DeepEqual(got.Sessions, tc.sessions) {
				t.Errorf("sessions %+v, want %+v", got.Sessions, tc.sessions)
			}
			if len(got.Files) != len(tc.files) {
				t.Fatalf("%d files, want %d: %+v", len(got.Files), len(tc.files), got.Files)
			}
			for i, w := range tc.files {
				f := got.Files[i]
				final := "absent"
				if f.Final.State == StateContent {
					final, _ = f.Final.Text()
				}
				if f.Path != w.path || final != w.final || f.Kind != w.kind || f.Outside != w.outside {
					t.Errorf("file %d: %q final %q kind %q outside %v; want %+v", i, f.Path, final, f.Kind, f.Outside, w)
				}
				if enc := f.Final.Encoding; f.Final.State == StateContent && (enc == "utf-8") != utf8.ValidString(final) {
					t.Errorf("file %d: encoding %s for %q", i, enc, final)
				}
				if f.Start.State != StateUnknown || f.Confidence != "exact" || f.Ops != 1 || len(f.Sessions) != 1 || f.Sessions[0] != got.Sessions[0].ID {
					t.Errorf("file %d: start %q, confidence %q, ops %d, sessions %v", i, f.Start.State, f.Confidence, f.Ops, f.Sessions)
				}
			}
		})
	}
}

// TestReadSimpleFormKeyOrder: an agent may write "session" and "cwd" after
// "exports". The reader streams the exports, so it cannot apply a cwd it
// has not seen yet; what it must never do is send a file somewhere else
// than the same form written in the documented order would.
func TestReadSimpleFormKeyOrder(t *testing.T) {
	exports := `"exports": [{"path": "rel.txt", "content": "r"}, {"path": "/w/abs.txt", "content": "a"}, {"path": "/etc/x", "content": "e"}]`
	before := mustRead(t, `{"session": "s", "cwd": "/w", `+exports+`}`)
	after := mustRead(t, `{`+exports+`, "session": "s", "cwd": "/w"}`)
	if len(before.Files) != len(after.Files) {
		t.Fatalf("%d files, then %d", len(before.Files), len(after.Files))
	}
	for i, f := range after.Files {
		b := before.Files[i]
		rel := strings.TrimPrefix(f.Path, RelativeRoot+"/")
		switch {
		case f.Outside:
			// Not written at all: safe, if less than the author meant.
		case rel != f.Path && strings.TrimPrefix(b.Path, "/w/") == rel:
			// The same place under the destination.
		case f.Path == b.Path && f.Outside == b.Outside:
		default:
			t.Errorf("export %d: %q (outside %v) with the cwd after, %q (outside %v) before", i, f.Path, f.Outside, b.Path, b.Outside)
		}
	}
}

// TestReadRefuses: what is not a manifest is an error, with the byte
// offset where reading stopped, and nothing is reported after it.
func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, msg string }{
		{"empty", ``, "EOF"},
		{"not an object", `[1]`, "not a JSON object"},
		{"a string", `"x"`, "not a JSON object"},
		{"another schema", `{"schema": "sandbox.manifest/v2", "files": []}`, `schema "sandbox.manifest/v2"`},
		{"neither form", `{"files": []}`, "neither a sandbox manifest"},
		{"an empty object", `{}`, "neither a sandbox manifest"},
		{"exports not a list", `{"session": "s", "exports": {"path": "a"}}`, "expected an array"},
		{"an export without a path", `{"session": "s", "exports": [{"content": "x"}]}`, "exports[0]: no path"},
		{"content that is not base64", `{"session": "s", "exports": [{"path": "a", "content": "***", "encoding": "base64"}]}`, "not base64"},
		{"files not a list", `{"schema": "sandbox.manifest/v1", "files": 3}`, "expected an array"},
		{"an operation of the wrong shape", `{"schema": "sandbox.manifest/v1", "operations": [{"seq": "one"}]}`, "cannot unmarshal"},
		{"a session of the wrong shape", `{"schema": "sandbox.manifest/v1", "sessions": {"id": 1}}`, "cannot unmarshal"},
		{"a file of the wrong shape", `{"schema": "sandbox.manifest/v1", "files": [{"ops": "x"}]}`, "cannot unmarshal"},
		{"the schema of the wrong type", `{"schema": 1}`, "cannot unmarshal"},
		{"the session of the wrong type", `{"session": ["s"], "exports": []}`, "cannot unmarshal"},
		{"an unknown field that is not JSON", `{"session": "s", "x": tru, "exports": []}`, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want an error containing %q", err, tc.msg)
			}
			var re *ReadError
			if errors.As(err, &re) && (re.Offset < 0 || re.Offset > int64(len(tc.doc))) {
				t.Errorf("offset %d outside the %d-byte input", re.Offset, len(tc.doc))
			}
		})
	}
}

// TestReadBroken cuts and corrupts valid manifests of both forms at every
// byte: each cut is an error at or before the cut (a reader that accepted
// a prefix would apply half a manifest), and nothing panics.
func TestReadBroken(t *testing.T) {
	ops, sessions, files, reds := sampleManifest()
	full := write(t, ops, sessions, files, reds)
	simple := []byte(`{"session": "task1", "cwd": "/workspace", "exports": [{"path": "a.txt", "content": "x\n"}, {"path": "b.bin", "content": "AAEC/w==", "encoding": "base64"}, {"path": "old.txt", "type": "delete"}]}`)
	for name, doc := range map[string][]byte{"full": full, "simple": simple} {
		t.Run(name, func(t *testing.T) {
			end := len(bytes.TrimRight(doc, "\n"))
			// Every byte of the small form; of the large one, every byte
			// after a value or a separator (where a cut leaves JSON that
			// looks whole so far) and every seventh byte.
			step := 1 + len(doc)/1000
			for cut := 0; cut < end; cut++ {
				if cut%step != 0 && (cut == 0 || bytes.IndexByte([]byte(",]}"), doc[cut-1]) < 0) {
					continue
				}
				_, err := readAll(doc[:cut])
				if err == nil {
					t.Fatalf("cut at byte %d of %d: read without error", cut, end)
				}
				var re *ReadError
				if errors.As(err, &re) && re.Offset > int64(cut) {
					t.Fatalf("cut at byte %d: error at byte %d, past the end", cut, re.Offset)
				}
			}
			// Corrupted bytes (the fuzz target FuzzRead tries many more).
			for at := 0; at < end; at += 1 + len(doc)/300 {
				for _, c := range []byte{'}', '"', 'x'} {
					bad := bytes.Clone(doc)
					bad[at] = c
					_, _ = readAll(bad) // must not panic
				}
			}
		})
	}
}

// TestReadCallbackErrors: an error from a callback stops the reading and
// is returned as it is.
func TestReadCallbackErrors(t *testing.T) {
	stop := errors.New("stop")
	ops, sessions, files, reds := sampleManifest()
	full := write(t, ops, sessions, files, reds)
	simple := []byte(`{"session": "s", "exports": [{"path": "a", "content": "x"}, {"path": "b", "content": "y"}]}`)
	for _, tc := range []struct {
		name string
		doc  []byte
		rd   func(*int) Reader
	}{
		{"op", full, func(n *int) Reader { return Reader{Op: func(Op) error { *n++; return stop }} }},
		{"sessions", full, func(n *int) Reader { return Reader{Sessions: func([]Session) error { *n++; return stop }} }},
		{"file", full, func(n *int) Reader { return Reader{File: func(File) error { *n++; return stop }} }},
		{"simple sessions", simple, func(n *int) Reader { return Reader{Sessions: func([]Session) error { *n++; return stop }} }},
		{"simple file", simple, func(n *int) Reader { return Reader{File: func(File) error { *n++; return stop }} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			if err := tc.rd(&n).Read(bytes.NewReader(tc.doc)); !errors.Is(err, stop) {
				t.Fatalf("got %v", err)
			}
			if n != 1 {
				t.Fatalf("called %d times after returning an error", n)
			}
		})
	}
}

// failingWriter refuses every write after the first n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriterErrors: a Writer whose output fails says so, from the call
// that failed on, and never reports a manifest written.
func TestWriterErrors(t *testing.T) {
	ops, sessions, files, reds := sampleManifest()
	for _, n := range []int{0, 10, 4000} {
		w := NewWriter(&failingWriter{n: n})
		var err error
		for _, op := range ops {
			if e := w.Op(op); e != nil && err == nil {
				err = e
			}
		}
		if e := w.Close(sessions, files, reds); err == nil {
			err = e
		}
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("output failing after %d bytes: %v", n, err)
		}
	}
	// A value JSON cannot hold is an error too, never a partial document.
	var buf bytes.Buffer
	w := NewWriter(&buf)
	bad := File{Path: "x", Start: State{State: StateUnknown}}
	if err := w.Close([]Session{{ID: "s", Start: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}, []File{bad}, nil); err == nil {
		t.Error("a time JSON cannot hold was written")
	}
}

func TestCutText(t *testing.T) {
	long := "first line\n" + strings.Repeat("é", 3000) + "\nFAIL: the end"
	for _, c := range []struct {
		in   string
		n    int
		cut  bool
		want []string
	}{
		{"  short\n", 100, false, []string{"short"}},
		{long, 300, true, []string{"first line", "\n…\n", "FAIL: the end"}},
		{"\xff\xfe bad", 100, false, []string{"\uFFFD"}},
	} {
		got, cut := CutText(c.in, c.n)
		if cut != c.cut || !utf8.ValidString(got) || len(got) > c.n+len("\n…\n")+4 {
			t.Errorf("CutText(%.20q, %d) = %.40q (%d bytes), %v", c.in, c.n, got, len(got), cut)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("CutText(%.20q, %d) = %.60q: lacks %q", c.in, c.n, got, w)
			}
		}
	}
}
