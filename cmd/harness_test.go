package cmd

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/harness"
)

// The harness tests run the real runtimes (Docker, bubblewrap) with the
// fake agent of fixtures/fakeagent, installed as "claude". They skip, saying
// what is missing, where a runtime is not there.

var fakeAgent struct {
	once sync.Once
	dir  string
	err  error
}

// buildFakeAgent builds the fake agent, static, once per test binary.
func buildFakeAgent(t *testing.T) string {
	t.Helper()
	fakeAgent.once.Do(func() {
		dir, err := os.MkdirTemp("", "sandbox-fakeagent-")
		if err != nil {
			fakeAgent.err = err
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "claude"), "../fixtures/fakeagent")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fakeAgent.err = fmt.Errorf("building the fake agent: %v\n%s", err, out)
		}
		fakeAgent.dir = dir
	})
	if fakeAgent.err != nil {
		t.Fatal(fakeAgent.err)
	}
	return fakeAgent.dir
}

// harnessEnv is a hermetic environment for sandbox runs: fresh homes, the
// fake agent first in PATH, and a project directory.
type harnessEnv struct {
	t       *testing.T
	root    string // SANDBOX_HOME
	project string
	env     []string
	runArgs []string // --runtime, --image, …
}

func newHarnessEnv(t *testing.T, runArgs ...string) *harnessEnv {
	agent := buildFakeAgent(t)
	h := &harnessEnv{t: t, root: t.TempDir(), project: t.TempDir(), runArgs: runArgs}
	home := t.TempDir()
	h.env = []string{"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex"), "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"SANDBOX_HOME=" + h.root, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + agent + string(os.PathListSeparator) + os.Getenv("PATH"), "TZ=UTC"}
	return h
}

