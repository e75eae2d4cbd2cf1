package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestClientFilter(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"agent output passes", "hello\nworld\n", "hello\nworld\n"},
		{"daemon error and hint dropped",
			"docker: Error response from daemon: failed to create task: exec: \"x\": executable file not found in $PATH: unknown\n\nRun 'docker run --help' for more information\n",
			""},
		{"a blank line of the agent's stays", "a\n\nb\n", "a\n\nb\n"},
		{"tini's exec failure dropped", "[FATAL tini (7)] exec x failed: No such file or directory\n", ""},
		{"catatonit's exec failure dropped", "ERROR (catatonit:6): failed to exec pid1: No such file or directory\n", ""},
		{"other catatonit lines stay", "ERROR (catatonit:6): something else\n", "ERROR (catatonit:6): something else\n"},
		{"a prompt without newline passes", "continue? [y/N] ", "continue? [y/N] "},
		{"an agent line that starts like the client's", "docker: is a word\n", "docker: is a word\n"},
		{"Error: of the agent's own stays", "Error: tests failed\n", "Error: tests failed\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			f := &clientFilter{w: &out, bin: "/usr/bin/docker"}
			// Byte by byte: the filter must not depend on how writes fall.
			for i := range len(c.in) {
				_, _ = f.Write([]byte{c.in[i]})
			}
			f.flush()
			if out.String() != c.want {
				t.Errorf("got %q, want %q", out.String(), c.want)
			}
		})
	}
}

func TestDaemonError(t *testing.T) {
	got := daemonError(`docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "nosuchcmd": executable file not found in $PATH: unknown`)
	if want := `exec: "nosuchcmd": executable file not found in $PATH`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := initExecError([]string{"[FATAL tini (8)] exec nosuchcmd failed: No such file or directory"}); got != "no such file or directory" {
		t.Errorf("tini: %q", got)
	}
	if got := initExecError([]string{"fakeagent: exiting with code 127"}); got != "" {
		t.Errorf("an agent's own 127 read as the init's: %q", got)
	}
}

// fakeCgroups lays out a cgroup hierarchy in a temporary directory, as the
// kernel shows it, and points the harness at it.
func fakeCgroups(t *testing.T, v2 bool) string {
	root := t.TempDir()
	old, oldMkdir := cgroupRoot, mkdirCg
	cgroupRoot = root
	mkdirCg = func(dir string) error {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"cgroup.procs", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "cpu.cfs_period_us",
			"cpu.cfs_quota_us", "memory.max", "memory.swap.max", "cpu.max", "memory.oom_control", "memory.events"} {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	t.Cleanup(func() { cgroupRoot, mkdirCg = old, oldMkdir })
	own, _ := os.ReadFile("/proc/self/cgroup")
	if v2 {
		path := "/"
		for _, l := range strings.Split(string(own), "\n") {
			if p, ok := strings.CutPrefix(l, "0::"); ok {
				path = p
			}
		}
		_ = os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644)
		dir := filepath.Join(root, path)
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), nil, 0o644)
		return dir
	}
	for _, c := range []string{"memory", "cpu"} {
		_ = os.MkdirAll(filepath.Join(root, c), 0o755)
		_ = os.WriteFile(filepath.Join(root, c, "cgroup.procs"), nil, 0o644)
	}
	return root
}

