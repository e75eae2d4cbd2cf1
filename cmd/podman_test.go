package cmd

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentsandbox/sandbox/harness"
)

// podmanEnv is a Podman of the test's own: its storage (vfs, which works
// on any filesystem, even inside a container), run state, temporary files
// and events in temporary directories, through CONTAINERS_CONF and
// CONTAINERS_STORAGE_CONF, so the test neither sees nor leaves anything in
// the machine's /var/lib/containers. cgroupfs and file events need no
// systemd. The sandbox processes the test starts inherit the same
// environment, so the harness's podman uses this store too.
func podmanEnv(t *testing.T) []string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sandbox-podman-test-")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"root", "runroot", "tmp", "volumes"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	containers := fmt.Sprintf(`[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = %q
volume_path = %q
`, filepath.Join(dir, "tmp"), filepath.Join(dir, "volumes"))
	storage := fmt.Sprintf(`[storage]
driver = "vfs"
graphroot = %q
runroot = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "runroot"))
	cc, sc := filepath.Join(dir, "containers.conf"), filepath.Join(dir, "storage.conf")
	if err := os.WriteFile(cc, []byte(containers), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sc, []byte(storage), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"CONTAINERS_CONF=" + cc, "CONTAINERS_STORAGE_CONF=" + sc}
	t.Cleanup(func() {
		// Containers first (a failed test may leave one), then the
		// images; a rootless store holds files of other uids, which
		// only podman unshare may remove.
		for _, args := range [][]string{{"rm", "--all", "--force"}, {"rmi", "--all", "--force"}} {
			c := exec.Command("podman", args...)
			c.Env = append(os.Environ(), env...)
			_ = c.Run()
		}
		if os.Geteuid() != 0 {
			c := exec.Command("podman", "unshare", "rm", "-rf", dir)
			c.Env = append(os.Environ(), env...)
			_ = c.Run()
		}
		_ = os.RemoveAll(dir)
	})
	return env
}

// podman runs the podman client in the test's store.
func podman(env []string, stdin []byte, args ...string) (string, error) {
	c := exec.Command("podman", args...)
	c.Env = append(os.Environ(), env...)
	c.Dir = os.TempDir() // conmon drops an "oom" file in its working directory
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	out, err := c.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// agentImageTar is an image's root file system holding only the fake
// agent, as /bin/claude.
func agentImageTar(t *testing.T) []byte {
	t.Helper()
	bin, err := os.ReadFile(filepath.Join(buildFakeAgent(t), "claude"))
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
	return buf.Bytes()
}

// probeUlimits are the caller's hard limits as --ulimit flags, worked out
// here independently of the harness's own code, so that the probe below
// tells the machine's limits from the harness's bugs.
func probeUlimits() []string {
	var nofile, nproc syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile)
	_ = syscall.Getrlimit(6, &nproc) // RLIMIT_NPROC
	n := nproc.Max
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if m, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && m < n {
			n = m
		}
	}
	return []string{"--ulimit", fmt.Sprintf("nofile=%d:%d", nofile.Max, nofile.Max), "--ulimit", fmt.Sprintf("nproc=%d:%d", n, n)}
}

