package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/ocdb"
)

// These tests use the local runtime (plain processes), so they run
// everywhere; cmd's harness tests run Docker and bubblewrap.

func hermetic(t *testing.T) *Store {
	t.Helper()
	for _, k := range []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "SANDBOX_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, t.TempDir())
	}
	return &Store{Root: os.Getenv("SANDBOX_HOME")}
}

func runLocal(t *testing.T, st *Store, name string, command ...string) *Session {
	t.Helper()
	o := &RunOptions{Name: name, Runtime: "local", Project: t.TempDir(), Command: command}
	sess, _, err := st.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Run(context.Background(), sess, o); err != nil {
		t.Fatal(err)
	}
	sess, err = st.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

func TestExitsAreRecorded(t *testing.T) {
	st := hermetic(t)
	for _, tc := range []struct {
		name, script string
		state        State
		code         int
		signal       string
	}{
		{"ok", "echo fine", StateExited, 0, ""},
		{"three", "echo about to fail; exit 3", StateExited, 3, ""},
		{"killed", "echo doomed; kill -9 $$", StateKilled, 137, "SIGKILL"},
		{"termed", "echo doomed; kill -TERM $$", StateKilled, 143, "SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runLocal(t, st, tc.name, "sh", "-c", tc.script)
			if s.State != tc.state || s.ExitCode != tc.code || s.Signal != tc.signal || s.ExitStatus() != tc.code {
				t.Fatalf("got state %s code %d signal %q", s.State, s.ExitCode, s.Signal)
			}
			b, _ := os.ReadFile(st.RuntimeLog(tc.name))
			if !strings.Contains(string(b), `"message":"sandbox_stopped"`) {
				t.Fatalf("runtime log:\n%s", b)
			}
			words := strings.Fields(strings.TrimPrefix(tc.script, "echo "))[0]
			if last, _ := st.Tail(tc.name, OutputLogName, s.OutputFrom, 5); len(last) == 0 || !strings.HasPrefix(last[0], strings.TrimSuffix(words, ";")) {
				t.Fatalf("last output %q", last)
			}
			if !strings.Contains(string(b), `"last_output":["`) {
				t.Fatalf("no last output in the stop event:\n%s", b)
			}
		})
	}
}

func TestEnvironmentAndWorkspace(t *testing.T) {
	st := hermetic(t)
	s := runLocal(t, st, "env", "sh", "-c", `echo "home=$HOME session=$SANDBOX_SESSION ds=$DOCKER_SANDBOX cwd=$(pwd)"`)
	out, _ := os.ReadFile(st.OutputLog("env"))
	want := "home=" + st.Home("env") + " session=env ds=1 cwd=" + s.Project
	if !strings.Contains(string(out), want) {
		t.Fatalf("output %q, want %q", out, want)
	}
}

func TestResumeWithoutAgentSession(t *testing.T) {
	st := hermetic(t)
	runLocal(t, st, "r", "true")
	o := &RunOptions{Name: "r", Resume: true, Command: []string{"true"}}
	// Refused before the run, and by Run itself.
	if _, _, err := st.Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no agent session") {
		t.Fatalf("resume without an agent session: %v", err)
	}
	sess, err := st.Load("r")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Run(context.Background(), sess, o); err == nil || !strings.Contains(err.Error(), "no agent session") {
		t.Fatalf("resume without an agent session: %v", err)
	}
	if _, _, err := st.Open(context.Background(), &RunOptions{Name: "new", Resume: true, Command: []string{"true"}}); err == nil {
		t.Fatal("resume of a new session was accepted")
	}
}

