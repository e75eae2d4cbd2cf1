package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentsandbox/sandbox/internal/bytesize"
	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/tidwall/gjson"
)

// Paths inside the sandbox.
const (
	GuestHome      = "/home/sandbox"
	GuestWorkspace = "/workspace"
	guestExports   = GuestHome + "/.sandbox-exports.json"
)

// Spec is one run of a session.
type Spec struct {
	Session *Session
	Store   *Store
	Command []string
	Env     []string // extra K=V
	Memory  string   // e.g. 512m
	CPUs    string   // e.g. 1.5
	Network string   // none (default) or host
	Mounts  []Mount  // extra host paths (config.go)
	UID     int
	GID     int
	Stdin   io.Reader
	// TTY: stdin is the user's terminal. The agent then runs in the
	// terminal's foreground process group, so it reads the keyboard and
	// gets ^C itself (an agent uses it to interrupt a turn), and Docker
	// gives it a terminal (-t).
	TTY    bool
	Stdout io.Writer // live output; the harness also keeps it in logs/output.log
	Stderr io.Writer
	// UserStderr and LogStderr are the two halves of Stderr, for a runtime
	// that filters what the user sees.
	UserStderr, LogStderr io.Writer
	// Started is called once the agent is running, with the process to
	// signal to stop it and the container, if any.
	Started func(childPID int, container string)
	// Grace is how long a cancelled run's agent has between TERM and KILL
	// (StopGrace when zero); a value on Kill kills it at once.
	Grace time.Duration
	Kill  <-chan struct{}
	// Note tells the user what the runtime does (a copy in or out).
	Note func(format string, args ...any)
	// ApplyProject: see RunOptions.
	ApplyProject func(ctx context.Context, manifest, project string) (string, error)
}

// StopGrace is how long an interrupted run's agent has to exit after TERM.
const StopGrace = 10 * time.Second

func (spec *Spec) grace() time.Duration {
	if spec.Grace > 0 {
		return spec.Grace
	}
	return StopGrace
}

// Result is how a run ended.
type Result struct {
	ExitCode  int
	Signal    string // SIGKILL, …, when the agent was killed by a signal
	OOM       bool
	Error     string // the runtime's own error text
	Container string
	// What a cluster runtime also knows of the end: the container's
	// reason (OOMKilled, Error, ContainerCannotRun, Evicted…), the node it
	// ran on, and the pod's events, newest last.
	Reason string
	Node   string
	Events []string
	// Dropped says the sandbox was lost rather than ended (a pod deleted
	// behind the harness's back, its node gone): the run ends in a
	// session_drop with the evidence above.
	Dropped bool
}

// Runtime runs a session's command in a sandbox.
type Runtime interface {
	Name() string
	// Available says why the runtime cannot be used here, if it cannot.
	Available(ctx context.Context) error
	// Run runs the command to its end.
	Run(ctx context.Context, spec *Spec) (Result, error)
	// Inspect gathers what the runtime still knows of a session's last run
	// (a container's state); ok is false when it knows nothing.
	Inspect(ctx context.Context, sess *Session) (r Result, running, ok bool)
	// Stop asks a running session's agent to stop: TERM, then KILL after
	// grace.
	Stop(ctx context.Context, sess *Session, grace time.Duration) error
	// Remove removes what the runtime left of a session (its container).
	Remove(ctx context.Context, sess *Session) error
}

// ErrUnavailable marks a runtime that cannot be used here.
var ErrUnavailable = errors.New("runtime unavailable")

// runtimes are the runtime names, in the order tried by "auto".
var runtimes = []string{"docker", "podman", "bwrap", "local"}

// registered are the runtimes of other packages (kubernetes, in
// harness/kube, which holds the Kubernetes client), by name. They are
// never picked implicitly.
var registered = map[string]func(osenv.Env) Runtime{}

// Register adds a runtime another package implements; a program that
// imports that package offers it to --runtime.
func Register(name string, f func(osenv.Env) Runtime) { registered[name] = f }

