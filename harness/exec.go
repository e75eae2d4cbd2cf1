package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// ExecOptions are the flags of sandbox exec.
type ExecOptions struct {
	Command []string
	Env     []string
	Stdin   io.Reader
	TTY     bool
	Stdout  io.Writer
	Stderr  io.Writer
}

// Exec runs a command beside a running session's agent: in its container
// (docker/podman exec), in its namespaces (bwrap, through nsenter), or, for
// local, in its project with its HOME. It returns the command's exit code
// and records it in the runtime log.
func (s *Store) Exec(ctx context.Context, sess *Session, o *ExecOptions) (int, error) {
	if len(o.Command) == 0 {
		return 0, invalidf("no command to run: give it after --")
	}
	if !s.Running(sess) {
		return 0, fmt.Errorf("session %s is not running (%s); sandbox exec enters a running session", sess.ID, sess.State)
	}
	if rt, err := NewRuntime(sess.Runtime, s.Env); err == nil {
		if x, ok := rt.(Execer); ok {
			_ = s.Event(sess.ID, "exec_started", map[string]any{"command": o.Command, "run": sess.Runs})
			r, err := x.Exec(ctx, sess, o)
			if err != nil {
				return 0, fmt.Errorf("exec in session %s: %w", sess.ID, err)
			}
			s.execEnded(sess, o, r)
			return r.ExitCode, nil
		}
	}
	args, env, err := s.execArgs(sess, o)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = env
	if sess.Runtime == "local" {
		cmd.Dir = sess.Project
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	_ = s.Event(sess.ID, "exec_started", map[string]any{"command": o.Command, "run": sess.Runs})
	werr := cmd.Run()
	r, _ := fromWait(werr)
	s.execEnded(sess, o, r)
	var ee *exec.ExitError
	if errors.Is(werr, exec.ErrNotFound) {
		return 0, &CommandError{fmt.Errorf("%s: command not found in PATH", o.Command[0]), 127}
	}
	if werr != nil && !errors.As(werr, &ee) {
		return 0, fmt.Errorf("exec in session %s: %w", sess.ID, werr)
	}
	return r.ExitCode, nil
}

// execArgs is the host command that runs o.Command inside the session, and
// its environment.
func (s *Store) execArgs(sess *Session, o *ExecOptions) ([]string, []string, error) {
	guest := append([]string{"HOME=" + GuestHome, "SANDBOX_SESSION=" + sess.ID, "DOCKER_SANDBOX=1",
		"SANDBOX_EXPORTS=" + guestExports, "USER=sandbox", "TERM=" + termOr(s.Env, "xterm")}, o.Env...)
	switch sess.Runtime {
	case "docker", "podman":
		if sess.Container == "" {
			return nil, nil, fmt.Errorf("session %s has no container yet", sess.ID)
		}
		rt, err := NewRuntime(sess.Runtime, s.Env)
		if err != nil {
			return nil, nil, err
		}
		args := []string{rt.(*containerRuntime).bin, "exec", "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), "-w", GuestWorkspace}
		if o.Stdin != nil {
			args = append(args, "-i")
		}
		if o.TTY {
			args = append(args, "-t")
		}
		for _, e := range guest {
			args = append(args, "-e", e)
		}
		return append(append(args, sess.Container), o.Command...), s.Env.List(), nil
	case "bwrap":
		if !pidAlive(sess.ChildPID) {
			return nil, nil, fmt.Errorf("session %s: its agent (pid %d) is not running", sess.ID, sess.ChildPID)
		}
		nsenter, err := exec.LookPath("nsenter")
		if err != nil {
			return nil, nil, errors.New("sandbox exec into a bwrap session needs nsenter (util-linux)")
		}
		// Every namespace the agent has that is not ours, its root and
		// its working directory.
		args := []string{nsenter, "--target", strconv.Itoa(sess.ChildPID)}
		for _, ns := range []struct{ file, flag string }{{"user", "--user"}, {"mnt", "--mount"}, {"uts", "--uts"},
			{"ipc", "--ipc"}, {"net", "--net"}, {"pid", "--pid"}, {"cgroup", "--cgroup"}} {
			if otherNS(sess.ChildPID, ns.file) {
				args = append(args, ns.flag)
			}
		}
		// --root and --wd without a value take the agent's own: a path
		// given here would be opened on the host, before entering.
		args = append(args, "--root", "--wd", "--preserve-credentials", "--", "/usr/bin/env", "-i",
			"PATH="+s.Env.Get("PATH"))
		args = append(args, guest...)
		return append(args, o.Command...), s.Env.List(), nil
	case "local":
		env := []string{}
		for _, e := range s.Env.List() {
			if !homeVar(e) {
				env = append(env, e)
			}
		}
		// Locally HOME is the workspace on the host itself, as for run.
		return o.Command, append(env, "HOME="+s.Home(sess.ID), "SANDBOX_SESSION="+sess.ID, "DOCKER_SANDBOX=1"), nil
	}
	return nil, nil, fmt.Errorf("session %s: runtime %s has no exec", sess.ID, sess.Runtime)
}

// otherNS reports whether a process is in another namespace of a kind than
// this one.
func otherNS(pid int, kind string) bool {
	theirs, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
	ours, err2 := os.Readlink("/proc/self/ns/" + kind)
	return err1 == nil && err2 == nil && theirs != ours
}

// execEnded records an exec's end.
func (s *Store) execEnded(sess *Session, o *ExecOptions, r Result) {
	fields := map[string]any{"command": o.Command, "run": sess.Runs, "exit_code": r.ExitCode}
	if r.Signal != "" {
		fields["signal"] = r.Signal
	}
	_ = s.Event(sess.ID, "exec_ended", fields)
}