func TestResumeCommand(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
		env      string
	}{
		{[]string{"claude", "-p", "x"}, []string{"claude", "--resume", "ID", "-p", "x"}, ""},
		{[]string{"/usr/bin/codex", "x"}, []string{"/usr/bin/codex", "resume", "ID", "x"}, ""},
		{[]string{"codex", "exec", "--json", "x"}, []string{"codex", "exec", "resume", "ID", "--json", "x"}, ""},
		{[]string{"opencode"}, []string{"opencode", "--session", "ID"}, ""},
		{[]string{"opencode", "/workspace"}, []string{"opencode", "--session", "ID", "/workspace"}, ""},
		{[]string{"/opt/bin/opencode", "run", "go on"}, []string{"/opt/bin/opencode", "run", "--session", "ID", "go on"}, ""},
		{[]string{"opencode", "run", "-c", "go on"}, []string{"opencode", "run", "-c", "go on"}, ""},
		{[]string{"opencode", "--session=ses_x"}, []string{"opencode", "--session=ses_x"}, ""},
		{[]string{"gemini", "-p", "x"}, []string{"gemini", "--resume", "ID", "-p", "x"}, ""},
		{[]string{"pi", "-p", "x"}, []string{"pi", "--session", "ID", "-p", "x"}, ""},
		{[]string{"copilot", "-p", "x"}, []string{"copilot", "--resume", "ID", "-p", "x"}, ""},
		{[]string{"/usr/local/bin/copilot", "--continue"}, []string{"/usr/local/bin/copilot", "--continue"}, ""},
		{[]string{"cursor-agent", "-p", "x"}, []string{"cursor-agent", "--resume", "ID", "-p", "x"}, ""},
		{[]string{"cursor-agent", "--resume=abc"}, []string{"cursor-agent", "--resume=abc"}, ""},
		{[]string{"crush"}, []string{"crush", "--session", "ID"}, ""},
		{[]string{"crush", "run", "go on"}, []string{"crush", "run", "--session", "ID", "go on"}, ""},
		{[]string{"crush", "-C"}, []string{"crush", "-C"}, ""},
		{[]string{"qwen"}, []string{"qwen", "--resume", "ID"}, ""},
		{[]string{"qwen", "-p", "go on"}, []string{"qwen", "--resume", "ID", "-p", "go on"}, ""},
		{[]string{"qwen", "-c"}, []string{"qwen", "-c"}, ""},
		{[]string{"goose"}, []string{"goose", "session", "--resume", "--session-id", "ID"}, ""},
		{[]string{"goose", "run", "-t", "go on"}, []string{"goose", "run", "--resume", "--session-id", "ID", "-t", "go on"}, ""},
		{[]string{"goose", "session", "-r"}, []string{"goose", "session", "-r"}, ""},
		{[]string{"droid"}, []string{"droid", "--resume", "ID"}, ""},
		{[]string{"droid", "exec", "go on"}, []string{"droid", "exec", "--session-id", "ID", "go on"}, ""},
		{[]string{"droid", "--fork", "abc"}, []string{"droid", "--fork", "abc"}, ""},
		{[]string{"aider", "x"}, []string{"aider", "x"}, "SANDBOX_RESUME_ID=ID"},
	} {
		got, env := resumeCommand(tc.in, "ID")
		if strings.Join(got, " ") != strings.Join(tc.want, " ") || strings.Join(env, "") != tc.env {
			t.Errorf("%v: got %v %v", tc.in, got, env)
		}
	}
}

func TestLockRefusesASecondRun(t *testing.T) {
	st := hermetic(t)
	unlock, err := st.Lock("x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Lock("x"); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second lock: %v", err)
	}
	if _, err := st.Lock("y"); err != nil {
		t.Fatalf("another session's lock: %v", err)
	}
	if !st.Locked("x") {
		t.Fatal("Locked is false while held")
	}
	unlock()
	if st.Locked("x") {
		t.Fatal("Locked is true after unlock")
	}
}

func TestDroppedSession(t *testing.T) {
	st := hermetic(t)
	sess := runLocal(t, st, "d", "sh", "-c", "echo last words")
	// As a harness that was killed mid-run leaves it.
	sess.State, sess.HarnessPID = StateRunning, 999999
	if err := st.Save(sess); err != nil {
		t.Fatal(err)
	}
	if !st.Check(context.Background(), sess) || sess.State != StateDropped {
		t.Fatalf("Check: state %s", sess.State)
	}
	b, _ := os.ReadFile(st.RuntimeLog("d"))
	if !strings.Contains(string(b), `"message":"session_drop"`) || !strings.Contains(string(b), "last words") {
		t.Fatalf("runtime log:\n%s", b)
	}
	if st.Check(context.Background(), sess) {
		t.Fatal("a dropped session was dropped twice")
	}
}

