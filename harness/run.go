package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// RunOptions are the flags of sandbox run.
type RunOptions struct {
	Name    string
	Runtime string // empty: the session's, or the first available for a new one
	Image   string
	Project string
	Memory  string
	CPUs    string
	Network string
	Mounts  []Mount // extra host paths (config.go)
	Env     []string
	Resume  bool
	Command []string
	Stdin   io.Reader
	TTY     bool // stdin is a terminal: see Spec.TTY
	Stdout  io.Writer
	Stderr  io.Writer
	// Note reports what the harness does, for the user (stderr).
	Note func(format string, args ...any)
	// Kill, when it yields, kills the agent at once (a second ^C); Grace
	// is the time between TERM and KILL when the run is cancelled.
	Kill  <-chan struct{}
	Grace time.Duration
	// Mirror, when set, is recorded as the vault the session is mirrored
	// to (the caller mirrors it).
	Mirror string
	// Kube is where a kubernetes session runs; a field given here moves an
	// existing session there (a restored one, onto another cluster).
	Kube KubeTarget
	// ApplyProject applies a manifest of the project's changes (its path)
	// onto the project with the tool's own journaled apply, and says what
	// it did: a runtime that copies the project in and out uses it.
	ApplyProject func(ctx context.Context, manifest, project string) (string, error)
}

// lastLinesKept is how many lines of output a stop event keeps.
const lastLinesKept = 20

