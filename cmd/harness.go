package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/inspect"
	"github.com/agentsandbox/sandbox/internal/bytesize"
	"github.com/agentsandbox/sandbox/internal/progress"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
)

func (a *app) store() *harness.Store { return &harness.Store{Root: a.stateRoot(), Env: a.env} }

// note tells the user what the harness does, unless --quiet.
func (a *app) note(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, "sandbox: "+format+"\n", args...)
	}
}

func (a *app) runCommand() *cobra.Command {
	var o harness.RunOptions
	var d runDefaults // run_config.go
	c := &cobra.Command{
		Use:   "run [--name N] [--runtime docker|podman|bwrap|kubernetes|local] [--image I] [--project DIR] [--resume] -- CMD...",
		Short: "Run an agent in a sandbox whose work, transcripts and exit survive it",
		Long: reflow(`sandbox run runs a command (an agent) in a sandbox with a per-session workspace on the
host. The workspace ($SANDBOX_HOME/sessions/<id>/home) is mounted read-write
as /home/sandbox with HOME set to it, so the agent's transcripts and settings
survive the sandbox; the project (--project, default the current directory)
is mounted at /workspace, the working directory. The agent runs as your
uid:gid, so the files it writes on the host are yours, with SANDBOX_SESSION,
DOCKER_SANDBOX=1 and SANDBOX_EXPORTS set, and without network unless
--network host. No other session's workspace is visible inside.

Output is shown live and kept in logs/output.log. Containers are started
without --rm; when the agent exits the harness records the exit code, signal,
OOM flag, the runtime's error, duration and last lines of output as a
sandbox_stopped event in logs/runtime.jsonl (fsynced), then removes the
container. After each run it finds the agent's own session id in the
workspace transcripts, stores it in session.json, and writes the session's
export manifest (manifest.json).

--resume passes the stored id back: ` + agentResumes() + `, SANDBOX_RESUME_ID
to any other command. A new session uses the first
of docker, podman and bwrap that works here; local runs without any
isolation and is only used when asked for. A session keeps its runtime: if
it is unavailable later, run fails rather than run unsandboxed.

--runtime kubernetes runs it on a cluster (kubeconfig as kubectl finds it,
--kube-context, --namespace): the workspace is a volume, a pod runs each run,
the project is copied in before it and the agent's changes are applied back
after it through the journaled apply (sandbox undo reverses them), and the
exit is recorded before the pod is let go. See docs/scale.md.

run exits with the agent's exit code, or 128 + the signal number when it was
killed (137 for an OOM kill).`),
		Example: `  sandbox run --name fix-tests --image my-agent:latest -- claude -p "fix the failing tests"
  sandbox run --name fix-tests --resume -- claude -p "carry on"
  sandbox run --runtime bwrap --project ~/src/app -- codex exec "add a README"
  sandbox run --runtime kubernetes --image my-agent:latest --namespace agents -- claude -p "fix it"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Command = args
			if err := a.applyDefaults(cmd, &o, &d); err != nil { // run_config.go
				return err
			}
			return a.runRun(cmd.Context(), &o)
		},
	}
	f := c.Flags()
	f.SetInterspersed(false) // everything after the command is the agent's
	f.StringVar(&o.Name, "name", "", "the session's `NAME` (created if new; default a fresh id)")
	f.StringVar(&o.Runtime, "runtime", "", "`RUNTIME`: docker, podman, bwrap, kubernetes or local (default: the session's, else the first available of docker, podman and bwrap)")
	f.StringVar(&o.Image, "image", "", "the container `IMAGE` (docker, podman)")
	f.StringVar(&o.Project, "project", "", "the project `DIR` mounted at /workspace (default the current directory)")
	f.StringVar(&o.Memory, "memory", "", "memory limit `SIZE`, at least 6m, written as for --max-line (512m = 512MiB, 512MB = 512000000, 1.5g)")
	f.StringVar(&o.CPUs, "cpus", "", "CPU limit in `CPUS`, e.g. 1.5")
	f.StringVar(&o.Network, "network", "none", "`NETWORK`: none or host")
	f.StringArrayVar(&o.Env, "env", nil, "set `K=V` in the sandbox (repeatable)")
	f.BoolVar(&o.Resume, "resume", false, "resume the agent's own session recorded by the last run")
	registerKube(f, &o.Kube)
	f.StringVar(&o.Mirror, "mirror", "", "mirror the session's transcripts and logs, while it runs, to the vault `DIR|s3://BUCKET/PREFIX` (vault: the default one); restore rebuilds the session from it")
	d.attach(c) // run_config.go: --volume, --env-file, and their help
	return c
}

func (a *app) runRun(ctx context.Context, o *harness.RunOptions) error {
	o.Stdin, o.Stdout, o.Stderr, o.Note, o.ApplyProject = a.stdin, a.stdout, a.stderr, a.note, a.applyProject
	if a.json {
		// stdout is the document's: the agent's output goes to stderr
		// (and logs/output.log, as always).
		o.Stdout = a.stderr
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		// Interactive: the agent reads the keyboard and handles ^C itself;
		// TERM and HUP still stop it through the harness.
		o.TTY = true
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.WithoutCancel(ctx), syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
	}
	st := a.store()
	sess, created, err := st.Open(ctx, o)
	if err != nil {
		return err
	}
	if created {
		a.note("session %s: runtime %s, project %s", sess.ID, sess.Runtime, printable(sess.Project))
	}
	// A ^C or TERM stops the agent (TERM, then KILL after the grace) and
	// is recorded like any other end; a second one kills it at once.
	if ctx.Err() != nil {
		return ctx.Err() // interrupted before the agent started
	}
	if o.Mirror != "" {
		where, stop, err := a.startMirror(ctx, st, sess, o.Mirror)
		if err != nil {
			return err
		}
		o.Mirror = where
		defer stop() // after the manifest: the last sync takes it too
	}
	a.ownsInterrupts.Store(true)
	if !o.TTY {
		stop := a.interrupts(ctx, sess.ID, o)
		defer stop()
	}
	if err := st.Run(ctx, sess, o); err != nil {
		return err
	}
	sess, err = st.Load(sess.ID)
	if err != nil {
		return err
	}
	if created && sess.State == harness.StateError {
		// The agent never ran: a session made for this run is not kept
		// as junk in ps (the error is said below).
		if rerr := st.Remove(context.WithoutCancel(ctx), sess); rerr == nil {
			err := fmt.Errorf("session %s: %s; nothing was kept", sess.ID, sess.Describe())
			if code := sess.ExitCode; code >= 125 && code <= 127 {
				return &codeError{err, code}
			}
			return err
		}
	}
	// Written also after a ^C: the run's work is what the manifest is for.
	if err := a.writeSessionManifest(context.WithoutCancel(ctx), st, sess); err != nil {
		a.log.Warn().Msgf("session %s: manifest not written: %v", sess.ID, err)
	}
	if a.json {
		if err := a.writeJSON(map[string]any{"schema": "sandbox.run/v1", "session": sess, "status": sess.Describe(),
			"exit_status": sess.ExitStatus()}); err != nil {
			return err
		}
	} else {
		a.note("session %s: %s", sess.ID, sess.Describe())
	}
	if code := sess.ExitStatus(); code != 0 {
		return &silentExit{code}
	}
	return nil
}

// interrupts says what a ^C does while a run stops, and turns a second ^C
// (or TERM) into a kill at once.
func (a *app) interrupts(ctx context.Context, name string, o *harness.RunOptions) func() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	kill := make(chan struct{})
	o.Kill = kill
	done := make(chan struct{})
	grace := o.Grace
	if grace == 0 {
		grace = harness.StopGrace
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		a.note("stopping %s: TERM sent, KILL in %s (^C again to kill now)", name, grace)
		seen := 0
		for {
			select {
			case <-sigs:
				// The signal that cancelled ctx is the first one here.
				if seen++; seen < 2 {
					continue
				}
				a.note("killing %s now", name)
				close(kill)
				return
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// writeSessionManifest writes a session's export manifest from its
// workspace transcripts, reading host copies from its project.
func (a *app) writeSessionManifest(ctx context.Context, st *harness.Store, sess *harness.Session) error {
	if sess.AgentSessionID == "" {
		return nil // no transcript yet
	}
	q := *a
	q.quiet, q.stdout = true, io.Discard
	q.log = a.log.Level(zerolog.ErrorLevel)
	o := exportOptions{Output: st.Manifest(sess.ID), Maps: []string{harness.GuestWorkspace + "=" + sess.Project}}
	o.From = []string{st.Home(sess.ID)}
	return q.runExport(ctx, o)
}

func (a *app) loadSession(name string) (*harness.Store, *harness.Session, error) {
	// A name that is not one is the command line's mistake; never a path
	// to read, nor a directory to suggest removing.
	if err := harness.ValidName(name); err != nil {
		return nil, nil, &UsageError{err}
	}
	st := a.store()
	s, err := st.Load(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &HintError{err, "sandbox ps lists the sessions"}
	}
	if err != nil {
		return nil, nil, &HintError{err, "the session's record is damaged: repair that file, or remove " + st.Dir(name) + " once you have kept what you need from it"}
	}
	return st, s, nil
}

func (a *app) stopCommand() *cobra.Command {
	var grace time.Duration
	c := &cobra.Command{
		Use:   "stop SESSION [--grace 10s]",
		Short: "Stop a running session: TERM, then KILL after the grace period",
		Long: `sandbox stop sends the session's agent SIGTERM, waits up to --grace for it to exit,
then sends SIGKILL. The exit is recorded like any other (sandbox_stopped),
by the running harness or, for a session whose harness died but whose
container still runs, by stop itself.`,
		Example: `  sandbox stop fix-tests
  sandbox stop fix-tests --grace 30s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, s, err := a.loadSession(args[0])
			if err != nil {
				return err
			}
			s, err = st.Stop(cmd.Context(), s, grace)
			if err != nil {
				return err
			}
			if a.json {
				return a.writeJSON(map[string]any{"schema": "sandbox.stop/v1", "session": s, "status": s.Describe()})
			}
			a.note("session %s: %s", s.ID, s.Describe())
			return nil
		},
	}
	c.Flags().DurationVar(&grace, "grace", 10*time.Second, "how long (`DURATION`) to wait after TERM before KILL")
	return c
}

func (a *app) gcCommand() *cobra.Command {
	var o harness.GCOptions
	var archive, endpoint string
	c := &cobra.Command{
		Use:   "gc [--idle 30m] [--ttl 24h] [--dry-run]",
		Short: "Stop idle sessions, remove expired ones (archiving their records), remove leftover containers",
		Long: `sandbox gc stops running sessions that have been idle (no output, no record change)
for --idle, and removes sessions that ended and have been inactive for
--ttl. Before a session is removed its record, manifest and logs are kept in
$SANDBOX_HOME/archive/<id>-<time>.tar.gz (or, with --archive, under an
s3:// prefix), so nothing is lost to cleanup: a session whose archive could
not be written is not removed. It
also removes containers the harness left behind (found by label) whose
session is not running. --dry-run says what it would do.`,
		Example: `  sandbox gc --dry-run
  sandbox gc --idle 1h --ttl 168h
  sandbox gc --ttl 168h --archive s3://team-sandboxes/archive/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Now = a.now()
			if archive != "" {
				if !objstore.IsURL(archive) {
					return usagef("--archive %s: give an s3://BUCKET/PREFIX/ (without it, archives go to $SANDBOX_HOME/archive)", archive)
				}
				to, err := s3Archiver(cmd.Context(), endpoint, archive)
				if err != nil {
					return err
				}
				o.ArchiveTo = to
			}
			acts, err := a.store().GC(cmd.Context(), o)
			if err != nil {
				return err
			}
			if a.json {
				return a.writeJSON(map[string]any{"schema": "sandbox.gc/v1", "dry_run": o.DryRun, "actions": acts})
			}
			verb := ""
			if o.DryRun {
				verb = "would "
			}
			failed := 0
			for _, x := range acts {
				line := fmt.Sprintf("%s%s %s: %s", verb, x.Action, x.Session, x.Reason)
				if x.Archive != "" {
					line += " (kept in " + x.Archive + ")"
				}
				if x.Error != "" {
					line += ": FAILED: " + x.Error
					failed++
				}
				fmt.Fprintln(a.stdout, line)
			}
			if len(acts) == 0 {
				a.note("nothing to collect")
			}
			if failed > 0 {
				return &PartialError{fmt.Sprintf("%d of %d actions failed", failed, len(acts))}
			}
			return nil
		},
	}
	f := c.Flags()
	f.DurationVar(&o.Idle, "idle", 30*time.Minute, "stop running sessions idle this `LONG` (0: never)")
	f.DurationVar(&o.TTL, "ttl", 24*time.Hour, "remove ended sessions inactive this `LONG` (0: never)")
	f.BoolVar(&o.DryRun, "dry-run", false, "say what would be done, do nothing")
	f.StringVar(&archive, "archive", "", "keep the archives of removed sessions under `s3://BUCKET/PREFIX/` instead of $SANDBOX_HOME/archive")
	s3Flag(f, &endpoint)
	return c
}

func (a *app) snapshotCommand() *cobra.Command {
	var out, endpoint string
	c := &cobra.Command{
		Use:   "snapshot SESSION -o FILE.tar.gz|s3://BUCKET/KEY.tar.gz",
		Short: "Write a checksummed archive of a session's workspace and record",
		Long: `sandbox snapshot writes a session (its record, workspace, logs and manifest) as a
gzipped tarball with a SHA256SUMS member; sandbox restore checks it and
brings the session back, agent session id and all, so that
sandbox run --name N --resume continues the conversation. An s3:// output is
streamed to object storage as a multipart upload (each part with its CRC32)
and appears whole or not at all.`,
		Example: `  sandbox snapshot fix-tests -o fix-tests.tar.gz
  sandbox snapshot fix-tests -o s3://team-sandboxes/snapshots/fix-tests.tar.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("where to? give -o FILE.tar.gz")
			}
			st, s, err := a.loadSession(args[0])
			if err != nil {
				return err
			}
			if st.Running(s) {
				a.note("session %s is running; the snapshot may catch files mid-write", s.ID)
			}
			if s.Kube != nil {
				// The HOME is on the cluster's volume: streamed out
				// through a short-lived pod, then archived with the rest.
				if err := st.Pull(cmd.Context(), s); err != nil {
					return fmt.Errorf("session %s: reading its HOME from its volume: %w", s.ID, err)
				}
			}
			var res *harness.SnapshotResult
			fill := func(w io.Writer) error {
				var err error
				res, err = st.Snapshot(s.ID, harness.CtxWriter(cmd.Context(), w), nil)
				return err
			}
			switch {
			case out == "-":
				// -o -: the archive on standard output, for a pipe.
				if a.json {
					return usagef("-o - writes the archive to standard output: it goes without --json")
				}
				w := bufio.NewWriterSize(a.stdout, 1<<16)
				if err = fill(w); err == nil {
					err = w.Flush()
				}
			case objstore.IsURL(out):
				err = s3Upload(cmd.Context(), endpoint, out, fill)
			default:
				err = harness.WriteFileAtomic(out, fill)
			}
			if err != nil {
				return err
			}
			for _, k := range res.Skipped {
				a.log.Warn().Msgf("left out of the snapshot: %s: %s", printable(k.Path), k.Reason)
			}
			if a.json {
				skipped := make([]map[string]string, 0, len(res.Skipped))
				for _, k := range res.Skipped {
					skipped = append(skipped, map[string]string{"path": k.Path, "reason": k.Reason})
				}
				return a.writeJSON(map[string]any{"schema": "sandbox.snapshot/v1", "session": s.ID, "archive": out,
					"members": res.Members, "files": res.Files, "bytes": res.Bytes, "skipped": skipped})
			}
			if lim := harness.DefaultRestoreLimits; res.Bytes > lim.MaxBytes || res.Members+1 > lim.MaxMembers {
				a.note("this snapshot holds %d files and %d bytes, beyond what restore takes by default: restore it with %s=%d %s=%d",
					res.Files, res.Bytes, envRestoreMaxSize, res.Bytes, envRestoreMaxFiles, res.Members+1)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "the archive `FILE` to write, an s3://BUCKET/KEY object, or - for standard output")
	s3Flag(c.Flags(), &endpoint)
	return c
}

func (a *app) restoreCommand() *cobra.Command {
	var name, endpoint, mirrored string
	c := &cobra.Command{
		Use:   "restore FILE.tar.gz|s3://BUCKET/KEY.tar.gz|MIRROR [--session ID] [--name M]",
		Short: "Bring back a session from a snapshot, checking its checksums",
		Long: `sandbox restore unpacks a snapshot written by sandbox snapshot as a session (under
--name, or its own name), after checking every file against the snapshot's
SHA256SUMS: a corrupt or incomplete archive, or one whose members would land
outside the session's directory, is refused and leaves nothing behind. The
restored session keeps its agent session id, so
sandbox run --name M --resume -- … continues the conversation. An s3://
snapshot is streamed from object storage, twice (checked, then unpacked),
pinned to one version: one replaced in between is refused.

A vault that sandbox run --mirror kept the session in (its folder, its s3://
prefix, or vault for the default one) restores it too, even after its
workspace was deleted: the session's last record and manifest and its logs'
and transcripts' longest versions, checked like a snapshot's members
(--session names the session when the mirror holds several).`,
		Example: `  sandbox restore fix-tests.tar.gz
  sandbox restore s3://team-sandboxes/snapshots/fix-tests.tar.gz --name fix-tests
  sandbox restore fix-tests.tar.gz --name fix-tests-2 && sandbox run --name fix-tests-2 --resume -- claude`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lim, err := a.restoreLimits()
			if err != nil {
				return err
			}
			src, size, done, ok, err := a.mirrorSnapshot(cmd.Context(), endpoint, args[0], mirrored)
			if !ok && err == nil {
				src, size, done, err = a.openSnapshot(cmd.Context(), endpoint, args[0])
			}
			if err != nil {
				return err
			}
			defer done()
			// Restore reads the snapshot twice: checked whole, then unpacked.
			bar := a.startProgress("restoring", 2*size)
			defer bar.End()
			// A ^C fails the reads, and the session is never placed.
			in := &progress.Seeker{F: src, P: bar, Ctx: cmd.Context()}
			s, err := a.store().Restore(in, harness.RestoreOptions{Name: name, Limits: lim, Ctx: cmd.Context()})
			var se *harness.SnapshotError
			var oe *objstore.Error
			switch {
			case err != nil && errors.As(in.Err, &oe):
				// The store failed, or the object changed, while it was
				// read: that is the error, not damage in the snapshot.
				hint := "nothing was restored"
				if h := hintOf(s3Hint(oe)); h != "" {
					hint += "; " + h
				}
				return &HintError{oe, hint}
			case errors.As(err, &se) && se.Limit:
				return &HintError{fmt.Errorf("%s: %w", args[0], err), fmt.Sprintf("nothing was restored; if you trust this snapshot, raise the limits: %s=SIZE (now %d), %s=N (now %d)",
					envRestoreMaxSize, lim.MaxBytes, envRestoreMaxFiles, lim.MaxMembers)}
			case se != nil:
				return &HintError{fmt.Errorf("%s: %w", args[0], err), "nothing was restored: a snapshot is taken whole or not at all"}
			case err != nil:
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if a.json {
				return a.writeJSON(map[string]any{"schema": "sandbox.restore/v1", "archive": args[0], "session": s})
			}
			// What the next run will use comes from the snapshot: say it.
			msg := fmt.Sprintf("restored session %s: runtime %s", s.ID, printable(s.Runtime))
			if s.Image != "" {
				msg += ", image " + printable(s.Image)
			}
			msg += ", project " + printable(s.Project)
			if s.AgentSessionID != "" {
				msg += fmt.Sprintf("; %s session %s (continue it with sandbox run --name %s --resume -- …)", printable(s.Agent), printable(s.AgentSessionID), s.ID)
			}
			a.note("%s", msg)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "", "restore under this session `NAME` (default the snapshot's)")
	c.Flags().StringVar(&mirrored, "session", "", "from a mirror, the session `ID` to restore (default: the only one it holds)")
	s3Flag(c.Flags(), &endpoint)
	return c
}

// The environment variables that raise restore's limits.
const (
	envRestoreMaxSize  = "SANDBOX_RESTORE_MAX_SIZE"
	envRestoreMaxFiles = "SANDBOX_RESTORE_MAX_FILES"
)

// restoreLimits are harness.DefaultRestoreLimits, or what the environment
// sets.
func (a *app) restoreLimits() (harness.RestoreLimits, error) {
	lim := harness.DefaultRestoreLimits
	if v := a.env.Get(envRestoreMaxSize); v != "" {
		n, err := bytesize.Parse(v)
		if err != nil || n <= 0 {
			return lim, &HintError{usagef("%s=%q: want a positive size, such as 64G or 100GiB", envRestoreMaxSize, v), sizeHint}
		}
		lim.MaxBytes = n
	}
	if v := a.env.Get(envRestoreMaxFiles); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return lim, usagef("%s=%q: want a positive number", envRestoreMaxFiles, v)
		}
		lim.MaxMembers = n
	}
	return lim, nil
}

// hostDir is where a selected session's working directory is on this
// host: for a harness session that worked in /workspace, its project; else
// the directory itself, when it exists here.
func (a *app) hostDir(s parse.Selected) (string, bool) {
	dir := s.Info.Cwd
	if s.Harness != "" && dir == harness.GuestWorkspace {
		if sess, err := a.store().Load(s.Harness); err == nil && sess.Project != "" {
			dir = sess.Project
		}
	}
	if st, err := os.Stat(dir); dir == "" || err != nil || !st.IsDir() {
		return "", false
	}
	return dir, true
}

// sandboxEnds reads the exit records of the harness sessions the selected
// transcripts belong to: the last run's, which is the one the transcript
// ended with.
func (a *app) sandboxEnds(sel []parse.Selected) []inspect.SandboxEnd {
	st := a.store()
	seen := map[string]bool{}
	var out []inspect.SandboxEnd
	for _, s := range sel {
		if s.Harness == "" || seen[s.Harness] {
			continue
		}
		seen[s.Harness] = true
		if e, ok := st.LastEnd(s.Harness); ok {
			out = append(out, e)
		}
	}
	return out
}