func TestValidName(t *testing.T) {
	for _, n := range []string{"ok", "fix-tests", "a.b_c", "20261121-abc"} {
		if err := ValidName(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	for _, n := range []string{"", "..", "../x", "a/b", ".hidden", "-flag", "a..b", strings.Repeat("x", 65), "a b"} {
		if ValidName(n) == nil {
			t.Errorf("%q accepted", n)
		}
	}
}

func TestSnapshotRestore(t *testing.T) {
	st := hermetic(t)
	s := runLocal(t, st, "snap", "sh", "-c", `mkdir -p "$HOME/.claude" && echo kept > "$HOME/.claude/note" && ln -s note "$HOME/.claude/link"`)
	s.AgentSessionID, s.Agent = "abc", "claude"
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := st.Snapshot("snap", &buf, nil); err != nil {
		t.Fatal(err)
	}
	r, err := st.Restore(bytes.NewReader(buf.Bytes()), RestoreOptions{Name: "snap2"})
	if err != nil {
		t.Fatal(err)
	}
	if r.AgentSessionID != "abc" || r.ID != "snap2" {
		t.Fatalf("restored %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(st.Home("snap2"), ".claude", "link")); string(b) != "kept\n" {
		t.Fatalf("restored workspace: %q", b)
	}
	if _, err := st.Restore(bytes.NewReader(buf.Bytes()), RestoreOptions{Name: "snap"}); err == nil {
		t.Fatal("restore over an existing session was accepted")
	}
	// A corrupted byte in a file is found by its checksum.
	bad := rewrite(t, buf.Bytes(), func(h *tar.Header, b []byte) []byte {
		if strings.HasSuffix(h.Name, "note") {
			return []byte("forged\n")
		}
		return b
	})
	if _, err := st.Restore(bytes.NewReader(bad), RestoreOptions{Name: "snap3"}); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt snapshot: %v", err)
	}
	if _, err := os.Stat(st.Dir("snap3")); !os.IsNotExist(err) {
		t.Fatal("a refused restore left a session")
	}
	entries, _ := os.ReadDir(filepath.Join(st.Root, "sessions"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".restore-") {
			t.Fatalf("a refused restore left %s", e.Name())
		}
	}
}

func TestRestoreRefusesEscapes(t *testing.T) {
	st := hermetic(t)
	for _, tc := range []struct{ name, member, link string }{
		{"dotdot", "../../escaped", ""},
		{"absolute", "/tmp/escaped", ""},
		{"through a symlink", "home/out/escaped", "home/out"},
	} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		if tc.link != "" {
			_ = tw.WriteHeader(&tar.Header{Name: tc.link, Typeflag: tar.TypeSymlink, Linkname: "/tmp"})
		}
		_ = tw.WriteHeader(&tar.Header{Name: tc.member, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1})
		_, _ = tw.Write([]byte("x"))
		tw.Close()
		zw.Close()
		if _, err := st.Restore(bytes.NewReader(buf.Bytes()), RestoreOptions{Name: "esc"}); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
		if _, err := os.Stat("/tmp/escaped"); err == nil {
			t.Fatalf("%s: wrote outside the session", tc.name)
		}
	}
}

// rewrite rebuilds a snapshot, changing members' content but not the
// checksums.
func rewrite(t *testing.T, snap []byte, f func(*tar.Header, []byte) []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(snap))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(tr)
		nb := f(h, b.Bytes())
		h.Size = int64(len(nb))
		_ = tw.WriteHeader(h)
		_, _ = tw.Write(nb)
	}
	tw.Close()
	zw.Close()
	return out.Bytes()
}

