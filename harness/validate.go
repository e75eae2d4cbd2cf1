package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/internal/bytesize"
)

// CommandError is a command that cannot be started at all: Code is the
// shell's 127 (not found) or 126 (not executable).
type CommandError struct {
	Err  error
	Code int
}

func (e *CommandError) Error() string { return e.Err.Error() }
func (e *CommandError) Unwrap() error { return e.Err }

// InvalidError is a run's flag or value that cannot work: the command line is
// wrong, and nothing was created. sandbox maps it to exit code 2.
type InvalidError struct {
	Err  error
	Hint string // the next step, when there is a better one than --help
}

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error {
	return &InvalidError{Err: fmt.Errorf(format, args...)}
}

// Validate checks a run's options before anything is created: the name, the
// runtime and that it is usable here, the limits and whether the runtime can
// enforce them, the network, and that a container image is on this machine
// (or can be pulled). It returns the session the options name, when it
// exists, and the runtime the run will use.
func (s *Store) Validate(ctx context.Context, o *RunOptions) (*Session, Runtime, error) {
	if len(o.Command) == 0 {
		return nil, nil, invalidf("no command to run: give it after --")
	}
	if o.Name != "" {
		if err := ValidName(o.Name); err != nil {
			return nil, nil, &InvalidError{Err: err}
		}
	}
	if o.Network != "" && o.Network != "none" && o.Network != "host" {
		return nil, nil, invalidf("--network %q: use none or host", o.Network)
	}
	if o.Memory != "" {
		if n, err := bytesize.Parse(o.Memory); err != nil || n < 6<<20 {
			return nil, nil, invalidf("--memory %q: want a size of at least 6m, such as 512m or 2g", o.Memory)
		}
	}
	if o.CPUs != "" {
		f, err := strconv.ParseFloat(o.CPUs, 64)
		if err != nil || f <= 0 || f > 1024 {
			return nil, nil, invalidf("--cpus %q: want a positive number of CPUs, such as 1.5", o.CPUs)
		}
		if n := runtime.NumCPU(); f > float64(n) {
			return nil, nil, invalidf("--cpus %s: this machine has %d", o.CPUs, n)
		}
	}
	for _, e := range o.Env {
		k, _, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, nil, invalidf("--env %q: want K=V", e)
		}
		if reservedEnv[k] {
			// HOME elsewhere would keep the transcripts out of the
			// workspace: no resume, nothing for recover --session.
			return nil, nil, invalidf("--env %s: the harness sets %s itself (the workspace's HOME and the session's marks)", k, k)
		}
	}
	var sess *Session
	if o.Name != "" {
		var err error
		sess, err = s.Load(o.Name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if err != nil {
			sess = nil
		}
	}
	if o.Resume && sess == nil {
		// Not the command line's fault: the store has no such session.
		return nil, nil, errors.New("--resume needs an existing session: give its --name")
	}
	rtName := o.Runtime
	if sess != nil {
		if rtName != "" && rtName != sess.Runtime {
			return nil, nil, invalidf("session %s runs with %s, not %s (a session keeps its runtime; use a new --name)", sess.ID, sess.Runtime, rtName)
		}
		rtName = sess.Runtime
	}
	var rt Runtime
	if rtName == "" {
		var err error
		if rt, err = Pick(ctx, s.Env); err != nil {
			return nil, nil, err
		}
	} else {
		var err error
		if rt, err = NewRuntime(rtName, s.Env); err != nil {
			return nil, nil, &InvalidError{Err: err}
		}
	}
	image := o.Image
	if image == "" && sess != nil {
		image = sess.Image
	}
	switch rt.(type) {
	case Imager:
		if image == "" {
			return nil, nil, invalidf("a %s session needs an image: give --image (it is remembered for later runs)", rt.Name())
		}
	default:
		if o.Image != "" {
			return nil, nil, invalidf("--image is for docker and podman; runtime %s runs the host's own programs", rt.Name())
		}
	}
	if sess != nil && o.Resume && sess.AgentSessionID == "" {
		return nil, nil, fmt.Errorf("session %s has no agent session to resume yet (no transcript was found after its runs)", sess.ID)
	}
	// From here on the checks ask the runtime: a session that exists and
	// whose runtime is gone fails in Run, with its own event.
	if sess != nil {
		return sess, rt, nil
	}
	if err := rt.Available(ctx); err != nil {
		return nil, nil, err
	}
	if err := checkLimits(rt, o); err != nil {
		return nil, nil, err
	}
	if c, ok := rt.(*containerRuntime); ok {
		if err := c.haveImage(ctx, image, o); err != nil {
			return nil, nil, err
		}
	} else if _, ok := rt.(Imager); ok {
		// The cluster has the image, or pulls it: its node says which.
	} else if err := findCommand(o.Command[0]); err != nil {
		return nil, nil, err
	}
	return nil, rt, nil
}

// findCommand checks that a command bwrap or local would run is on this
// host, as the shell would: 127 when it is not there, 126 when it cannot
// be run.
func findCommand(name string) error {
	_, err := exec.LookPath(name)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrPermission):
		return &CommandError{fmt.Errorf("%s: not executable", name), 126}
	}
	return &CommandError{fmt.Errorf("%s: command not found in PATH", name), 127}
}

// checkLimits refuses limits the runtime cannot enforce here, saying why,
// rather than run without them.
func checkLimits(rt Runtime, o *RunOptions) error {
	if o.Memory == "" && o.CPUs == "" {
		return nil
	}
	switch rt.(type) {
	case *bwrapRuntime, *localRuntime:
		if _, err := limitsAvailable(o.Memory != "", o.CPUs != ""); err != nil {
			return invalidf("%s cannot limit memory or CPUs here: %v", rt.Name(), err)
		}
	}
	return nil
}

// haveImage makes sure the image is on this machine before a session is
// created for it: present, or pulled now. A pull that fails is the user's
// image name (or a registry out of reach), said once and clearly.
func (c *containerRuntime) haveImage(ctx context.Context, image string, o *RunOptions) error {
	if c.imagePresent(ctx, image) {
		return nil
	}
	o.note("image %s is not on this machine; pulling it", image)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	out, err := c.command(pctx, "pull", "--quiet", image).CombinedOutput()
	if err == nil && c.imagePresent(ctx, image) {
		return nil
	}
	return &InvalidError{fmt.Errorf("image %s is not on this machine and could not be pulled: %s", image, daemonError(firstLine(string(out), err))),
		fmt.Sprintf("%s images lists the images here; build or load it (%s build, %s load), or give another --image", c.bin, c.bin, c.bin)}
}

func (c *containerRuntime) imagePresent(ctx context.Context, image string) bool {
	return c.command(ctx, "image", "inspect", "--format", "{{.Id}}", image).Run() == nil
}

// daemonError strips the container client's wrapping from an error line:
// "docker: Error response from daemon: failed to create shim task: OCI
// runtime create failed: runc create failed: unable to start container
// process: exec: "x": executable file not found in $PATH: unknown" says
// only `exec: "x": executable file not found in $PATH`.
func daemonError(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range []string{"docker: ", "podman: ", "Error: ", "Error response from daemon: ", "error response from daemon: "} {
		s = strings.TrimPrefix(s, p)
	}
	if i := strings.Index(s, "unable to start container process: "); i >= 0 {
		s = s[i+len("unable to start container process: "):]
	}
	s = strings.TrimSuffix(s, ": unknown")
	return s
}