// TestCgroupLimits checks the files a run's group gets, on both cgroup
// versions, against a hierarchy laid out by hand (the real one is tried by
// cmd's TestHarnessBwrapLimits).
func TestCgroupLimits(t *testing.T) {
	t.Run("v1", func(t *testing.T) {
		root := fakeCgroups(t, false)
		if _, err := limitsAvailable(true, true); err != nil {
			t.Fatal(err)
		}
		cg, err := newCgroup("sandbox-x-1", "64m", "1.5")
		if err != nil {
			t.Fatal(err)
		}
		for file, want := range map[string]string{"memory/sandbox-x-1/memory.limit_in_bytes": "67108864",
			"memory/sandbox-x-1/memory.memsw.limit_in_bytes": "67108864", "cpu/sandbox-x-1/cpu.cfs_quota_us": "150000",
			"cpu/sandbox-x-1/cpu.cfs_period_us": "100000"} {
			if b, _ := os.ReadFile(filepath.Join(root, file)); string(b) != want {
				t.Errorf("%s = %q, want %q", file, b, want)
			}
		}
		if g := cg.groups(); len(g) != 2 {
			t.Errorf("groups: %q", g)
		}
		_ = os.WriteFile(filepath.Join(root, "memory/sandbox-x-1/memory.oom_control"), []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"), 0o644)
		if cg.oomKilled() {
			t.Error("oom_kill 0 read as an OOM kill")
		}
		// The kernel refuses what the group does not have: a failed
		// group is not left behind (rmdir fails on a fake group with
		// files, so the check is that newCgroup reports the failure).
		mkdirCg = func(dir string) error { return os.Mkdir(dir, 0o755) }
		if _, err := newCgroup("sandbox-x-2", "64m", ""); err == nil || !strings.Contains(err.Error(), "memory.limit_in_bytes") {
			t.Errorf("a group without the kernel's files: %v", err)
		}
		if hasEntries(t, filepath.Join(root, "memory", "sandbox-x-2")) {
			t.Errorf("a failed group was left behind")
		}
	})
	t.Run("v2", func(t *testing.T) {
		parent := fakeCgroups(t, true)
		where, err := limitsAvailable(true, false)
		if err != nil || !strings.Contains(where, "cgroup v2") {
			t.Fatalf("limitsAvailable: %q, %v", where, err)
		}
		cg, err := newCgroup("sandbox-y-2", "128m", "0.5")
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(parent, "sandbox-y-2")
		for file, want := range map[string]string{"memory.max": "134217728", "memory.swap.max": "0", "cpu.max": "50000 100000"} {
			if b, _ := os.ReadFile(filepath.Join(dir, file)); string(b) != want {
				t.Errorf("%s = %q, want %q", file, b, want)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control")); string(b) != "+memory +cpu" {
			t.Errorf("subtree_control = %q", b)
		}
		argv := cg.wrap([]string{"/usr/bin/bwrap", "--", "agent"})
		if argv[0] != "/bin/sh" || argv[4] != "1" || argv[5] != filepath.Join(dir, "cgroup.procs") || argv[6] != "/usr/bin/bwrap" {
			t.Errorf("wrap: %q", argv)
		}
		_ = os.WriteFile(filepath.Join(dir, "memory.events"), []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"), 0o644)
		if !cg.oomKilled() {
			t.Error("oom_kill 1 not read as an OOM kill")
		}
	})
	t.Run("not delegated", func(t *testing.T) {
		parent := fakeCgroups(t, true)
		_ = os.WriteFile(filepath.Join(parent, "cgroup.controllers"), []byte("pids\n"), 0o644)
		if _, err := limitsAvailable(true, false); err == nil || !strings.Contains(err.Error(), "memory controller is not delegated") {
			t.Errorf("a parent without the memory controller: %v", err)
		}
	})
}

func hasEntries(t *testing.T, dir string) bool {
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if e.IsDir() {
			return true
		}
	}
	return false
}

func TestValidateCreatesNothing(t *testing.T) {
	st := hermetic(t)
	for _, c := range []struct {
		o    RunOptions
		want string
	}{
		{RunOptions{Name: "../x", Runtime: "local", Command: []string{"true"}}, "session name"},
		{RunOptions{Runtime: "chroot", Command: []string{"true"}}, "unknown runtime"},
		{RunOptions{Runtime: "local", Memory: "1k", Command: []string{"true"}}, "at least 6m"},
		{RunOptions{Runtime: "local", CPUs: "lots", Command: []string{"true"}}, "--cpus"},
		{RunOptions{Runtime: "local", Network: "bridge", Command: []string{"true"}}, "--network"},
		{RunOptions{Runtime: "local", Command: nil}, "no command"},
		{RunOptions{Runtime: "local", Project: "/nonexistent/dir", Command: []string{"true"}}, "project directory"},
	} {
		_, _, err := st.Open(context.Background(), &c.o)
		var ie *InvalidError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an InvalidError with %q", c.o, err, c.want)
		}
	}
	_, _, err := st.Open(context.Background(), &RunOptions{Runtime: "local", Command: []string{"no-such-command-anywhere"}})
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Code != 127 {
		t.Errorf("a command that is not there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(st.Root, "sessions")); !os.IsNotExist(err) {
		t.Errorf("a refused run created something: %v", err)
	}
}

func TestRunsFromTheRuntimeLog(t *testing.T) {
	st := hermetic(t)
	s := runLocal(t, st, "r", "sh", "-c", "echo one")
	o := &RunOptions{Name: "r", Command: []string{"sh", "-c", "echo two; exit 4"}}
	if err := st.Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].OutputFrom != 0 || runs[0].OutputTo != 4 || runs[1].OutputFrom != 4 || runs[1].OutputTo != -1 ||
		runs[1].ExitCode != 4 || runs[1].State != "exited" {
		t.Fatalf("runs: %+v", runs)
	}
}

// FuzzRuns reads hostile runtime logs (a restored snapshot brings its
// own): no panic, and every offset it gives is usable.
func FuzzRuns(f *testing.F) {
	f.Add([]byte(`{"message":"sandbox_started","run":1,"output_from":0,"time":"2026-11-23T00:00:00Z"}` + "\n" +
		`{"message":"sandbox_stopped","run":1,"exit_code":3,"state":"exited","time":"2026-11-23T00:00:01Z"}` + "\n"))
	f.Add([]byte(`{"message":"sandbox_started","run":2}` + "\n" + `{"message":"sandbox_started","run":1,"output_from":-5}` + "\n"))
	f.Add([]byte(`{"message":"session_drop","run":7}`))
	f.Fuzz(func(t *testing.T, log []byte) {
		st := &Store{Root: t.TempDir()}
		if err := os.MkdirAll(filepath.Join(st.Dir("s"), "logs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(st.RuntimeLog("s"), log, 0o644); err != nil {
			t.Fatal(err)
		}
		runs, _ := st.Runs("s")
		for _, r := range runs {
			if r.Run <= 0 || r.OutputFrom < 0 || (r.OutputTo >= 0 && r.OutputTo < r.OutputFrom) {
				t.Fatalf("run listed as %+v", r)
			}
		}
	})
}

// TestRestoreInterrupted: a restore whose context is done places no session,
// and leaves no temporary directory behind.
func TestRestoreInterrupted(t *testing.T) {
	st := hermetic(t)
	runLocal(t, st, "src", "sh", "-c", "echo hello")
	var snap bytes.Buffer
	if _, err := st.Snapshot("src", &snap, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Restore(bytes.NewReader(snap.Bytes()), RestoreOptions{Name: "back", Ctx: ctx}); !errors.Is(err, context.Canceled) {
		t.Fatalf("an interrupted restore: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(st.Root, "sessions"))
	for _, e := range entries {
		if e.Name() != "src" {
			t.Errorf("an interrupted restore left %s", e.Name())
		}
	}
}

// TestCreateOnceUnderRace: runs creating one name at once make one session
// record, and the others run in it.
func TestCreateOnceUnderRace(t *testing.T) {
	st := hermetic(t)
	proj := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	created := make(chan bool, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, made, err := st.Open(context.Background(), &RunOptions{Name: "race", Runtime: "local", Project: proj, Command: []string{"true"}})
			if err != nil {
				t.Error(err)
			}
			created <- made
		}()
	}
	wg.Wait()
	close(created)
	makers := 0
	for m := range created {
		if m {
			makers++
		}
	}
	if makers != 1 {
		t.Errorf("%d runs created the session, want 1", makers)
	}
	b, _ := os.ReadFile(st.RuntimeLog("race"))
	if c := strings.Count(string(b), `"session_created"`); c != 1 {
		t.Errorf("%d session_created events, want 1", c)
	}
}