// Open finds or creates the session a run names, after Validate: a run
// whose flags cannot work creates nothing.
func (s *Store) Open(ctx context.Context, o *RunOptions) (*Session, bool, error) {
	sess, rt, err := s.Validate(ctx, o)
	if err != nil {
		return nil, false, err
	}
	var proj string
	if o.Project != "" || sess == nil {
		if proj, err = projectDir(orDefault(o.Project, ".")); err != nil {
			return nil, false, &InvalidError{Err: err}
		}
	}
	if sess != nil {
		if o.Image != "" {
			sess.Image = o.Image
		}
		if proj != "" {
			sess.Project = proj
		}
		sess.Kube = moveKube(sess.Kube, o.Kube)
		return sess, false, nil
	}
	now := time.Now().UTC()
	id := o.Name
	if id == "" {
		id = newID(now)
	}
	sess = &Session{ID: id, Name: id, Runtime: rt.Name(), Image: o.Image, Project: proj, Created: now, State: StateCreated}
	if rt.Name() == "kubernetes" {
		k := o.Kube
		sess.Kube = &k
	}
	// Two runs creating one name at once: one makes the directory, the
	// other finds it made and runs as in a session that exists (its runtime
	// checked), never writing a second record over the first.
	if err := os.MkdirAll(filepath.Join(s.Root, "sessions"), 0o755); err != nil {
		return nil, false, err
	}
	if err := os.Mkdir(s.Dir(id), 0o755); errors.Is(err, fs.ErrExist) {
		for try := 0; try < 50; try++ {
			if cur, lerr := s.Load(id); lerr == nil {
				if o.Runtime != "" && o.Runtime != cur.Runtime {
					return nil, false, &InvalidError{Err: fmt.Errorf("session %s runs with %s, not %s (a session keeps its runtime; use a new --name)", cur.ID, cur.Runtime, o.Runtime)}
				}
				return cur, false, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil, false, fmt.Errorf("session %s is being created by another sandbox run; try again", id)
	} else if err != nil {
		return nil, false, err
	}
	if err := s.makeHome(id); err != nil {
		return nil, false, err
	}
	if err := s.Save(sess); err != nil {
		return nil, false, err
	}
	return sess, true, s.Event(id, "session_created", map[string]any{"runtime": rt.Name(), "image": o.Image, "project": proj})
}

// moveKube is a kubernetes session's place after a run that names one: the
// fields given replace the session's.
func moveKube(cur *KubeTarget, to KubeTarget) *KubeTarget {
	if cur == nil {
		return nil
	}
	k := *cur
	for _, f := range [][2]*string{{&k.Context, &to.Context}, {&k.Namespace, &to.Namespace}, {&k.StorageClass, &to.StorageClass}, {&k.Storage, &to.Storage}} {
		if *f[1] != "" {
			*f[0] = *f[1]
		}
	}
	return &k
}

func projectDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("project directory: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("project %s is not a directory", abs)
	}
	return abs, nil
}

// resumeCommand passes the agent's session id back to it, with the
// agent's own flag (agent.Agent.Resume: --resume ID for Claude Code, resume
// ID for Codex, …); a command of no known agent gets SANDBOX_RESUME_ID.
func resumeCommand(command []string, id string) ([]string, []string) {
	for _, a := range agent.All() {
		if out, ok := a.Resume(command, id); ok {
			return out, nil
		}
	}
	return command, []string{"SANDBOX_RESUME_ID=" + id}
}

// Run runs a command in a session's sandbox to its end and records how it
// ended. The error is the harness's own failure; the agent's exit is in the
// session.
func (s *Store) Run(ctx context.Context, sess *Session, o *RunOptions) error {
	if len(o.Command) == 0 {
		return errors.New("no command to run: give it after --")
	}
	rt, err := NewRuntime(sess.Runtime, s.Env)
	if err != nil {
		return err
	}
	if err := rt.Available(ctx); err != nil {
		_ = s.Event(sess.ID, "run_refused", map[string]any{"error": err.Error()})
		return fmt.Errorf("session %s was created with runtime %s, which is not available: %v; sandbox never runs a session without its sandbox", sess.ID, sess.Runtime, strings.TrimSuffix(err.Error(), ": "+ErrUnavailable.Error()))
	}
	if st, err := os.Stat(sess.Project); err != nil || !st.IsDir() {
		return fmt.Errorf("session %s: its project %s is not a directory here; give --project DIR", sess.ID, sess.Project)
	}
	unlock, err := s.Lock(sess.ID)
	if err != nil {
		return err
	}
	defer unlock()
	// Reload under the lock: the record may have moved on.
	if cur, err := s.Load(sess.ID); err == nil {
		cur.Image, cur.Project, cur.Kube = sess.Image, sess.Project, sess.Kube
		sess = cur
	}
	command, env := o.Command, append([]string(nil), o.Env...)
	if o.Resume {
		if sess.AgentSessionID == "" {
			return fmt.Errorf("session %s has no agent session to resume yet (no transcript was found after its runs)", sess.ID)
		}
		var extra []string
		command, extra = resumeCommand(command, sess.AgentSessionID)
		env = append(env, extra...)
		o.note("resuming %s session %s", orDefault(sess.Agent, "agent"), sess.AgentSessionID)
	}
	if sess.Runtime == "local" {
		o.note("runtime local: the agent runs WITHOUT isolation, with HOME=%s", s.Home(sess.ID))
	}
	// The workspace is mounted by its path, and a mount follows links: a
	// home/ that is a link (to /, say) would hand the agent that instead.
	if err := s.makeHome(sess.ID); err != nil {
		return err
	}
	out, err := s.OpenSessionFile(sess.ID, OutputLogName, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return err
	}
	defer out.Close()
	if st, err := out.Stat(); err == nil {
		sess.OutputFrom = st.Size()
	}

	// mu guards sess against the runtime's Started callback; ended tells
	// a callback that comes after the run that the record is final.
	var mu sync.Mutex
	ended := false
	sess.Runs++
	sess.State, sess.Command, sess.Started, sess.Ended = StateRunning, command, time.Now().UTC(), time.Time{}
	sess.ExitCode, sess.Signal, sess.OOM, sess.Error, sess.ChildPID, sess.Container = 0, "", false, "", 0, ""
	sess.HarnessPID = os.Getpid()
	if o.Mirror != "" {
		sess.Mirror = o.Mirror
	}
	if err := s.Save(sess); err != nil {
		return err
	}
	started := map[string]any{"run": sess.Runs, "runtime": sess.Runtime, "image": sess.Image,
		"command": command, "network": network(o.Network), "memory": o.Memory, "cpus": o.CPUs, "harness_pid": sess.HarnessPID,
		"output_from": sess.OutputFrom, "mounts": o.Mounts}
	if o.Mirror != "" {
		started["mirror"] = o.Mirror
	}
	if err := s.Event(sess.ID, "sandbox_started", started); err != nil {
		return err
	}
	spec := &Spec{Session: sess, Store: s, Command: command, Env: env, Memory: o.Memory, CPUs: o.CPUs, Network: o.Network,
		UID: os.Getuid(), GID: os.Getgid(), Stdin: o.Stdin, TTY: o.TTY,
		Stdout: io.MultiWriter(orDiscard(o.Stdout), out), Stderr: io.MultiWriter(orDiscard(o.Stderr), out),
		UserStderr: orDiscard(o.Stderr), LogStderr: out, Kill: o.Kill, Grace: o.Grace, Note: o.note, ApplyProject: o.ApplyProject,
		Started: func(pid int, container string) {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				return
			}
			sess.ChildPID, sess.Container = pid, container
			_ = s.Save(sess)
		}}
	// An interrupt is recorded as it happens: TERM with a grace, then
	// perhaps KILL at once (a second ^C).
	runDone := make(chan struct{})
	kill := make(chan struct{})
	killed := false
	spec.Kill = kill
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Event(sess.ID, "interrupt", map[string]any{"run": sess.Runs, "action": "TERM sent", "kill_after_ms": spec.grace().Milliseconds()})
		case <-runDone:
			return
		}
		select {
		case <-o.Kill:
			mu.Lock()
			killed = true
			mu.Unlock()
			_ = s.Event(sess.ID, "interrupt", map[string]any{"run": sess.Runs, "action": "KILL sent"})
			close(kill)
		case <-runDone:
		}
	}()
	spec.Mounts = o.Mounts // config.go
	res, runErr := rt.Run(ctx, spec)
	close(runDone)
	mu.Lock()
	defer mu.Unlock()
	ended = true
	_ = out.Sync()
	if runErr != nil {
		res = Result{ExitCode: 125, Error: runErr.Error()}
	}
	extra := map[string]any{}
	if ctx.Err() != nil {
		extra["interrupted"] = true
		if killed {
			extra["killed_at_once"] = true
		}
	}
	event := "sandbox_stopped"
	if res.Dropped {
		event = "session_drop"
	}
	s.finish(sess, res, event, extra)
	if f, ok := rt.(Finisher); ok && runErr == nil {
		// The end is on record; now the work comes back (the project,
		// HOME), before the sandbox goes.
		if err := f.Finish(context.WithoutCancel(ctx), spec, res); err != nil {
			_ = s.Event(sess.ID, "copy_out_failed", map[string]any{"run": sess.Runs, "error": err.Error()})
			o.note("session %s: %v", sess.ID, err)
		}
	}
	if res.Container != "" {
		sess.Container = res.Container // also a container that never started
		if err := rt.Remove(context.Background(), sess); err != nil {
			_ = s.Event(sess.ID, "container_remove_failed", map[string]any{"container": res.Container, "error": err.Error()})
		} else {
			_ = s.Event(sess.ID, "container_removed", map[string]any{"container": res.Container})
		}
	}
	s.FindAgentSession(sess)
	if err := s.Save(sess); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("%s could not run the command: %w", sess.Runtime, runErr)
	}
	return nil
}