func TestGC(t *testing.T) {
	st := hermetic(t)
	runLocal(t, st, "old", "sh", "-c", "echo old")
	runLocal(t, st, "fresh", "sh", "-c", "echo fresh")
	old, _ := st.Load("old")
	// Age the session: its record and its output.
	past := time.Now().Add(-48 * time.Hour)
	_ = os.Chtimes(st.OutputLog("old"), past, past)
	writeUpdated(t, st, old, past)
	now := time.Now()
	acts, err := st.GC(context.Background(), GCOptions{TTL: 24 * time.Hour, DryRun: true, Now: now})
	if err != nil || len(acts) != 1 || acts[0].Session != "old" || acts[0].Action != "remove" {
		t.Fatalf("dry run: %+v %v", acts, err)
	}
	if _, err := os.Stat(st.Dir("old")); err != nil {
		t.Fatal("the dry run removed the session")
	}
	acts, err = st.GC(context.Background(), GCOptions{TTL: 24 * time.Hour, Now: now})
	if err != nil || len(acts) != 1 || acts[0].Error != "" {
		t.Fatalf("gc: %+v %v", acts, err)
	}
	if _, err := os.Stat(st.Dir("old")); !os.IsNotExist(err) {
		t.Fatal("gc kept the expired session")
	}
	if _, err := os.Stat(st.Dir("fresh")); err != nil {
		t.Fatal("gc removed a fresh session")
	}
	// The archive holds the record and the runtime log.
	r, err := st.Restore(mustOpen(t, acts[0].Archive), RestoreOptions{Name: "old-again"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "old-again" {
		t.Fatalf("archive restored as %+v", r)
	}
	if b, _ := os.ReadFile(st.RuntimeLog("old-again")); !strings.Contains(string(b), "sandbox_stopped") {
		t.Fatalf("the archive lost the runtime log: %s", b)
	}
}

// writeUpdated saves a record with an Updated time in the past (Save sets
// it to now).
func writeUpdated(t *testing.T, st *Store, s *Session, at time.Time) {
	t.Helper()
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(st.Dir(s.ID), "session.json")
	b, _ := os.ReadFile(p)
	ts, _ := s.Updated.MarshalText()
	pt, _ := at.UTC().MarshalText()
	if err := os.WriteFile(p, bytes.Replace(b, ts, pt, 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestUnavailableRuntimeNeverFallsBack(t *testing.T) {
	st := hermetic(t)
	t.Setenv("SANDBOX_DOCKER", filepath.Join(t.TempDir(), "no-docker"))
	sess := &Session{ID: "dock", Name: "dock", Runtime: "docker", Image: "x", Project: t.TempDir(), State: StateExited}
	if err := st.Save(sess); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	err := st.Run(context.Background(), sess, &RunOptions{Command: []string{"sh", "-c", "touch " + marker}})
	if err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("run on a missing runtime: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without its sandbox")
	}
}

func TestLastLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	_ = os.WriteFile(p, []byte("run1 a\nrun1 b\nrun2 a\nrun2 b\n"), 0o644)
	f := mustOpen(t, p)
	got, err := lastLines(f, int64(len("run1 a\nrun1 b\n")), 10)
	if err != nil || strings.Join(got, "|") != "run2 a|run2 b" {
		t.Fatalf("got %q %v", got, err)
	}
	if got, _ := lastLines(f, 0, 1); strings.Join(got, "|") != "run2 b" {
		t.Fatalf("got %q", got)
	}
	// An offset from a damaged record is clamped, not trusted.
	if got, _ := lastLines(f, -5, 1); strings.Join(got, "|") != "run2 b" {
		t.Fatalf("negative offset: got %q", got)
	}
	if got, _ := lastLines(f, 1<<40, 1); got != nil {
		t.Fatalf("offset past the end: got %q", got)
	}
}

// TestFindAgentSessionCodex: a Codex rollout in the workspace, under a name
// that carries no id, is found by its content, and the newest transcript
// wins.
func TestFindAgentSessionCodex(t *testing.T) {
	st := hermetic(t)
	sess := &Session{ID: "cx", Name: "cx", Runtime: "local", Project: t.TempDir()}
	if err := st.Save(sess); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(st.Home("cx"), ".codex", "sessions", "2026", "11", "20")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "older.jsonl")
	if err := os.WriteFile(old, []byte(`{"type":"session_meta","payload":{"id":"00000000-0000-4000-8000-000000000000","cwd":"/workspace"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	_ = os.Chtimes(old, past, past)
	if err := os.WriteFile(filepath.Join(dir, "renamed.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	st.FindAgentSession(sess)
	if sess.AgentSessionID != "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55" || sess.Agent != "codex" {
		t.Fatalf("found %s %q", sess.Agent, sess.AgentSessionID)
	}
	// Resuming it is codex's "resume ID".
	got, _ := resumeCommand([]string{"codex", "exec", "go on"}, sess.AgentSessionID)
	if strings.Join(got, " ") != "codex exec resume 019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55 go on" {
		t.Fatalf("resume command %v", got)
	}
}

// An opencode workspace keeps its sessions in one database: the newest
// session is the one to resume, passed back as --session ID.
func TestFindsOpencodeSession(t *testing.T) {
	st := hermetic(t)
	sess := &Session{ID: "oc", Name: "oc", Runtime: "local", Project: t.TempDir()}
	if err := st.Save(sess); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../fixtures/opencode/sessions.sql")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(st.Home("oc"), ".local", "share", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ocdb.Build(filepath.Join(dir, "opencode.db"), string(script)); err != nil {
		t.Fatal(err)
	}
	st.FindAgentSession(sess)
	if sess.AgentSessionID != "ses_7a1c30b41ffe9Hs2Kd7LmQpZ3c" || sess.Agent != "opencode" {
		t.Fatalf("found %s %q", sess.Agent, sess.AgentSessionID)
	}
	got, _ := resumeCommand([]string{"opencode", "run", "go on"}, sess.AgentSessionID)
	if strings.Join(got, " ") != "opencode run --session ses_7a1c30b41ffe9Hs2Kd7LmQpZ3c go on" {
		t.Fatalf("resume command %v", got)
	}
}

// TestContainerMemoryInBytes: Docker and Podman get --memory in bytes, as
// the harness reads the size (and as bwrap's and local's cgroup gets it):
// given 512MB as written, Docker would take it for 512 MiB.
func TestContainerMemoryInBytes(t *testing.T) {
	st := hermetic(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "docker")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$*\" >>"+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for memory, want := range map[string]string{"512MB": "512000000", "512m": "536870912", "1.5 GiB": "1610612736", "7000000": "7000000"} {
		sess := &Session{ID: "mem", Name: "mem", Runtime: "docker", Image: "img", Project: t.TempDir()}
		if err := st.Save(sess); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(calls)
		rt := &containerRuntime{name: "docker", bin: fake}
		if _, err := rt.Run(context.Background(), &Spec{Session: sess, Store: st, Command: []string{"true"}, Memory: memory,
			Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		var run string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "run ") {
				run = l
			}
		}
		if !strings.Contains(run, " --memory "+want+" --memory-swap "+want+" ") {
			t.Errorf("--memory %s: docker %s", memory, run)
		}
	}
}
