package harness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentsandbox/sandbox/internal/bytesize"
)

// Limits for the runtimes that have no daemon to enforce them (bwrap,
// local) come from a child cgroup the harness makes for the run, beside
// its own: on cgroup v2 one group with memory.max and cpu.max, on v1 one in
// the memory hierarchy and one in the cpu hierarchy. The agent joins it
// before it runs (a shell that writes its own pid there and then execs),
// so nothing it starts escapes the limit. Where the hierarchy is not
// writable the limits are refused with the reason, never dropped.

// cgroupRoot is where the cgroup hierarchies are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// cgroup is the group (or, on v1, the groups) of one run.
type cgroup struct {
	v2  bool
	mem string // the group holding the memory limit
	cpu string // the group holding the CPU limit (v1); mem on v2
}

// limitsAvailable says where a run's limits would go, or why they cannot.
func limitsAvailable(mem, cpu bool) (string, error) {
	parents, v2, err := cgroupParents(mem, cpu)
	if err != nil {
		return "", err
	}
	for _, p := range parents {
		if err := syscall.Access(p, 0o2 /* W_OK */); err != nil {
			return "", fmt.Errorf("the cgroup %s is not writable by this user (%v); run as root, or give the user a delegated cgroup, or use --runtime docker or podman", p, err)
		}
	}
	if v2 {
		return "cgroup v2 " + parents[0], nil
	}
	return "cgroup v1 " + strings.Join(parents, ", "), nil
}

// cgroupParents are the groups the harness itself is in, for the
// controllers a run needs: a run's group is made inside them.
func cgroupParents(mem, cpu bool) ([]string, bool, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, false, fmt.Errorf("no cgroups here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		path := ""
		for _, l := range strings.Split(string(own), "\n") {
			if p, ok := strings.CutPrefix(l, "0::"); ok {
				path = p
			}
		}
		parent := filepath.Join(cgroupRoot, path)
		ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
		if err != nil {
			return nil, true, fmt.Errorf("cgroup v2: %v", err)
		}
		for _, want := range wanted(mem, cpu) {
			if !hasWord(string(ctl), want) {
				return nil, true, fmt.Errorf("cgroup v2: the %s controller is not delegated to %s", want, parent)
			}
		}
		return []string{parent}, true, nil
	}
	var parents []string
	for _, want := range wanted(mem, cpu) {
		p, err := v1Group(string(own), want)
		if err != nil {
			return nil, false, err
		}
		parents = append(parents, p)
	}
	return parents, false, nil
}