// TestHarnessPodman runs the harness scenario on Podman: the persisted
// HOME and files owned by the caller, resume, recover, snapshot and
// restore, exit codes, kill -9, stop, a dropped harness, isolation between
// sessions; then an OOM kill, no container left behind, and Podman's init.
//
// Podman missing is a skip, or a failure with CI=true (.ci/run installs
// it). Podman present but unable to start any container on this machine —
// tried with plain podman run, independently of the harness — is a skip
// with Podman's own error even with CI=true: that is the machine's kernel
// or container policy, which no code here can change, whereas every
// failure after that probe is the harness's.
func TestHarnessPodman(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		missing(t, "podman is not installed (apt-get install podman catatonit): the Podman harness test cannot run")
	}
	env := podmanEnv(t)
	rt, _ := harness.NewRuntime("podman", nil)
	t.Setenv("CONTAINERS_CONF", strings.TrimPrefix(env[0], "CONTAINERS_CONF="))
	t.Setenv("CONTAINERS_STORAGE_CONF", strings.TrimPrefix(env[1], "CONTAINERS_STORAGE_CONF="))
	if err := rt.Available(context.Background()); err != nil {
		t.Skipf("podman is installed but cannot work here: %v", err)
	}
	image := fmt.Sprintf("localhost/sandbox-fakeagent:test-%d", os.Getpid())
	if out, err := podman(env, agentImageTar(t), "import", "-", image); err != nil {
		t.Fatalf("podman import: %v\n%s", err, out)
	}

	// Can this machine start a container at all? Podman's defaults first,
	// then with the limits the harness passes.
	probe := []string{"run", "--rm", "--network", "none", image, "/bin/claude", "--help"}
	if out, err := podman(env, nil, probe...); err != nil {
		t.Logf("podman run with Podman's default limits fails here (why the harness passes --ulimit): %s", out)
		withLimits := append(append([]string{"run", "--rm", "--network", "none"}, probeUlimits()...), probe[4:]...)
		if out2, err := podman(env, nil, withLimits...); err != nil {
			t.Skipf("rootful=%v podman cannot start a container on this machine:\n$ podman %s\n%s\n$ podman %s\n%s",
				os.Geteuid() == 0, strings.Join(probe, " "), out, strings.Join(withLimits, " "), out2)
		}
	}

	h := newHarnessEnv(t, "--runtime", "podman", "--image", image)
	h.env = append(h.env, env...)
	harnessScenario(t, h)
	// The daily harness on Podman: TERM to an agent without a handler
	// (catatonit as PID 1), a self-SIGKILL, orphans reaped, ^C ^C, exec,
	// logs -f, a missing command (127, nothing kept).
	harnessDaily(t, h)

	// An OOM kill is recorded as one, where the memory cgroup can be
	// limited: Podman says so when it cannot (rootless on cgroup v1).
	memProbe := append(append([]string{"run", "--rm", "--network", "none", "--memory", "64m"}, probeUlimits()...), image, "/bin/claude", "--help")
	if out, err := podman(env, nil, memProbe...); err != nil {
		t.Logf("no OOM check: podman cannot limit memory here: %s", out)
	} else {
		_, errOut, code := h.sandbox(nil, "run", "--name", "oom", "--runtime", "podman", "--image", image, "--memory", "64m", "--", "claude", "--oom")
		if code != 137 {
			t.Errorf("OOM run exited %d, want 137\n%s", code, errOut)
		}
		ev := h.lastEvent("oom", "sandbox_stopped")
		if ev["oom"] != true || ev["state"] != "oom" {
			t.Errorf("OOM recorded as %v", ev)
		}
		mustContain(t, "last output of the OOM kill", fmt.Sprint(ev["last_output"]), "allocating")
		// conmon's marker went to the harness's own directory, not to
		// the directory sandbox ran in.
		if _, err := os.Lstat(filepath.Join(h.project, "oom")); err == nil {
			t.Errorf("an oom file was left in the project directory")
		}
	}

	// --volume: a read-write mount is written through, as the caller; a
	// read-only one refuses.
	shared := t.TempDir()
	if out, errOut, code := h.sandbox(nil, "run", "--name", "vol", "--runtime", "podman", "--image", image,
		"--volume", shared+":/mnt/shared", "--", "claude", "--write", "/mnt/shared/out.txt=through the mount"); code != 0 {
		t.Errorf("a read-write mount: exit %d\n%s%s", code, out, errOut)
	}
	if got := string(readFile(filepath.Join(shared, "out.txt"))); got != "through the mount\n" {
		t.Errorf("through the mount: %q", got)
	} else if st, _ := os.Stat(filepath.Join(shared, "out.txt")); int(st.Sys().(*syscall.Stat_t).Uid) != os.Getuid() {
		t.Errorf("a file written through a mount belongs to uid %d", st.Sys().(*syscall.Stat_t).Uid)
	}
	out, errOut, code := h.sandbox(nil, "run", "--name", "vol", "--volume", shared+":/mnt/shared:ro", "--", "claude", "--write", "/mnt/shared/no.txt=x")
	if code == 0 || !strings.Contains(out+errOut, "read-only file system") {
		t.Errorf("a read-only mount: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(shared, "no.txt")); err == nil {
		t.Errorf("written through a read-only mount")
	}

	// An image that is not here is found before anything is created.
	_, errOut, code = h.sandbox(nil, "run", "--name", "noimage", "--runtime", "podman", "--image", "localhost/sandbox-no-such-image:never", "--", "claude")
	if code != 2 || !strings.Contains(errOut, "is not on this machine and could not be pulled") || !strings.Contains(errOut, "hint: podman images lists") {
		t.Errorf("a missing image: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.root, "sessions", "noimage")); !os.IsNotExist(err) {
		t.Errorf("a missing image left a session: %v", err)
	}

	// No container is left behind.
	var err error
	out, err = podman(env, nil, "ps", "--all", "--filter", "label=sandbox.store="+h.root, "--format", "{{.Names}} {{.Status}}")
	if err != nil || out != "" {
		t.Errorf("containers left behind: %s %v", out, err)
	}

	// With podman gone, a Podman session fails clearly and never runs
	// unsandboxed.
	before := h.session("s3").Runs
	_, errOut, code = h.sandbox([]string{"SANDBOX_PODMAN=/nonexistent/podman"}, "run", "--name", "s3", "--", "claude", "-p", "hello")
	if code != 1 || !strings.Contains(errOut, "which is not available") {
		t.Errorf("podman gone: exit %d, %s", code, errOut)
	}
	if h.session("s3").Runs != before {
		t.Errorf("podman gone: the session ran anyway")
	}

	// Podman's init (catatonit) works here: --init is what the harness
	// runs containers with, so the agent is not PID 1.
	if out, err := podman(env, nil, append(append([]string{"run", "--rm", "--network", "none", "--init"}, probeUlimits()...), image, "/bin/claude", "--help")...); err != nil {
		t.Errorf("podman run --init: %v\n%s", err, out)
	}
}