// The optional abilities of a runtime whose sandbox keeps the session's
// files away from this machine (a cluster's volume).
type (
	// Finisher does the run's last work after its end is recorded and
	// before its sandbox is removed (copies the project and HOME back).
	Finisher interface {
		Finish(ctx context.Context, spec *Spec, res Result) error
	}
	// Puller brings the session's HOME from where the runtime keeps it
	// into the store's home/, so what reads home/ (recover --session,
	// snapshot, the vault) reads the sandbox's own.
	Puller interface {
		Pull(ctx context.Context, s *Store, sess *Session) error
	}
	// Purger removes everything the runtime keeps of a session (its
	// volume, its objects): sandbox rm and gc.
	Purger interface {
		Purge(ctx context.Context, sess *Session) error
	}
	// Execer runs a command beside a running session's agent.
	Execer interface {
		Exec(ctx context.Context, sess *Session, o *ExecOptions) (Result, error)
	}
	// Imager is a runtime that runs an image (a session needs --image).
	Imager interface {
		NeedsImage() bool
	}
)

// runtimeNames are the names --runtime takes, for messages.
func runtimeNames() string {
	names := slices.Clone(runtimes)
	for n := range registered {
		names = append(names, n)
	}
	slices.Sort(names[4:])
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// NewRuntime returns the named runtime, which runs its commands in env
// (nil: the process's environment); $SANDBOX_DOCKER and $SANDBOX_PODMAN
// name other clients.
func NewRuntime(name string, env osenv.Env) (Runtime, error) {
	switch name {
	case "docker", "podman":
		bin := name
		if v := env.Get("SANDBOX_" + strings.ToUpper(name)); v != "" {
			bin = v
		}
		return &containerRuntime{name: name, bin: bin, env: env}, nil
	case "bwrap":
		return &bwrapRuntime{env: env}, nil
	case "local":
		return &localRuntime{env: env}, nil
	}
	if f, ok := registered[name]; ok {
		return f(env), nil
	}
	return nil, fmt.Errorf("unknown runtime %q (use %s)", name, runtimeNames())
}

// Pick chooses the runtime for a new session: the first of docker, podman
// and bwrap that is available. local is never chosen implicitly.
func Pick(ctx context.Context, env osenv.Env) (Runtime, error) {
	var why []string
	for _, n := range runtimes[:3] {
		rt, _ := NewRuntime(n, env)
		err := rt.Available(ctx)
		if err == nil {
			return rt, nil
		}
		why = append(why, err.Error())
	}
	return nil, fmt.Errorf("no sandbox runtime available (%s); install Docker, Podman or bubblewrap, or choose --runtime local to run without isolation", strings.Join(why, "; "))
}

// signalName names the signal an exit code 128+n stands for.
func SignalName(n int) string {
	s := syscall.Signal(n)
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
		syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
		syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
		syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU",
	}
	if name, ok := names[s]; ok {
		return name
	}
	return "signal " + strconv.Itoa(n)
}

// fromWait turns a process's end into a Result: a shell-style exit code,
// 128+n for a signal (bwrap reports its child's signal that way too).
func fromWait(err error) (Result, error) {
	if err == nil {
		return Result{}, nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return Result{ExitCode: 127, Error: err.Error()}, nil
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		n := int(ws.Signal())
		return Result{ExitCode: 128 + n, Signal: SignalName(n)}, nil
	}
	return CodeResult(ee.ExitCode()), nil
}

// CodeResult is the end a shell-style exit code says: 128+n is signal n.
func CodeResult(code int) Result {
	r := Result{ExitCode: code}
	if code > 128 && code < 160 {
		r.Signal = SignalName(code - 128)
	}
	return r
}