func wanted(mem, cpu bool) []string {
	var w []string
	if mem {
		w = append(w, "memory")
	}
	if cpu {
		w = append(w, "cpu")
	}
	return w
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// v1Group is the harness's own group in a v1 controller's hierarchy.
func v1Group(own, controller string) (string, error) {
	for _, l := range strings.Split(own, "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		found := false
		for _, c := range strings.Split(parts[1], ",") {
			found = found || c == controller
		}
		if !found {
			continue
		}
		mounts := []string{controller}
		if controller == "cpu" {
			mounts = append(mounts, "cpu,cpuacct", "cpuacct,cpu")
		}
		for _, mount := range mounts {
			base := filepath.Join(cgroupRoot, mount)
			if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
				continue
			}
			// The mount may show the whole hierarchy or only our part of it.
			if p := filepath.Join(base, parts[2]); isDir(p) {
				return p, nil
			}
			return base, nil
		}
	}
	return "", fmt.Errorf("cgroup v1: no %s controller mounted under %s", controller, cgroupRoot)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// newCgroup makes the group of a run and sets its limits.
func newCgroup(name, memory, cpus string) (*cgroup, error) {
	parents, v2, err := cgroupParents(memory != "", cpus != "")
	if err != nil {
		return nil, err
	}
	cg := &cgroup{v2: v2}
	var quota int64
	if cpus != "" {
		f, err := strconv.ParseFloat(cpus, 64)
		if err != nil || f <= 0 {
			return nil, fmt.Errorf("--cpus %q: want a positive number", cpus)
		}
		quota = int64(f * 100000)
	}
	var mem int64
	if memory != "" {
		if mem, err = bytesize.Parse(memory); err != nil {
			return nil, fmt.Errorf("--memory %q: %v", memory, err)
		}
	}
	fail := func(err error) (*cgroup, error) {
		cg.remove()
		return nil, err
	}
	if v2 {
		// Controllers must be enabled for the children of the parent.
		var enable []string
		for _, w := range wanted(memory != "", cpus != "") {
			enable = append(enable, "+"+w)
		}
		if err := writeCg(parents[0], "cgroup.subtree_control", strings.Join(enable, " ")); err != nil {
			return nil, fmt.Errorf("cgroup v2: enabling %s for children of %s: %v", strings.Join(enable, " "), parents[0], err)
		}
		dir := filepath.Join(parents[0], name)
		if err := mkdirCg(dir); err != nil {
			return nil, fmt.Errorf("cgroup v2: %v", err)
		}
		cg.mem, cg.cpu = dir, dir
		if mem > 0 {
			if err := writeCg(dir, "memory.max", strconv.FormatInt(mem, 10)); err != nil {
				return fail(err)
			}
			_ = writeCg(dir, "memory.swap.max", "0") // absent without swap accounting
		}
		if quota > 0 {
			if err := writeCg(dir, "cpu.max", fmt.Sprintf("%d 100000", quota)); err != nil {
				return fail(err)
			}
		}
		return cg, nil
	}
	i := 0
	if mem > 0 {
		cg.mem = filepath.Join(parents[i], name)
		i++
		if err := mkdirCg(cg.mem); err != nil {
			return fail(fmt.Errorf("cgroup v1: %v", err))
		}
		if err := writeCg(cg.mem, "memory.limit_in_bytes", strconv.FormatInt(mem, 10)); err != nil {
			return fail(err)
		}
		// Without swap accounting the limit holds for memory alone.
		if _, err := os.Stat(filepath.Join(cg.mem, "memory.memsw.limit_in_bytes")); err == nil {
			if err := writeCg(cg.mem, "memory.memsw.limit_in_bytes", strconv.FormatInt(mem, 10)); err != nil {
				return fail(err)
			}
		}
	}
	if quota > 0 {
		cg.cpu = filepath.Join(parents[i], name)
		if err := mkdirCg(cg.cpu); err != nil {
			return fail(fmt.Errorf("cgroup v1: %v", err))
		}
		if err := writeCg(cg.cpu, "cpu.cfs_period_us", "100000"); err != nil {
			return fail(err)
		}
		if err := writeCg(cg.cpu, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)); err != nil {
			return fail(err)
		}
	}
	return cg, nil
}

// writeCg sets a cgroup's interface file; it never creates one (the
// kernel makes them with the group).
func writeCg(dir, file, v string) error {
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(v)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("cgroup: setting %s to %s in %s: %v", file, v, dir, err)
	}
	return nil
}

// mkdirCg makes a group; tests lay out the kernel's files in it.
var mkdirCg = func(dir string) error { return os.Mkdir(dir, 0o755) }

// groups are the run's distinct group directories.
func (cg *cgroup) groups() []string {
	var out []string
	for _, d := range []string{cg.mem, cg.cpu} {
		if d != "" && (len(out) == 0 || out[0] != d) {
			out = append(out, d)
		}
	}
	return out
}

// wrap runs argv through a shell that first moves itself into the run's
// groups, so the agent starts inside them; it fails (125) rather than run
// unlimited.
func (cg *cgroup) wrap(argv []string) []string {
	script := `n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"`
	g := cg.groups()
	out := []string{"/bin/sh", "-c", script, "sandbox-cgroup", strconv.Itoa(len(g))}
	for _, d := range g {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return append(out, argv...)
}

// oomKilled reports whether the kernel killed a process of the group for
// want of memory.
func (cg *cgroup) oomKilled() bool {
	if cg.mem == "" {
		return false
	}
	file := "memory.oom_control"
	if cg.v2 {
		file = "memory.events"
	}
	f, err := os.Open(filepath.Join(cg.mem, file))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n > 0
		}
	}
	// Older v1 kernels have no oom_kill count: a failed charge at the
	// limit is the next best evidence.
	if !cg.v2 {
		b, _ := os.ReadFile(filepath.Join(cg.mem, "memory.failcnt"))
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n > 0
	}
	return false
}

// remove kills what is left in the groups and removes them.
func (cg *cgroup) remove() {
	for _, d := range cg.groups() {
		for try := 0; try < 50; try++ {
			b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			if errors.Is(err, os.ErrNotExist) {
				break
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if err := syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