func (o *RunOptions) note(format string, args ...any) {
	if o.Note != nil {
		o.Note(format, args...)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// finish records a run's end in the session and as an event.
func (s *Store) finish(sess *Session, res Result, event string, extra map[string]any) {
	sess.Ended = time.Now().UTC()
	sess.ExitCode, sess.Signal, sess.OOM, sess.Error = res.ExitCode, res.Signal, res.OOM, res.Error
	sess.State = res.State()
	fields := map[string]any{"run": sess.Runs, "state": string(sess.State), "exit_code": res.ExitCode, "oom": res.OOM,
		"duration_ms": sess.Ended.Sub(sess.Started).Milliseconds(), "last_output": s.lastOutput(sess)}
	if res.Signal != "" {
		fields["signal"] = res.Signal
	}
	if res.Error != "" {
		fields["error"] = res.Error
	}
	if res.Container != "" {
		fields["container"] = res.Container
	}
	for k, v := range map[string]string{"reason": res.Reason, "node": res.Node} {
		if v != "" {
			fields[k] = v
		}
	}
	if len(res.Events) > 0 {
		fields["events"] = res.Events
	}
	for k, v := range extra {
		fields[k] = v
	}
	_ = s.Event(sess.ID, event, fields)
}

// State is the state a run that ended so leaves its session in.
func (res Result) State() State {
	switch {
	case res.Dropped:
		return StateDropped
	case res.OOM:
		return StateOOM
	case res.Signal != "":
		return StateKilled
	case res.Error != "" && res.ExitCode >= 125 && res.ExitCode <= 127:
		return StateError
	}
	return StateExited
}

// ExitStatus is the exit code sandbox run gives back: the agent's, or 128 +
// the signal number when it was killed.
func (sess *Session) ExitStatus() int {
	if sess.ExitCode == 0 && sess.State == StateOOM {
		return 137
	}
	return sess.ExitCode
}

// FindAgentSession looks for the agent's own session id in the workspace
// transcripts (the newest one), and stores it.
func (s *Store) FindAgentSession(sess *Session) {
	home := s.Home(sess.ID)
	var f discover.Finder
	cands := f.Homes(discover.HomesIn(home), discover.Window{})
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].ModTime.After(cands[b].ModTime) })
	for i := range cands {
		c := &cands[i]
		if c.Size == 0 && c.Listed == nil {
			continue // an empty file; a listed session has no size of its own
		}
		// The id the transcript itself records, by the parsers' probe;
		// the file name's when it records none.
		id, agent := c.ID, c.Agent
		if info, err := parse.Probe(c); err == nil {
			if info.ID != "" {
				id = info.ID
			}
			if info.Agent != "" {
				agent = info.Agent
			}
		}
		if id == "" {
			continue
		}
		if id != sess.AgentSessionID {
			_ = s.Event(sess.ID, "agent_session", map[string]any{"agent": string(agent), "agent_session_id": id, "transcript": c.Path})
		}
		sess.AgentSessionID, sess.Agent = id, string(agent)
		return
	}
}