// sandbox runs the sandbox binary and returns its output and exit code.
func (h *harnessEnv) sandbox(extraEnv []string, args ...string) (string, string, int) {
	h.t.Helper()
	cmd := h.command(extraEnv, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (h *harnessEnv) command(extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command("sandbox", args...)
	cmd.Dir = h.project
	cmd.Env = append(append(os.Environ(), h.env...), extraEnv...)
	return cmd
}

// run is sandbox run with the runtime's flags.
func (h *harnessEnv) run(name string, agentArgs ...string) (string, string, int) {
	args := append([]string{"run", "--name", name}, h.runArgs...)
	args = append(append(args, "--", "claude"), agentArgs...)
	return h.sandbox(nil, args...)
}

// restoreAndResume restores snap (a path or an s3:// URL) as session name
// and resumes it: the agent session id is the one snapshotted (wantID), and
// the fake agent remembers the conversation (AURORA-42).
func (h *harnessEnv) restoreAndResume(t *testing.T, snap, name, wantID, prompt string) {
	t.Helper()
	if out, errOut, code := h.sandbox(nil, "restore", snap, "--name", name); code != 0 {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	if got := h.session(name).AgentSessionID; got != wantID {
		t.Errorf("restored agent session id %q, want %q", got, wantID)
	}
	out, errOut, code := h.sandbox(nil, "run", "--name", name, "--resume", "--", "claude", "-p", prompt)
	if code != 0 {
		t.Fatalf("resume after restore: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "resume after restore", out, "You asked me to remember AURORA-42.")
}

func (h *harnessEnv) session(name string) *harness.Session {
	h.t.Helper()
	s, err := (&harness.Store{Root: h.root}).Load(name)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// events reads a session's runtime log.
func (h *harnessEnv) events(name string) []map[string]any {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.root, "sessions", name, "logs", "runtime.jsonl"))
	if err != nil {
		h.t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			h.t.Fatalf("runtime log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// lastEvent is the last event with a message.
func (h *harnessEnv) lastEvent(name, msg string) map[string]any {
	h.t.Helper()
	var last map[string]any
	for _, e := range h.events(name) {
		if e["message"] == msg {
			last = e
		}
	}
	if last == nil {
		h.t.Fatalf("session %s: no %s event in %v", name, msg, h.events(name))
	}
	return last
}

func mustContain(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%s: want %q in:\n%s", what, sub, s)
	}
}

// start runs sandbox run in the background and waits until the agent is up.
func (h *harnessEnv) start(name string, agentArgs ...string) (*exec.Cmd, *harness.Session) {
	h.t.Helper()
	args := append([]string{"run", "--name", name}, h.runArgs...)
	args = append(append(args, "--", "claude"), agentArgs...)
	cmd := h.command(nil, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		s, err := (&harness.Store{Root: h.root}).Load(name)
		up := s != nil && (s.ChildPID > 0 || s.Kube != nil && s.Container != "")
		if err == nil && up && s.State == harness.StateRunning &&
			strings.Contains(string(readFile(filepath.Join(h.root, "sessions", name, "logs", "output.log"))), "sleeping") {
			return cmd, s
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("session %s did not start:\n%s", name, out.String())
	return nil, nil
}

func readFile(p string) []byte {
	b, _ := os.ReadFile(p)
	return b
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// scenario is what every sandboxing runtime must do.
func harnessScenario(t *testing.T, h *harnessEnv) {
	harnessBasics(t, h)
	harnessProcesses(t, h)
}

// harnessBasics is what every runtime does alike, wherever the agent runs:
// the files and the transcript come back, resume, recover --session,
// snapshot, rm and restore, exit 3 and inspect.
func harnessBasics(t *testing.T, h *harnessEnv) {
	// A run persists the transcript and the files, which belong to the caller.
	out, errOut, code := h.run("s1", "-p", "remember AURORA-42", "--write", "src/hello.txt=hello from the sandbox")
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "first run", out, "I will remember AURORA-42.")
	p := filepath.Join(h.project, "src", "hello.txt")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatalf("the agent's file is not on the host: %v", err)
	}
	if sys := st.Sys().(*syscall.Stat_t); int(sys.Uid) != os.Getuid() || int(sys.Gid) != os.Getgid() {
		t.Errorf("%s belongs to %d:%d, not the caller %d:%d", p, sys.Uid, sys.Gid, os.Getuid(), os.Getgid())
	}
	s1 := h.session("s1")
	if s1.AgentSessionID == "" || s1.Agent != "claude" || s1.State != harness.StateExited {
		t.Fatalf("session after the first run: %+v", s1)
	}
	tr := filepath.Join(h.root, "sessions", "s1", "home", ".claude", "projects", "-workspace", s1.AgentSessionID+".jsonl")
	mustContain(t, "transcript", string(readFile(tr)), "AURORA-42")
	mustContain(t, "manifest", string(readFile(filepath.Join(h.root, "sessions", "s1", "manifest.json"))), `"/workspace/src/hello.txt"`)
	mustContain(t, "output.log", string(readFile(filepath.Join(h.root, "sessions", "s1", "logs", "output.log"))), "wrote src/hello.txt")

	// A second run with --resume recalls the fact.
	out, errOut, code = h.sandbox(nil, "run", "--name", "s1", "--resume", "--", "claude", "-p", "what did I ask you to remember?")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "resume", out, "You asked me to remember AURORA-42.")

	// recover --session finds the harness session's transcripts by name,
	// and maps /workspace to the project.
	os.Remove(p)
	out, errOut, code = h.sandbox(nil, "recover", "--session", "s1", "--yes")
	if code != 0 {
		t.Fatalf("recover --session s1: exit %d\n%s%s", code, out, errOut)
	}
	if got := string(readFile(p)); got != "hello from the sandbox\n" {
		t.Errorf("recovered %s = %q", p, got)
	}

	// snapshot, rm, restore, and the conversation resumes; the archive
	// written to standard output (-o -) is the one restored.
	snap := filepath.Join(t.TempDir(), "s1.tar.gz")
	if out, errOut, code = h.sandbox(nil, "snapshot", "s1", "-o", filepath.Join(t.TempDir(), "file.tar.gz")); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code = h.sandbox(nil, "snapshot", "s1", "-o", "-"); code != 0 || !strings.HasPrefix(out, "\x1f\x8b") {
		t.Fatalf("snapshot -o -: exit %d, %d bytes\n%s", code, len(out), errOut)
	}
	if err := os.WriteFile(snap, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.project, "-")); err == nil {
		t.Error("snapshot -o - wrote a file named -")
	}
	if out, errOut, code = h.sandbox(nil, "rm", "s1"); code != 0 {
		t.Fatalf("rm: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.root, "sessions", "s1")); !os.IsNotExist(err) {
		t.Fatalf("rm left the session: %v", err)
	}
	h.restoreAndResume(t, snap, "s1r", s1.AgentSessionID, "and now?")

	// Exit code 3 is the run's exit code, and recorded with the last output.
	_, _, code = h.run("s3", "-p", "fail", "--exit", "3")
	if code != 3 {
		t.Errorf("exit 3: sandbox run exited %d", code)
	}
	ev := h.lastEvent("s3", "sandbox_stopped")
	if ev["exit_code"] != 3.0 || ev["state"] != "exited" {
		t.Errorf("exit 3 recorded as %v", ev)
	}
	mustContain(t, "last output of exit 3", fmt.Sprint(ev["last_output"]), "exiting with code 3")
	out, errOut, code = h.sandbox(nil, "inspect", "s3")
	if code != 0 {
		t.Fatalf("inspect s3: exit %d\n%s", code, errOut)
	}
	mustContain(t, "inspect of a harness session", out, "harness session s3, last run (1)")
	mustContain(t, "inspect of a harness session", out, "exited with code 3")
	mustContain(t, "inspect of a harness session", out, "| fakeagent: exiting with code 3")
	page := filepath.Join(t.TempDir(), "s3.html")
	if _, errOut, code = h.sandbox(nil, "inspect", "s3", "--html", page); code != 0 {
		t.Fatalf("inspect --html: exit %d\n%s", code, errOut)
	}
	mustContain(t, "inspect --html of a harness session", string(readFile(page)), "Sandbox: harness session s3, last run (1)")
	if out, errOut, code = h.sandbox(nil, "inspect", "s3", "--html", "-"); code != 0 {
		t.Fatalf("inspect --html -: exit %d\n%s", code, errOut)
	}
	mustContain(t, "inspect --html - of a harness session", out, "Sandbox: harness session s3, last run (1)")
}

// harnessProcesses is what a runtime whose agent is a process of this
// machine does: kill -9 of the agent and of the harness, stop, two runs at
// once, and isolation from the store.
func harnessProcesses(t *testing.T, h *harnessEnv) {
	// kill -9 of the agent: 137, SIGKILL, the last output.
	cmd, s := h.start("k9", "-p", "work", "--sleep", "120s")
	if err := syscall.Kill(s.ChildPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 137 {
		t.Errorf("kill -9 of the agent: sandbox run exited %d, want 137", code)
	}
	ev := h.lastEvent("k9", "sandbox_stopped")
	if ev["signal"] != "SIGKILL" || ev["state"] != "killed" || ev["exit_code"] != 137.0 {
		t.Errorf("kill -9 recorded as %v", ev)
	}
	mustContain(t, "last output of kill -9", fmt.Sprint(ev["last_output"]), "sleeping")

	// stop: TERM, and the agent's exit is recorded.
	cmd, _ = h.start("st", "--sleep", "120s")
	if out, errOut, code := h.sandbox(nil, "stop", "st", "--grace", "5s"); code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", code, out, errOut)
	}
	if code := exitCode(cmd.Wait()); code != 143 {
		t.Errorf("stopped run exited %d, want 143", code)
	}
	if ev := h.lastEvent("st", "sandbox_stopped"); ev["signal"] != "SIGTERM" {
		t.Errorf("stop recorded as %v", ev)
	}

	// Two runs of one session at once are refused; another session runs.
	cmd, _ = h.start("busy", "--sleep", "120s")
	_, errOut, code := h.run("busy", "-p", "again")
	if code == 0 || !strings.Contains(errOut, "already running") {
		t.Errorf("a second run of a running session: exit %d, %s", code, errOut)
	}
	out, errOut, code := h.run("other", "-p", "in parallel")
	if code != 0 {
		t.Errorf("another session in parallel: exit %d\n%s%s", code, out, errOut)
	}

	// kill -9 of the harness itself: the next ps finds the session dropped.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if st := psState(t, h, "busy"); st.State != "dropped" {
		t.Errorf("after kill -9 of the harness, ps says %s", st.State)
	}
	ev = h.lastEvent("busy", "session_drop")
	if ev["harness_alive"] != false {
		t.Errorf("session_drop: %v", ev)
	}
	mustContain(t, "session_drop evidence", fmt.Sprint(ev["last_output"]), "sleeping")
	// Whatever still runs of it is stopped (a container outlives its client).
	h.sandbox(nil, "stop", "busy", "--grace", "1s")

	// One session cannot see another's workspace, nor the harness's state.
	out, _, _ = h.run("iso", "--stat", filepath.Join(h.root, "sessions", "other"), "--stat", h.root)
	if strings.Contains(out, "is visible") {
		t.Errorf("a session sees outside its workspace:\n%s", out)
	}
	mustContain(t, "isolation", out, "is missing")
}

func TestHarnessBwrap(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing(t, "bubblewrap is not installed (apt-get install bubblewrap): the bwrap harness test cannot run")
	}
	rt, _ := harness.NewRuntime("bwrap", nil)
	if err := rt.Available(context.Background()); err != nil {
		missing(t, "bubblewrap cannot run here: %v", err)
	}
	h := newHarnessEnv(t, "--runtime", "bwrap")
	harnessScenario(t, h)
	// bwrap's limits: TestHarnessBwrapLimits.
}

// testImage is the fake agent's image, tagged for this test process: two
// test runs on one Docker daemon (two engineers, CI beside a developer)
// must not remove each other's image.
var testImage = fmt.Sprintf("sandbox-fakeagent:test-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)

// buildImage imports an image holding only the fake agent, as /bin/claude.
func buildImage(t *testing.T) {
	agent := filepath.Join(buildFakeAgent(t), "claude")
	bin, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"bin/", "tmp/", "home/", "workspace/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		_ = tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: mode})
	}
	_ = tw.WriteHeader(&tar.Header{Name: "bin/claude", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin))})
	_, _ = tw.Write(bin)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker", "import", "-", testImage)
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker import: %v\n%s", err, out)
	}
	// Each import is a new image: remove it, so runs leave none behind.
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "--force", testImage).Run() })
}