// guestEnv is the environment every runtime gives the agent.
func GuestEnv(spec *Spec) []string {
	env := []string{
		"HOME=" + GuestHome,
		"SANDBOX_SESSION=" + spec.Session.ID,
		"DOCKER_SANDBOX=1",
		"SANDBOX_EXPORTS=" + guestExports,
		"USER=sandbox",
		"TERM=" + termOr(spec.Store.env(), "xterm"),
	}
	return append(env, spec.Env...)
}

func termOr(env osenv.Env, def string) string {
	if t := env.Get("TERM"); t != "" {
		return t
	}
	return def
}

// hiddenStore returns the path under the project, if any, where the
// harness's own state is, so the runtime can cover it: one session must
// never see another's workspace, even when the project holds the store.
func HiddenStore(project, store string) (string, bool) {
	rel, err := filepath.Rel(project, filepath.Join(store, "sessions"))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		rel2, err2 := filepath.Rel(project, store)
		if err2 != nil || strings.HasPrefix(rel2, "..") {
			return "", false
		}
		return filepath.ToSlash(rel2), true
	}
	return filepath.ToSlash(rel), true
}

// ---- Docker and Podman ----

type containerRuntime struct {
	name, bin string
	env       osenv.Env
}

// command is the client run with args, in the runtime's environment.
func (c *containerRuntime) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env.List()
	return cmd
}

func (c *containerRuntime) Name() string { return c.name }

// NeedsImage: a container runs an image.
func (*containerRuntime) NeedsImage() bool { return true }

func (c *containerRuntime) Available(ctx context.Context) error {
	if _, err := exec.LookPath(c.bin); err != nil {
		return fmt.Errorf("%s is not installed (%s not found in PATH): %w", c.name, c.bin, ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := c.command(ctx, "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s is not running: %s: %w", c.name, firstLine(string(out), err), ErrUnavailable)
	}
	return nil
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return err.Error()
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:] // the last line says why
	}
	return s
}

// containerName is the container of a session's run.
func containerName(sess *Session) string {
	return fmt.Sprintf("sandbox-%s-%d", sess.ID, sess.Runs)
}