// Check notices a session whose harness died while it ran: its lock is free
// though it says running. It records session_drop with the evidence still
// there (the harness's pid, the container's state and exit, the last
// output) and removes a container that has ended. It reports whether it
// changed the session.
func (s *Store) Check(ctx context.Context, sess *Session) bool {
	if sess.State != StateRunning || s.Locked(sess.ID) {
		return false
	}
	fields := map[string]any{"harness_pid": sess.HarnessPID, "harness_alive": pidAlive(sess.HarnessPID),
		"last_output": s.lastOutput(sess), "run": sess.Runs}
	sess.State, sess.Ended = StateDropped, time.Now().UTC()
	sess.Error = "the harness process died while the session ran"
	if rt, err := NewRuntime(sess.Runtime, s.Env); err == nil && sess.Container != "" {
		res, running, ok := rt.Inspect(ctx, sess)
		fields["container"] = sess.Container
		switch {
		case !ok:
			fields["container_state"] = "missing"
		case running:
			fields["container_state"] = "running"
			sess.Error += "; its container is still running (sandbox stop " + sess.ID + ")"
		default:
			fields["container_state"] = "exited"
			fields["exit_code"], fields["oom"] = res.ExitCode, res.OOM
			if res.Signal != "" {
				fields["signal"] = res.Signal
			}
			sess.ExitCode, sess.Signal, sess.OOM = res.ExitCode, res.Signal, res.OOM
			if err := rt.Remove(ctx, sess); err == nil {
				fields["container_removed"] = true
			}
		}
	} else if sess.ChildPID > 0 {
		fields["agent_pid"], fields["agent_alive"] = sess.ChildPID, pidAlive(sess.ChildPID)
	}
	fields["error"] = sess.Error
	_ = s.Event(sess.ID, "session_drop", fields)
	s.FindAgentSession(sess)
	_ = s.Save(sess)
	return true
}

// Running reports whether a session's harness is running it now.
func (s *Store) Running(sess *Session) bool {
	return sess.State == StateRunning && s.Locked(sess.ID)
}

