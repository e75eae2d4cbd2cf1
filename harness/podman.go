package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// What Podman needs beyond the arguments it shares with Docker.
//
// Podman 4.3 (Debian 12's) gives every container RLIMIT_NOFILE 1048576 and
// RLIMIT_NPROC of kernel.pid_max unless told otherwise, and runc or crun
// then fail to start the container when the caller may not raise its hard
// limits that far — any process without CAP_SYS_RESOURCE, such as root in
// an unprivileged container:
//
//	Error: runc: runc create failed: unable to start container process: error during container
//	init: error setting rlimits for ready process: error setting rlimit type 7: operation not
//	permitted: OCI permission denied
//
// "--ulimit host" does not help (it asks for unlimited). So the agent gets
// the caller's own hard limits, which any process may keep, as it does
// under bubblewrap and locally.

// podmanArgs are the arguments a podman run adds to the shared ones.
func podmanArgs() []string {
	var args []string
	if os.Geteuid() != 0 {
		// Rootless: the caller's uid is mapped to itself inside, so
		// files on the host are the caller's. Rootful Podman refuses
		// keep-id ("keep-id is only supported in rootless mode") and
		// needs no mapping: --user uid:gid is the caller on the host.
		args = append(args, "--userns=keep-id")
	}
	return append(args, podmanUlimits()...)
}

// podmanUlimits are --ulimit flags holding the caller's hard limits of open
// files and processes. The process limit is at most kernel.pid_max, since
// Podman lowers its own to that before it starts the runtime, and a
// container's may not be above the runtime's.
func podmanUlimits() []string {
	var args []string
	var nofile syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile) == nil {
		args = append(args, "--ulimit", "nofile="+limitPair(nofile.Max))
	}
	const rlimitNPROC = 6 // RLIMIT_NPROC on Linux; package syscall does not name it
	var nproc syscall.Rlimit
	if syscall.Getrlimit(rlimitNPROC, &nproc) == nil {
		n := nproc.Max
		if m, ok := pidMax(); ok && (n == rlimInfinity || n > m) {
			n = m
		}
		args = append(args, "--ulimit", "nproc="+limitPair(n))
	}
	return args
}

const rlimInfinity = ^uint64(0)

// limitPair is a --ulimit value, soft and hard the same; -1 is Podman's
// spelling of unlimited.
func limitPair(n uint64) string {
	s := "-1"
	if n != rlimInfinity {
		s = strconv.FormatUint(n, 10)
	}
	return s + ":" + s
}

func pidMax() (uint64, bool) {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}

// clientDir is the working directory a container client runs in, and a
// function that tells afterwards whether it saw an OOM kill.
//
// Podman's conmon (2.1.6 in Debian 12; containers/conmon#504) writes its "oom"
// marker on a cgroup v1 OOM kill into its working directory — the
// client's — where Podman 4.3 never looks: the container is reported with
// OOMKilled false, and an empty file named oom is left in the directory
// sandbox was run from, the user's project. Running the client in a
// directory of its own keeps the project clean and lets the harness read
// the marker itself. Docker needs none of this: dir is "".
func (c *containerRuntime) clientDir() (dir string, sawOOM func() bool, done func()) {
	if c.name != "podman" {
		return "", func() bool { return false }, func() {}
	}
	removeStaleClientDirs()
	d, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", clientDirPrefix, os.Getpid()))
	if err != nil {
		return "", func() bool { return false }, func() {}
	}
	return d, func() bool {
			st, err := os.Lstat(filepath.Join(d, "oom"))
			return err == nil && st.Mode().IsRegular()
		}, func() {
			_ = os.RemoveAll(d)
		}
}

// initExecFailed is the line of catatonit or tini that could not execute
// the command.
var initExecFailed = regexp.MustCompile(`^(ERROR \(catatonit:\d+\): failed to exec pid1: |\[FATAL tini \(\d+\)\] exec .* failed: )`)

// startFailed corrects the end of a run whose command never ran when the
// runtime's record does not say so, before the run's error is worked out.
//
// Podman 4.3 without --init leaves a container that could not start (its
// command not in the image, limits runc may not set) in state "created"
// with exit code 0 and no error, while the client exits 125-127 with
// runc's message: the client's code and message stand, or the run would
// be recorded, and reported, as a success.
//
// With --init, catatonit (Podman's) reports a command it cannot exec with
// "ERROR (catatonit:6): failed to exec pid1: No such file or directory"
// and exit code 1 — the agent's own exit 1 to anyone reading the code —
// where tini (Docker's) exits 127 or 126. When that line is all the run
// printed (the agent never ran to print anything), the code becomes the
// shell's: 127 for a command that is not there, 126 for one that cannot be
// run; the init's line then names the error (initExecError).
func startFailed(r Result, clientErr error, lastLines func() []string) Result {
	if r.Signal != "" || r.OOM {
		return r
	}
	if r.ExitCode == 1 {
		var out []string
		for _, l := range lastLines() {
			if strings.TrimSpace(l) != "" {
				out = append(out, strings.TrimSpace(l))
			}
		}
		if len(out) == 1 && initExecFailed.MatchString(out[0]) {
			r.ExitCode = 126
			if strings.HasSuffix(out[0], "No such file or directory") {
				r.ExitCode = 127
			}
		}
		return r
	}
	if clientErr == nil || r.ExitCode != 0 {
		return r
	}
	// 125, 126 and 127 are what docker and podman run exit with when the
	// container could not be run (the engine failed; the command cannot
	// be invoked; it is not there), never a container's own 0.
	c, _ := fromWait(clientErr)
	if c.ExitCode < 125 || c.ExitCode > 127 {
		return r
	}
	r.ExitCode = c.ExitCode
	if r.Error == "" {
		r.Error = clientError(lastLines())
		if r.Error == "" {
			r.Error = "the container did not start"
		}
	}
	return r
}

// clientDirPrefix names the client's directories in the temporary
// directory: sandbox-podman-<harness pid>-<random>.
const clientDirPrefix = "sandbox-podman-"

// removeStaleClientDirs removes the client directories of harnesses that
// died (kill -9) before they could remove their own: those whose pid is
// no longer alive, and that are this user's.
func removeStaleClientDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), clientDirPrefix+"*-*"))
	for _, d := range dirs {
		pidPart, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(d), clientDirPrefix), "-")
		pid, err := strconv.Atoi(pidPart)
		if !ok || err != nil || pid <= 0 || pidAlive(pid) {
			continue
		}
		st, err := os.Lstat(d)
		if err != nil || !st.IsDir() {
			continue
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Geteuid() {
			continue
		}
		_ = os.RemoveAll(d)
	}
}
