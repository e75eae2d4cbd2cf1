package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestPodmanArgs(t *testing.T) {
	args := podmanArgs()
	joined := strings.Join(args, " ")
	if rootless := os.Geteuid() != 0; strings.Contains(joined, "--userns=keep-id") != rootless {
		t.Errorf("rootless=%v, but args %q", rootless, joined)
	}
	// Every limit is one the caller may keep: at most its own hard limit,
	// soft and hard the same.
	var nofile, nproc syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Getrlimit(6, &nproc); err != nil {
		t.Fatal(err)
	}
	hard := map[string]uint64{"nofile": nofile.Max, "nproc": nproc.Max}
	seen := map[string]bool{}
	for i, a := range args {
		if a != "--ulimit" {
			continue
		}
		if i+1 >= len(args) {
			t.Fatalf("--ulimit without a value: %q", joined)
		}
		name, pair, _ := strings.Cut(args[i+1], "=")
		soft, max, ok := strings.Cut(pair, ":")
		if !ok || soft != max {
			t.Errorf("%s: want soft:hard the same, got %q", name, pair)
		}
		seen[name] = true
		if max == "-1" {
			if hard[name] != rlimInfinity {
				t.Errorf("%s unlimited, but the hard limit is %d", name, hard[name])
			}
			continue
		}
		n, err := strconv.ParseUint(max, 10, 64)
		if err != nil || n > hard[name] || n == 0 {
			t.Errorf("%s=%s: the caller's hard limit is %d", name, pair, hard[name])
		}
		if m, ok := pidMax(); ok && name == "nproc" && n > m {
			t.Errorf("nproc=%d is above kernel.pid_max %d", n, m)
		}
	}
	if !seen["nofile"] || !seen["nproc"] {
		t.Errorf("want nofile and nproc limits, got %q", joined)
	}
}

func TestLimitPair(t *testing.T) {
	for n, want := range map[uint64]string{0: "0:0", 20000: "20000:20000", rlimInfinity: "-1:-1"} {
		if got := limitPair(n); got != want {
			t.Errorf("limitPair(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestClientDirSeesOOM(t *testing.T) {
	docker := &containerRuntime{name: "docker", bin: "docker"}
	if dir, saw, done := docker.clientDir(); dir != "" || saw() {
		t.Errorf("docker: dir %q", dir)
	} else {
		done()
	}
	pm := &containerRuntime{name: "podman", bin: "podman"}
	dir, saw, done := pm.clientDir()
	if dir == "" || saw() {
		t.Fatalf("podman: dir %q, oom %v before any", dir, saw())
	}
	if err := os.WriteFile(dir+"/oom", nil, 0o644); err != nil { // what conmon writes
		t.Fatal(err)
	}
	if !saw() {
		t.Errorf("the oom marker was not seen")
	}
	done()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the client's directory is left: %v", err)
	}
}

func TestStaleClientDirsRemoved(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	// A harness killed with kill -9 leaves its directory; a live one's,
	// and what is not a client directory, stay.
	dead := filepath.Join(os.TempDir(), clientDirPrefix+"99999999-123")
	live := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-456", clientDirPrefix, os.Getpid()))
	other := filepath.Join(os.TempDir(), clientDirPrefix+"x-1")
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	pm := &containerRuntime{name: "podman", bin: "podman"}
	dir, _, done := pm.clientDir()
	defer done()
	if !strings.HasPrefix(filepath.Base(dir), fmt.Sprintf("%s%d-", clientDirPrefix, os.Getpid())) {
		t.Errorf("the client's directory %s does not name its harness", dir)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead harness's directory stays: %v", err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

func TestStartFailed(t *testing.T) {
	exit := func(code int) error {
		err := exec.Command("sh", "-c", "exit "+strconv.Itoa(code)).Run()
		if err == nil && code != 0 {
			t.Fatal("no error")
		}
		return err
	}
	lines := func() []string {
		return []string{"starting", "Error: runc: runc create failed: exec: \"/bin/nosuch\": not found"}
	}
	// Podman's record of a container whose command is not there: created,
	// 0, no error; the client's 127 and message stand.
	r := startFailed(Result{Container: "c"}, exit(127), lines)
	if r.ExitCode != 127 || !strings.HasPrefix(r.Error, "Error: runc") {
		t.Errorf("got %+v", r)
	}
	// With --init, the init's own line and exit 1.
	for line, want := range map[string]int{
		"ERROR (catatonit:6): failed to exec pid1: No such file or directory": 127,
		"ERROR (catatonit:6): failed to exec pid1: Permission denied":         126,
		"[FATAL tini (7)] exec /bin/nosuch failed: No such file or directory": 127,
	} {
		r := startFailed(Result{ExitCode: 1}, exit(1), func() []string { return []string{line, ""} })
		if r.ExitCode != want || r.Error != "" { // initExecError words it
			t.Errorf("%s: got %+v", line, r)
		}
	}
	// The agent's own exit 1 stays, even when it printed such a line
	// among others.
	agent := func() []string {
		return []string{"working", "ERROR (catatonit:6): failed to exec pid1: No such file or directory"}
	}
	if r := startFailed(Result{ExitCode: 1}, exit(1), agent); r.ExitCode != 1 || r.Error != "" {
		t.Errorf("the agent's exit 1: %+v", r)
	}
	for _, tc := range []struct {
		r    Result
		code int
	}{
		{Result{ExitCode: 0}, 0},                      // a clean run
		{Result{ExitCode: 0}, 1},                      // the client's 1 is not a start failure
		{Result{ExitCode: 3}, 3},                      // the container's own code
		{Result{ExitCode: 125, Error: "docker"}, 125}, // Docker says it itself
		{Result{ExitCode: 137, OOM: true}, 137},
	} {
		var err error
		if tc.code != 0 {
			err = exit(tc.code)
		}
		if got := startFailed(tc.r, err, lines); !reflect.DeepEqual(got, tc.r) {
			t.Errorf("%+v with client exit %d: changed to %+v", tc.r, tc.code, got)
		}
	}
}