// Stop stops a running session: TERM, then KILL after grace. The harness
// records the exit; a dropped session whose container still runs is
// stopped and recorded here.
func (s *Store) Stop(ctx context.Context, sess *Session, grace time.Duration) (*Session, error) {
	rt, err := NewRuntime(sess.Runtime, s.Env)
	if err != nil {
		return nil, err
	}
	_ = s.Event(sess.ID, "stop_requested", map[string]any{"grace_ms": grace.Milliseconds(), "by_pid": os.Getpid()})
	if s.Running(sess) {
		if err := rt.Stop(ctx, sess, grace); err != nil {
			return nil, err
		}
		// The running harness records the exit; wait for it.
		deadline := time.Now().Add(grace + 30*time.Second)
		for time.Now().Before(deadline) {
			if !s.Locked(sess.ID) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		return s.Load(sess.ID)
	}
	s.Check(ctx, sess)
	if _, running, ok := rt.Inspect(ctx, sess); ok && running {
		if err := rt.Stop(ctx, sess, grace); err != nil {
			return nil, err
		}
		// A container's stop waits for its end; a pod's delete does not.
		res, running, _ := rt.Inspect(ctx, sess)
		for deadline := time.Now().Add(grace + 30*time.Second); running && time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond)
			res, running, _ = rt.Inspect(ctx, sess)
		}
		s.finish(sess, res, "sandbox_stopped", nil)
		sess.State = StateDropped
		if err := rt.Remove(ctx, sess); err == nil {
			_ = s.Event(sess.ID, "container_removed", map[string]any{"container": sess.Container})
		}
		return sess, s.Save(sess)
	}
	return sess, fmt.Errorf("session %s is not running (%s)", sess.ID, sess.State)
}

// Remove deletes a session that is not running, and its leftover
// container.
func (s *Store) Remove(ctx context.Context, sess *Session) error {
	if s.Running(sess) {
		return fmt.Errorf("session %s is running; stop it first (sandbox stop %s)", sess.ID, sess.ID)
	}
	if rt, err := NewRuntime(sess.Runtime, s.Env); err == nil && sess.Container != "" {
		if _, running, ok := rt.Inspect(ctx, sess); ok && running {
			return fmt.Errorf("session %s's container %s is still running; stop it first (sandbox stop %s)", sess.ID, sess.Container, sess.ID)
		}
		_ = rt.Remove(ctx, sess)
	}
	if rt, err := NewRuntime(sess.Runtime, s.Env); err == nil {
		if p, ok := rt.(Purger); ok {
			if err := p.Purge(ctx, sess); err != nil {
				return fmt.Errorf("session %s: %w (its record is kept)", sess.ID, err)
			}
		}
	}
	return os.RemoveAll(s.Dir(sess.ID))
}

// Pull brings a session's HOME into its home/ from where its runtime keeps
// it (a cluster's volume), for what reads home/; a runtime that mounts
// home/ itself has nothing to do.
func (s *Store) Pull(ctx context.Context, sess *Session) error {
	rt, err := NewRuntime(sess.Runtime, s.Env)
	if err != nil {
		return err
	}
	if p, ok := rt.(Puller); ok {
		return p.Pull(ctx, s, sess)
	}
	return nil
}

// LastActive is when a session last did something: its last output, its
// record's update, or its end.
func (s *Store) LastActive(sess *Session) time.Time {
	t := sess.Updated
	root, err := s.openSession(sess.ID, false)
	if err != nil {
		return t
	}
	defer root.Close()
	if st, err := lstatFile(root, OutputLogName); err == nil && st.Mode().IsRegular() && st.ModTime().After(t) {
		t = st.ModTime()
	}
	return t
}

// lastOutput is the last lines the session's current run wrote.
func (s *Store) lastOutput(sess *Session) []string {
	lines, _ := s.Tail(sess.ID, OutputLogName, sess.OutputFrom, lastLinesKept)
	return lines
}

// makeHome makes sure a session's workspace is a real directory (made if
// missing), not a link, so that mounting it by its path mounts it.
func (s *Store) makeHome(id string) error {
	root, err := s.openSession(id, true)
	if err != nil {
		return err
	}
	defer root.Close()
	home, err := openDir(root, homeName, true)
	if err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	return home.Close()
}

// MakeHome makes a session's workspace, as a run does before it starts
// (a mirror watches it from the start).
func (s *Store) MakeHome(id string) error { return s.makeHome(id) }
