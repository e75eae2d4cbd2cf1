package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/harness"
)

// The harness for daily use, on each real runtime: a real init (TERM
// reaches an agent with no handler, zombies reaped, a self-SIGKILL
// recorded), interrupts, exec, logs -f, and failures that leave nothing.

// waitEvent waits until a session's runtime log has an event.
func (h *harnessEnv) waitEvent(name, msg string) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(h.root, "sessions", name, "logs", "runtime.jsonl"))
		if bytes.Contains(b, []byte(`"message":"`+msg+`"`)) {
			return h.lastEvent(name, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("session %s: no %s event", name, msg)
	return nil
}

func harnessDaily(t *testing.T, h *harnessEnv) {
	// TERM reaches an agent that installs no handler for it: with a 60s
	// grace, a TERM that did not arrive would end in KILL.
	cmd, _ := h.start("noterm", "--no-term-handler", "--sleep", "120s")
	if out, errOut, code := h.sandbox(nil, "stop", "noterm", "--grace", "60s"); code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", code, out, errOut)
	}
	if code := exitCode(cmd.Wait()); code != 143 {
		t.Errorf("an agent without a TERM handler, stopped: sandbox run exited %d, want 143", code)
	}
	if ev := h.lastEvent("noterm", "sandbox_stopped"); ev["signal"] != "SIGTERM" {
		t.Errorf("an agent without a TERM handler was not stopped by TERM: %v", ev)
	}

	// A process that kills itself dies, and is recorded as killed.
	out, errOut, code := h.run("self9", "--self-kill")
	if code != 137 || strings.Contains(out, "still alive") {
		t.Errorf("self-SIGKILL: exit %d\n%s%s", code, out, errOut)
	}
	if ev := h.lastEvent("self9", "sandbox_stopped"); ev["signal"] != "SIGKILL" || ev["state"] != "killed" {
		t.Errorf("self-SIGKILL recorded as %v", ev)
	}

	// The orphans of the agent's children are reaped.
	out, errOut, code = h.run("zombies", "--orphans")
	if code != 0 {
		t.Fatalf("orphans: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "orphans reaped", out, "fakeagent: 0 zombies")

	// ^C says what happens; a second ^C kills at once; both are recorded.
	args := append([]string{"run", "--name", "intr"}, h.runArgs...)
	run := h.command(nil, append(args, "--", "claude", "--ignore-term", "--sleep", "120s")...)
	var runErr bytes.Buffer
	run.Stdout, run.Stderr = &runErr, &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Process.Kill() })
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(string(readFile(filepath.Join(h.root, "sessions", "intr", "logs", "output.log"))), "sleeping") {
		if time.Now().After(deadline) {
			t.Fatalf("intr did not start:\n%s", runErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = run.Process.Signal(os.Interrupt)
	h.waitEvent("intr", "interrupt")
	_ = run.Process.Signal(os.Interrupt)
	if code := exitCode(run.Wait()); code != 137 {
		t.Errorf("^C ^C: sandbox run exited %d, want 137\n%s", code, runErr.String())
	}
	mustContain(t, "first ^C", runErr.String(), "stopping intr: TERM sent, KILL in 10s (^C again to kill now)")
	mustContain(t, "second ^C", runErr.String(), "killing intr now")
	ev := h.lastEvent("intr", "sandbox_stopped")
	if ev["signal"] != "SIGKILL" || ev["interrupted"] != true || ev["killed_at_once"] != true {
		t.Errorf("^C ^C recorded as %v", ev)
	}
	if ev := h.lastEvent("intr", "interrupt"); ev["action"] != "KILL sent" {
		t.Errorf("the second interrupt recorded as %v", ev)
	}

	// exec runs beside the agent, in its sandbox; logs -f follows it.
	cmd, _ = h.start("live", "--write", "seen.txt=from the agent", "--sleep", "120s")
	out, errOut, code = h.sandbox(nil, "exec", "live", "--", "claude", "--stat", "/workspace/seen.txt", "--exit", "5")
	if code != 5 {
		t.Errorf("exec: exit %d, want the command's 5\n%s%s", code, out, errOut)
	}
	mustContain(t, "exec sees the workspace", out, "/workspace/seen.txt is visible")
	if ev := h.lastEvent("live", "exec_ended"); ev["exit_code"] != 5.0 {
		t.Errorf("exec recorded as %v", ev)
	}
	out, _, _ = h.sandbox(nil, "exec", "live", "--", "claude", "--stat", "/home/sandbox/.claude")
	mustContain(t, "exec sees the agent's HOME", out, "/home/sandbox/.claude is visible")
	out, _, _ = h.sandbox(nil, "exec", "live", "--", "claude", "--stat", h.root)
	mustContain(t, "exec is inside the sandbox", out, h.root+" is missing")
	follow := h.command(nil, "logs", "live", "-f")
	var followed bytes.Buffer
	follow.Stdout = &followed
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, errOut, code := h.sandbox(nil, "stop", "live"); code != 0 {
		t.Fatalf("stop live: %s", errOut)
	}
	_ = cmd.Wait()
	if err := follow.Wait(); err != nil {
		t.Errorf("logs -f: %v", err)
	}
	mustContain(t, "logs -f", followed.String(), "fakeagent: got SIGTERM, stopping")
	out, _, _ = h.sandbox(nil, "ps", "-q", "--filter", "state=killed")
	mustContain(t, "ps --filter state=killed", out, "live\n")

	// A command that is not there: 127, and no session is kept.
	args = append([]string{"run", "--name", "nocmd"}, h.runArgs...)
	_, errOut, code = h.sandbox(nil, append(args, "--", "no-such-agent")...)
	if code != 127 {
		t.Errorf("a command that is not there: exit %d, want 127\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.root, "sessions", "nocmd")); !os.IsNotExist(err) {
		t.Errorf("a run that never started left its session: %v", err)
	}
}

// containersLeft lists the containers a runtime holds for a store.
func containersLeft(t *testing.T, bin, store string) string {
	out, err := exec.Command(bin, "ps", "--all", "--filter", "label=sandbox.store="+store, "--format", "{{.Names}} {{.Status}}").CombinedOutput()
	if err != nil {
		t.Fatalf("%s ps: %v\n%s", bin, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestHarnessDailyDocker(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		missing(t, "docker is not installed: the Docker harness test cannot run")
	}
	rt, _ := harness.NewRuntime("docker", nil)
	if err := rt.Available(context.Background()); err != nil {
		missing(t, "Docker is not running: %v", err)
	}
	buildImage(t)
	h := newHarnessEnv(t, "--runtime", "docker", "--image", testImage)
	harnessDaily(t, h)
	if left := containersLeft(t, "docker", h.root); left != "" {
		t.Errorf("containers left behind: %s", left)
	}

	// An image that is not here is found before anything is created.
	_, errOut, code := h.sandbox(nil, "run", "--name", "noimage", "--runtime", "docker", "--image", "sandbox-no-such-image:never", "--", "claude")
	if code != 2 || !strings.Contains(errOut, "image sandbox-no-such-image:never is not on this machine and could not be pulled") ||
		!strings.Contains(errOut, "hint: docker images lists") {
		t.Errorf("a missing image: exit %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, "docker run --help") || strings.Contains(errOut, "Error response from daemon") {
		t.Errorf("the client's own error text leaks:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(h.root, "sessions", "noimage")); !os.IsNotExist(err) {
		t.Errorf("a missing image left a session: %v", err)
	}
	if left := containersLeft(t, "docker", h.root); left != "" {
		t.Errorf("containers left behind by the failures: %s", left)
	}

	// gc names a container left behind by its session and run.
	cmd, _ := h.start("orphan", "--sleep", "120s")
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	out, _, code := h.sandbox(nil, "gc", "--dry-run", "--ttl", "0")
	if code != 0 || !strings.Contains(out, "would remove-container orphan: docker container of run 1 left behind") {
		t.Errorf("gc --dry-run: exit %d\n%s", code, out)
	}
	h.sandbox(nil, "gc", "--ttl", "0")
	if left := containersLeft(t, "docker", h.root); left != "" {
		t.Errorf("gc left containers: %s", left)
	}
}

func TestHarnessDailyBwrap(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing(t, "bubblewrap is not installed (apt-get install bubblewrap)")
	}
	rt, _ := harness.NewRuntime("bwrap", nil)
	if err := rt.Available(context.Background()); err != nil {
		missing(t, "bubblewrap cannot run here: %v", err)
	}
	h := newHarnessEnv(t, "--runtime", "bwrap")
	harnessDaily(t, h)
}

// TestHarnessBwrapLimits: --memory and --cpus under bubblewrap go through a
// cgroup of the run; beyond the memory the agent is OOM-killed and the
// kill recorded as one.
func TestHarnessBwrapLimits(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing(t, "bubblewrap is not installed (apt-get install bubblewrap)")
	}
	h := newHarnessEnv(t, "--runtime", "bwrap")
	_, errOut, code := h.sandbox(nil, "run", "--name", "oom", "--runtime", "bwrap", "--memory", "64m", "--", "claude", "--oom")
	if code == 2 && strings.Contains(errOut, "cannot limit memory or CPUs here") {
		// Refused, with the reason, rather than run unlimited.
		missing(t, "this machine's cgroups are not writable: %s", errOut)
	}
	if code != 137 {
		t.Fatalf("bwrap --memory 64m --oom: exit %d\n%s", code, errOut)
	}
	ev := h.lastEvent("oom", "sandbox_stopped")
	if ev["oom"] != true || ev["state"] != "oom" {
		t.Errorf("bwrap OOM recorded as %v", ev)
	}
	mustContain(t, "last output of the OOM kill", fmt.Sprint(ev["last_output"]), "allocating")

	// The CPU limit is the run's group's quota while it runs; the group
	// goes with the run.
	h.runArgs = []string{"--runtime", "bwrap", "--cpus", "0.5"}
	cmd, s := h.start("cpu", "--sleep", "120s")
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", s.ChildPID))
	if err != nil {
		t.Fatal(err)
	}
	group, unified := "", ""
	for _, l := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(l, ":", 3)
		switch {
		case len(parts) != 3:
		case strings.Contains(","+parts[1]+",", ",cpu,"):
			group = parts[2]
		case parts[0] == "0":
			unified = parts[2]
		}
	}
	if group == "" {
		group = unified // cgroup v2
	}
	if !strings.HasSuffix(group, "/sandbox-cpu-1") {
		t.Fatalf("the agent is in cgroup %q, not its run's (/proc/%d/cgroup:\n%s)", group, s.ChildPID, b)
	}
	var quota string
	for _, p := range []string{"/sys/fs/cgroup/cpu" + group + "/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu,cpuacct" + group + "/cpu.cfs_quota_us", "/sys/fs/cgroup" + group + "/cpu.max"} {
		if b, err := os.ReadFile(p); err == nil {
			quota = strings.TrimSpace(string(b))
		}
	}
	if quota != "50000" && quota != "50000 100000" {
		t.Errorf("the run's CPU quota is %q, want half a CPU", quota)
	}
	h.sandbox(nil, "stop", "cpu")
	_ = cmd.Wait()
	for _, p := range []string{"/sys/fs/cgroup/cpu" + group, "/sys/fs/cgroup" + group} {
		if _, err := os.Stat(p); err == nil && strings.Contains(p, "sandbox-cpu-1") {
			t.Errorf("the run's cgroup %s is left behind", p)
		}
	}
}

// TestHarnessBwrapTerminal runs an interactive agent under bubblewrap (and
// local) in tmux: it gets a terminal of its own (so a TUI renders), reads
// the keys, and a ^C reaches it.
func TestHarnessBwrapTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		missing(t, "tmux is not installed (apt-get install tmux): the interactive run cannot be driven")
	}
	t.Run("bwrap", func(t *testing.T) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			missing(t, "bubblewrap is not installed (apt-get install bubblewrap)")
		}
		interactiveRun(t, "bwrap")
	})
	t.Run("local", func(t *testing.T) { interactiveRun(t, "local") })
}

func interactiveRun(t *testing.T, runtime string) {
	h := newHarnessEnv(t, "--runtime", runtime)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	self, err := exec.LookPath("sandbox")
	if err != nil {
		t.Fatal(err)
	}
	script := "cd " + h.project + " && env " + strings.Join(h.env, " ") + " " + self + " run --name tui --runtime " + runtime + " -- claude --tui; echo EXIT=$?; sleep 60"
	tmux("new-session", "-d", "-x", "100", "-y", "30", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	screen := func(want string) string {
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := tmux("capture-pane", "-p")
			if strings.Contains(s, want) || time.Now().After(deadline) {
				return s
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	s := screen("TUI ready")
	mustContain(t, "the agent's terminal", s, "stdin terminal=true stdout terminal=true size=100x30")
	tmux("send-keys", "hello agent", "Enter")
	mustContain(t, "keys reach the agent", screen("you said"), `fakeagent: you said "hello agent"`)
	tmux("send-keys", "C-c")
	s = screen("EXIT=")
	mustContain(t, "^C reaches the agent", s, "fakeagent: got SIGINT, stopping")
	mustContain(t, "the exit is the agent's", s, "EXIT=130")
	mustContain(t, "output.log keeps a terminal run", string(readFile(filepath.Join(h.root, "sessions", "tui", "logs", "output.log"))), "TUI ready")
}