func TestHarnessDocker(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		missing(t, "docker is not installed: the Docker harness test cannot run")
	}
	rt, _ := harness.NewRuntime("docker", nil)
	if err := rt.Available(context.Background()); err != nil {
		missing(t, "Docker is not running: %v", err)
	}
	buildImage(t)
	h := newHarnessEnv(t, "--runtime", "docker", "--image", testImage)
	harnessScenario(t, h)

	// An OOM kill is recorded as one.
	_, _, code := h.sandbox(nil, "run", "--name", "oom", "--runtime", "docker", "--image", testImage, "--memory", "64m", "--", "claude", "--oom")
	if code != 137 {
		t.Errorf("OOM run exited %d, want 137", code)
	}
	ev := h.lastEvent("oom", "sandbox_stopped")
	if ev["oom"] != true || ev["state"] != "oom" {
		t.Errorf("OOM recorded as %v", ev)
	}
	mustContain(t, "last output of the OOM kill", fmt.Sprint(ev["last_output"]), "allocating")

	// No container is left behind.
	out, err := exec.Command("docker", "ps", "--all", "--quiet", "--filter", "label=sandbox.store="+h.root).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("containers left behind: %s %v", out, err)
	}

	// With Docker stopped or absent, a Docker session fails clearly and
	// never runs unsandboxed.
	for _, env := range [][]string{{"DOCKER_HOST=unix:///nonexistent/docker.sock"}, {"SANDBOX_DOCKER=/nonexistent/docker"}} {
		before := h.session("oom").Runs
		_, errOut, code := h.sandbox(env, "run", "--name", "oom", "--", "claude", "-p", "hello")
		if code != 1 || !strings.Contains(errOut, "which is not available") || !strings.Contains(errOut, "never runs a session without its sandbox") {
			t.Errorf("%v: exit %d, %s", env, code, errOut)
		}
		if h.session("oom").Runs != before {
			t.Errorf("%v: the session ran anyway", env)
		}
	}
	h.lastEvent("oom", "run_refused")

	// gc removes what the harness left behind (a container of a dead
	// harness) and archives expired sessions.
	cmd, _ := h.start("orphan", "--sleep", "120s")
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	out2, errOut, code := h.sandbox([]string{"SANDBOX_NOW=" + time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339)}, "gc", "--json")
	if code != 0 {
		t.Fatalf("gc: exit %d\n%s%s", code, out2, errOut)
	}
	mustContain(t, "gc", out2, `"remove-container"`)
	mustContain(t, "gc", out2, `"archive"`)
	out, _ = exec.Command("docker", "ps", "--all", "--quiet", "--filter", "label=sandbox.store="+h.root).CombinedOutput()
	if strings.TrimSpace(string(out)) != "" {
		t.Errorf("gc left containers: %s", out)
	}
	archives, _ := filepath.Glob(filepath.Join(h.root, "archive", "*.tar.gz"))
	if len(archives) == 0 {
		t.Errorf("gc kept no archive")
	}
}