func (c *containerRuntime) Run(ctx context.Context, spec *Spec) (Result, error) {
	sess := spec.Session
	if sess.Image == "" {
		return Result{}, fmt.Errorf("%s needs an image: give --image", c.name)
	}
	name := containerName(sess)
	_ = c.rm(ctx, name) // a leftover of a dropped run of the same number
	args := []string{"run", "--name", name,
		"--label", "sandbox.session=" + sess.ID,
		"--label", "sandbox.store=" + spec.Store.Root,
		"--label", "sandbox.run=" + strconv.Itoa(sess.Runs),
		"--user", fmt.Sprintf("%d:%d", spec.UID, spec.GID),
		"--network", network(spec.Network),
		"-v", spec.Store.Home(sess.ID) + ":" + GuestHome,
		"-v", sess.Project + ":" + GuestWorkspace,
		"-w", GuestWorkspace,
		// A real init as PID 1 (Docker's docker-init, Podman's catatonit):
		// it passes TERM on to an agent that installs no handler for it
		// (as PID 1 the agent would ignore it), reaps the zombies of the
		// agent's shells, and lets a process that kills itself die.
		"--init",
	}
	if c.name == "podman" {
		args = append(args, podmanArgs()...) // podman.go
	}
	if rel, ok := HiddenStore(sess.Project, spec.Store.Root); ok {
		args = append(args, "--tmpfs", GuestWorkspace+"/"+rel)
	}
	args = append(args, mountArgs(spec.Mounts)...) // config.go
	if spec.Memory != "" {
		// In bytes: Docker and Podman read 512MB as 512 MiB, and the
		// limit must be the one bwrap and local set for the same words.
		mem, err := bytesize.Parse(spec.Memory)
		if err != nil {
			return Result{}, fmt.Errorf("--memory %q: %w", spec.Memory, err)
		}
		n := strconv.FormatInt(mem, 10)
		args = append(args, "--memory", n, "--memory-swap", n)
	}
	if spec.CPUs != "" {
		args = append(args, "--cpus", spec.CPUs)
	}
	for _, e := range GuestEnv(spec) {
		args = append(args, "-e", e)
	}
	if spec.Stdin != nil {
		args = append(args, "-i")
	}
	if spec.TTY {
		args = append(args, "-t")
	}
	args = append(args, sess.Image)
	args = append(args, spec.Command...)
	cmd := c.command(context.Background(), args...)
	// The client's own error for a container that could not start is
	// said once, by sandbox, without the client's hints; it is still in
	// logs/output.log.
	userErr := &clientFilter{w: spec.userStderr(), bin: c.bin}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, io.MultiWriter(userErr, spec.logStderr())
	cmd.SysProcAttr = procAttr(spec)
	var sawOOM func() bool // podman.go
	var cleanDir func()
	cmd.Dir, sawOOM, cleanDir = c.clientDir()
	defer cleanDir()
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		// Tell the caller the container's process, once it is up.
		for i := 0; i < 100; i++ {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if pid := c.pid(ctx, name); pid > 0 {
				if spec.Started != nil {
					spec.Started(pid, name)
				}
				return
			}
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			stopped := make(chan struct{})
			go func() {
				select {
				case <-spec.Kill:
					_ = c.kill(context.Background(), name)
				case <-stopped:
				}
			}()
			_ = c.stop(context.Background(), name, spec.grace())
			close(stopped)
		case <-spec.Kill:
			_ = c.kill(context.Background(), name)
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)
	<-watched // see procRun
	userErr.flush()
	r, _, ok := c.inspect(context.Background(), name)
	if !ok {
		// The container never came to be: the client's own error.
		r, _ = fromWait(werr)
		r.Error = "the container was not created"
		last, _ := spec.Store.Tail(sess.ID, OutputLogName, sess.OutputFrom, 8)
		if msg := clientError(last); msg != "" {
			r.Error += ": " + daemonError(msg)
		}
		return r, nil
	}
	// A container that was created but could not start (its command is
	// not in the image) is removed like any other.
	r.Container = name
	r.OOM = r.OOM || sawOOM()
	r = startFailed(r, werr, func() []string { // podman.go
		last, _ := spec.Store.Tail(sess.ID, OutputLogName, sess.OutputFrom, 8)
		return last
	})
	if r.Error != "" {
		r.Error = daemonError(r.Error)
	}
	if r.ExitCode == 126 || r.ExitCode == 127 {
		// The init could not start the command: the run never began.
		last, _ := spec.Store.Tail(sess.ID, OutputLogName, sess.OutputFrom, 4)
		if msg := initExecError(last); msg != "" && r.Error == "" {
			r.Error = fmt.Sprintf("%s: %s in the image %s", spec.Command[0], msg, sess.Image)
		}
	}
	return r, nil
}

// initExecError recognises the init's report that it could not exec the
// command: tini's "[FATAL tini (7)] exec x failed: No such file or
// directory", catatonit's "… failed to exec pid1: No such file or
// directory".
func initExecError(lines []string) string {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if (strings.HasPrefix(l, "[FATAL tini") && strings.Contains(l, "] exec ")) || strings.Contains(l, "failed to exec pid1") {
			if i := strings.LastIndex(l, ": "); i >= 0 {
				return strings.ToLower(l[i+2:])
			}
			return "could not be started"
		}
	}
	return ""
}

// kill kills a container's processes at once.
func (c *containerRuntime) kill(ctx context.Context, name string) error {
	out, err := c.command(ctx, "kill", "--signal", "KILL", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s kill %s: %s", c.name, name, firstLine(string(out), err))
	}
	return nil
}

// clientError picks the container client's own error out of its last lines
// ("docker: Error response from daemon: …"), else its last words.
func clientError(lines []string) string {
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.Contains(strings.ToLower(l), "error") {
			return l
		}
		if last == "" {
			last = l
		}
	}
	return last
}

func network(n string) string {
	if n == "host" {
		return "host"
	}
	return "none"
}