// TestHarnessAsAnotherUser runs the harness as an unprivileged user when the
// tests run as root (as on CI machines), so "the files belong to the
// caller" is not trivially true of root.
func TestHarnessAsAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		missing(t, "not root: the harness cannot be run as another user (the other harness tests run as this unprivileged caller)")
	}
	const uid, gid = 65534, 65534
	agent := filepath.Join(buildFakeAgent(t), "claude")
	self, err := exec.LookPath("sandbox")
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp("", "sandbox-uid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	for _, d := range []string{"bin", "home", "state", "project"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chmod(base, 0o755)
	for from, to := range map[string]string{self: "sandbox", agent: "claude"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, "bin", to), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"home", "state", "project"} {
		if err := os.Chown(filepath.Join(base, d), uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, groups []uint32, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(base, "bin", "sandbox"), args...)
		cmd.Dir = filepath.Join(base, "project")
		cmd.Env = []string{"HOME=" + filepath.Join(base, "home"), "SANDBOX_HOME=" + filepath.Join(base, "state"),
			"CODEX_HOME=" + filepath.Join(base, "home", ".codex"), "CLAUDE_CONFIG_DIR=" + filepath.Join(base, "home", ".claude"),
			"PATH=" + filepath.Join(base, "bin") + ":/usr/local/bin:/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: groups}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sandbox %v as uid %d: %v\n%s", args, uid, err, out)
		}
		return string(out)
	}
	check := func(t *testing.T, name string, groups []uint32, runArgs ...string) {
		args := append([]string{"run", "--name", name}, runArgs...)
		run(t, groups, append(args, "--", "claude", "-p", "remember AURORA-42", "--write", name+".txt=mine")...)
		for _, p := range []string{filepath.Join(base, "project", name+".txt"), filepath.Join(base, "state", "sessions", name, "home", ".claude")} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if sys := st.Sys().(*syscall.Stat_t); sys.Uid != uid || sys.Gid != gid {
				t.Errorf("%s belongs to %d:%d, not the caller %d:%d", p, sys.Uid, sys.Gid, uid, gid)
			}
		}
		out := run(t, groups, "run", "--name", name, "--resume", "--", "claude", "-p", "what was it?")
		mustContain(t, "resume as another user", out, "You asked me to remember AURORA-42.")
	}
	t.Run("bwrap", func(t *testing.T) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			missing(t, "bubblewrap is not installed")
		}
		check(t, "ub", nil, "--runtime", "bwrap")
	})
	t.Run("docker", func(t *testing.T) {
		rt, _ := harness.NewRuntime("docker", nil)
		if err := rt.Available(context.Background()); err != nil {
			missing(t, "Docker is not available: %v", err)
		}
		st, err := os.Stat("/var/run/docker.sock")
		if err != nil {
			missing(t, "no /var/run/docker.sock to give the user access to: %v", err)
		}
		buildImage(t)
		check(t, "ud", []uint32{st.Sys().(*syscall.Stat_t).Gid}, "--runtime", "docker", "--image", testImage)
	})
}

// psRow is a session as sandbox ps --json shows it.
type psRow struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	ExitCode int    `json:"exit_code"`
}

// psState is how sandbox ps --json shows session name.
func psState(t *testing.T, h *harnessEnv, name string) psRow {
	t.Helper()
	out, errOut, code := h.sandbox(nil, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps: exit %d\n%s", code, errOut)
	}
	var ps struct {
		Sessions []psRow `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatal(err)
	}
	for _, s := range ps.Sessions {
		if s.ID == name {
			return s
		}
	}
	t.Fatalf("ps does not list %s:\n%s", name, out)
	return psRow{}
}