func (c *containerRuntime) pid(ctx context.Context, name string) int {
	out, err := c.command(ctx, "inspect", "--format", "{{.State.Pid}}", name).Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// inspect reads a container's end: exit code, OOM flag, the runtime's error.
func (c *containerRuntime) inspect(ctx context.Context, name string) (Result, bool, bool) {
	out, err := c.command(ctx, "inspect", "--format",
		"{{.State.Status}}|{{.State.ExitCode}}|{{.State.OOMKilled}}|{{.State.Error}}", name).Output()
	if err != nil {
		return Result{}, false, false
	}
	parts := strings.SplitN(strings.TrimSpace(string(out)), "|", 4)
	if len(parts) < 4 {
		return Result{}, false, false
	}
	code, _ := strconv.Atoi(parts[1])
	r := CodeResult(code)
	r.OOM, r.Error, r.Container = parts[2] == "true", parts[3], name
	if parts[0] == "created" && r.Error != "" && code == 0 {
		r.ExitCode = 125 // never started
	}
	return r, parts[0] == "running" || parts[0] == "paused" || parts[0] == "restarting", true
}

func (c *containerRuntime) Inspect(ctx context.Context, sess *Session) (Result, bool, bool) {
	if sess.Container == "" {
		return Result{}, false, false
	}
	return c.inspect(ctx, sess.Container)
}

func (c *containerRuntime) stop(ctx context.Context, name string, grace time.Duration) error {
	out, err := c.command(ctx, "stop", "--time", strconv.Itoa(int(grace.Round(time.Second)/time.Second)), name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s stop %s: %s", c.name, name, firstLine(string(out), err))
	}
	return nil
}

func (c *containerRuntime) Stop(ctx context.Context, sess *Session, grace time.Duration) error {
	if sess.Container == "" {
		return fmt.Errorf("session %s has no container", sess.ID)
	}
	return c.stop(ctx, sess.Container, grace)
}

func (c *containerRuntime) rm(ctx context.Context, name string) error {
	out, err := c.command(ctx, "rm", "--force", name).CombinedOutput()
	if err != nil && !strings.Contains(strings.ToLower(string(out)), "no such container") {
		return fmt.Errorf("%s rm %s: %s", c.name, name, firstLine(string(out), err))
	}
	return nil
}

func (c *containerRuntime) Remove(ctx context.Context, sess *Session) error {
	if sess.Container == "" {
		return nil
	}
	return c.rm(ctx, sess.Container)
}

// Leftovers lists the containers the harness left behind in a store (found
// by label), running or not.
func (c *containerRuntime) Leftovers(ctx context.Context, store string) ([]string, error) {
	out, err := c.command(ctx, "ps", "--all",
		"--filter", "label=sandbox.store="+store, "--format", "{{.Names}}").Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// leftovers lists a container runtime's containers left behind in a store.
func leftovers(ctx context.Context, rt Runtime, store string) ([]string, error) {
	if c, ok := rt.(*containerRuntime); ok {
		return c.Leftovers(ctx, store)
	}
	return nil, nil
}

// removeContainer removes a container by name.
func removeContainer(ctx context.Context, rt Runtime, name string) error {
	if c, ok := rt.(*containerRuntime); ok {
		return c.rm(ctx, name)
	}
	return nil
}

// ---- processes: bubblewrap and local ----

// procRun starts cmd in its own process group (or, interactive, on a
// pseudo-terminal of its own), inside a cgroup when the run has limits,
// reports the agent's pid, stops it on cancellation (TERM, then KILL after
// the grace, or at once on spec.Kill), and waits.
func procRun(ctx context.Context, cmd *exec.Cmd, spec *Spec, ctty bool, agentPID func() int, afterStart func()) (Result, error) {
	var cg *cgroup
	if spec.Memory != "" || spec.CPUs != "" {
		var err error
		cg, err = newCgroup(fmt.Sprintf("sandbox-%s-%d", spec.Session.ID, spec.Session.Runs), spec.Memory, spec.CPUs)
		if err != nil {
			if afterStart != nil {
				afterStart()
			}
			return Result{}, fmt.Errorf("%s cannot limit memory or CPUs: %w", spec.Session.Runtime, err)
		}
		defer cg.remove()
		argv := cg.wrap(append([]string{cmd.Path}, cmd.Args[1:]...))
		cmd.Path, cmd.Args = argv[0], argv
	}
	term, err := startProc(cmd, spec, ctty)
	if afterStart != nil {
		afterStart()
	}
	if err != nil {
		return Result{}, err
	}
	done := make(chan struct{})
	// The watcher is joined before the run returns: nothing it does (a
	// Started callback that saves the session) may come after the run.
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for i := 0; i < 100; i++ {
			if pid := agentPID(); pid > 0 {
				if spec.Started != nil {
					spec.Started(pid, "")
				}
				break
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		select {
		case <-ctx.Done():
			if pid := agentPID(); pid > 0 {
				_ = signalThenKill(pid, spec.grace(), done, spec.Kill)
			}
		case <-spec.Kill:
			if pid := agentPID(); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)
	<-watched
	if term != nil {
		term.finish()
	}
	r, err := fromWait(werr)
	if cg != nil && cg.oomKilled() {
		r.OOM = true
	}
	return r, err
}

// procAttr puts a non-interactive run in its own process group, so a ^C
// reaches the agent through the harness (TERM, grace, KILL, recorded); an
// interactive one stays in the terminal's foreground group.
func procAttr(spec *Spec) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: !spec.TTY}
}

// signalThenKill sends TERM, waits up to grace for the process to go, and
// then sends KILL.
func signalThenKill(pid int, grace time.Duration, done <-chan struct{}, now <-chan struct{}) error {
	if err := signalAgent(pid, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := time.After(grace)
	for {
		select {
		case <-done:
			return nil
		case <-deadline:
			return signalAgent(pid, syscall.SIGKILL)
		case <-now:
			return signalAgent(pid, syscall.SIGKILL)
		case <-time.After(50 * time.Millisecond):
			if syscall.Kill(pid, 0) != nil {
				return nil
			}
		}
	}
}

// signalAgent signals an agent and, when it leads its own process group
// (a local run: its shells' children are in it), the whole group, so that
// a child holding its output cannot outlive it.
func signalAgent(pid int, sig syscall.Signal) error {
	if pg, err := syscall.Getpgid(pid); err == nil && pg == pid {
		if syscall.Kill(-pid, sig) == nil {
			return nil
		}
	}
	return syscall.Kill(pid, sig)
}

// pidAlive reports whether a process exists.
func pidAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

func stopPID(sess *Session, grace time.Duration) error {
	if !pidAlive(sess.ChildPID) {
		return fmt.Errorf("session %s: its agent (pid %d) is not running", sess.ID, sess.ChildPID)
	}
	return signalThenKill(sess.ChildPID, grace, nil, nil)
}

type bwrapRuntime struct{ env osenv.Env }

func (*bwrapRuntime) Name() string { return "bwrap" }

func (*bwrapRuntime) Available(ctx context.Context) error {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("bwrap is not installed (apt-get install bubblewrap): %w", ErrUnavailable)
	}
	out, err := exec.CommandContext(ctx, p, "--ro-bind", "/", "/", "--unshare-all", "--", "true").CombinedOutput()
	if err != nil {
		return fmt.Errorf("bwrap cannot create namespaces here: %s: %w", firstLine(string(out), err), ErrUnavailable)
	}
	return nil
}

// systemDirs are bound read-only into a bubblewrap sandbox: the system, not
// the host's homes, /tmp or the harness's state.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"}

func (b *bwrapRuntime) Run(ctx context.Context, spec *Spec) (Result, error) {
	sess := spec.Session
	args := []string{"--die-with-parent", "--unshare-all"}
	if !spec.TTY {
		// No controlling terminal: nothing inside can push keystrokes
		// into the caller's terminal (TIOCSTI). An interactive agent
		// keeps the terminal it needs.
		args = append(args, "--new-session")
	}
	if spec.Network == "host" {
		args = append(args, "--share-net")
	}
	for _, d := range systemDirs {
		if _, err := os.Lstat(d); err == nil {
			args = append(args, "--ro-bind", d, d)
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", spec.Store.Home(sess.ID), GuestHome,
		"--bind", sess.Project, GuestWorkspace)
	if rel, ok := HiddenStore(sess.Project, spec.Store.Root); ok {
		args = append(args, "--tmpfs", GuestWorkspace+"/"+rel)
	}
	args = append(args, bwrapMountArgs(spec.Mounts)...) // config.go
	// The agent's executable, when it lives outside the system directories.
	exe, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", spec.Command[0], err)
	}
	exe, _ = filepath.Abs(exe)
	if !underAny(exe, systemDirs) {
		args = append(args, "--ro-bind", exe, exe)
	}
	args = append(args, "--clearenv")
	for _, e := range append([]string{"PATH=" + b.env.Get("PATH")}, GuestEnv(spec)...) {
		k, v, _ := strings.Cut(e, "=")
		args = append(args, "--setenv", k, v)
	}
	args = append(args, "--chdir", GuestWorkspace, "--info-fd", "3", "--")
	// On a terminal the agent takes it as its own session's (setsid
	// --ctty, then exec): the ^C the terminal makes is the agent's alone.
	// Were bwrap the terminal's session leader, ^C would kill bwrap, and
	// the agent with it, before the agent could answer it.
	ctty := true
	if wantsPTY(spec) {
		if setsid, err := exec.LookPath("setsid"); err == nil && underAny(setsid, systemDirs) {
			args = append(args, setsid, "--ctty")
			ctty = false
		}
	}
	args = append(args, exe)
	args = append(args, spec.Command[1:]...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.Command("bwrap", args...)
	cmd.Env = b.env.List()
	cmd.ExtraFiles = []*os.File{pw}
	info := make(chan int, 1)
	go func() {
		b, _ := io.ReadAll(pr)
		pr.Close()
		info <- int(gjson.GetBytes(b, "child-pid").Int())
	}()
	var initPID int
	agent := func() int {
		if initPID == 0 {
			select {
			case initPID = <-info:
			default:
				return 0
			}
		}
		// bwrap's own init is the child; the agent is its child.
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", initPID, initPID))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(f[0])
		return n
	}
	return procRun(ctx, cmd, spec, ctty, agent, func() { pw.Close() })
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

func (*bwrapRuntime) Inspect(context.Context, *Session) (Result, bool, bool) {
	return Result{}, false, false
}

func (*bwrapRuntime) Stop(_ context.Context, sess *Session, grace time.Duration) error {
	return stopPID(sess, grace)
}

func (*bwrapRuntime) Remove(context.Context, *Session) error { return nil }

// localRuntime runs the command directly, without isolation. It is never
// chosen implicitly.
type localRuntime struct{ env osenv.Env }

func (*localRuntime) Name() string                    { return "local" }
func (*localRuntime) Available(context.Context) error { return nil }

func (l *localRuntime) Run(ctx context.Context, spec *Spec) (Result, error) {
	if len(spec.Mounts) > 0 { // refused before the session is made (resolve.go); never ignored
		return Result{}, errors.New("runtime local cannot mount: it has no sandbox")
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Dir = spec.Session.Project
	env := []string{}
	for _, e := range l.env.List() {
		if !homeVar(e) {
			env = append(env, e)
		}
	}
	// Locally HOME is the workspace on the host itself.
	for _, e := range GuestEnv(spec) {
		switch {
		case strings.HasPrefix(e, "HOME="):
			e = "HOME=" + spec.Store.Home(spec.Session.ID)
		case strings.HasPrefix(e, "SANDBOX_EXPORTS="):
			e = "SANDBOX_EXPORTS=" + filepath.Join(spec.Store.Home(spec.Session.ID), ".sandbox-exports.json")
		}
		env = append(env, e)
	}
	cmd.Env = env
	var pid int
	return procRun(ctx, cmd, spec, true, func() int {
		if pid == 0 && cmd.Process != nil {
			pid = cmd.Process.Pid
		}
		return pid
	}, nil)
}

func (*localRuntime) Inspect(context.Context, *Session) (Result, bool, bool) {
	return Result{}, false, false
}

func (*localRuntime) Stop(_ context.Context, sess *Session, grace time.Duration) error {
	return stopPID(sess, grace)
}

func (*localRuntime) Remove(context.Context, *Session) error { return nil }

// userStderr and logStderr are where a run's error output goes: the user's
// terminal and logs/output.log. Spec.Stderr writes to both; a runtime that
// filters what the user sees writes to each itself.
func (spec *Spec) userStderr() io.Writer {
	if spec.UserStderr != nil {
		return spec.UserStderr
	}
	return orDiscard(spec.Stderr)
}

func (spec *Spec) logStderr() io.Writer {
	if spec.LogStderr != nil {
		return spec.LogStderr
	}
	return io.Discard
}

// clientFilter passes a container client's stderr through, line by line,
// but for the client's own error lines ("docker: Error response from
// daemon: …", "Run 'docker run --help' for more information", and the blank
// line between them): sandbox says those once, itself, in plain words.
type clientFilter struct {
	w       io.Writer
	bin     string
	buf     []byte
	dropped bool // the last line was the client's
}

func (f *clientFilter) prefixes() []string {
	base := filepath.Base(f.bin)
	return []string{base + ": Error response from daemon: ", base + ": error response from daemon: ", "Error: ", "Run '", "[FATAL tini", "ERROR (catatonit"}
}

func (f *clientFilter) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			break
		}
		f.line(f.buf[:i+1])
		f.buf = f.buf[i+1:]
	}
	// A partial line (a prompt) is held back only while it may still
	// become one of the client's.
	if len(f.buf) > 0 && !f.mayBeClient(f.buf) {
		_, _ = f.w.Write(f.buf)
		f.buf = f.buf[:0]
		f.dropped = false
	}
	return len(p), nil
}

func (f *clientFilter) mayBeClient(b []byte) bool {
	for _, p := range f.prefixes() {
		n := min(len(b), len(p))
		if string(b[:n]) == p[:n] {
			return true
		}
	}
	return false
}

func (f *clientFilter) line(b []byte) {
	l := strings.TrimRight(string(b), "\r\n")
	p := f.prefixes()
	client := strings.HasPrefix(l, p[0]) || strings.HasPrefix(l, p[1]) ||
		strings.HasPrefix(l, p[2]) && strings.Contains(l, "OCI runtime") ||
		strings.HasPrefix(l, p[3]) && strings.HasSuffix(l, " --help' for more information") ||
		strings.HasPrefix(l, p[4]) || strings.HasPrefix(l, p[5]) && strings.Contains(l, "failed to exec pid1") ||
		l == "" && f.dropped
	if client {
		f.dropped = true
		return
	}
	f.dropped = false
	_, _ = f.w.Write(b) // a terminal gone away: the log keeps it
}

func (f *clientFilter) flush() {
	if len(f.buf) > 0 {
		f.line(f.buf)
	}
	f.buf = nil
}

// homeVar reports a variable that says where an agent keeps its state. A
// local run drops the host's: HOME is the session's workspace, and an agent
// told CODEX_HOME=~/.codex (or XDG_DATA_HOME, …) would keep its transcripts
// on the host instead, where resume and recover --session never look. The
// agents name theirs (agent.About.StateEnv).
func homeVar(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	switch k {
	case "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME":
		return true
	}
	for _, a := range agent.All() {
		if slices.Contains(a.About().StateEnv, k) {
			return true
		}
	}
	return false
}
