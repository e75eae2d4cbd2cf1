package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/bytesize"
	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/vault"
)

// vaultOptions are the flags the vault commands share.
type vaultOptions struct {
	Where      string
	S3Endpoint string
	Agents     []string
	Host       string
	Watch      bool
	Rescan     time.Duration
}

// flags adds the flags that name the vault: name (--from or --to), said
// as what, and --s3-endpoint.
func (o *vaultOptions) flags(f *pflag.FlagSet, name, what string) {
	f.StringVar(&o.Where, name, "", what+": a `DIR` or s3://BUCKET/PREFIX (default $SANDBOX_VAULT, else $XDG_DATA_HOME/sandbox/vault)")
	f.StringVar(&o.S3Endpoint, "s3-endpoint", "", "the S3-compatible endpoint `URL` of an s3:// vault")
}

func (o *vaultOptions) options() vault.Options {
	return vault.Options{S3: objstore.Options{Endpoint: o.S3Endpoint}}
}

func (a *app) vaultCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "vault",
		Short: "Keep every version of every transcript, append-only, locally or in S3",
		Long: `sandbox vault keeps the agents' transcripts where their own cleanup, a dead
sandbox or a deleted workspace cannot reach them. sync copies every transcript
of every agent (and of the harness's sessions) into a vault: a folder (default
$XDG_DATA_HOME/sandbox/vault) or an S3 prefix. It is append-only: a file that
grew is stored again as its new bytes, and a file that shrank, was rewritten or
was deleted keeps every earlier version. Databases (opencode, Crush, Goose) are
copied as of one read transaction, never torn.

Every command that reads transcripts reads a vault with --from vault (or its
folder or s3:// prefix): each transcript's longest version, or an earlier one
with --version N|TIME.`,
		Example: `  sandbox vault sync
  sandbox vault sync --watch --to s3://backups/agents
  sandbox vault ls
  sandbox recover --from vault --session 5c0375b4 --dest ./proj`,
	}
	c.AddCommand(a.vaultSyncCommand(), a.vaultLsCommand(), a.vaultVerifyCommand(), a.vaultPruneCommand(), a.vaultInstallCommand(true), a.vaultInstallCommand(false))
	return c
}

func (a *app) vaultSyncCommand() *cobra.Command {
	var o vaultOptions
	c := &cobra.Command{
		Use:   "sync [--to DIR|s3://BUCKET/PREFIX] [--watch] [--agent A]...",
		Short: "Copy what changed in the agents' transcripts into the vault",
		Long: `sandbox vault sync copies into the vault every transcript that changed since the
last sync. A file whose size, time and inode did not move is not read (a
cache under $XDG_CACHE_HOME remembers them); one that changed is stored only
if its content differs from its last version, and then only its new bytes
when it grew. One sync runs at a time per vault (a lock); a sync killed at any
point leaves the vault readable, with nothing half-written.

--watch keeps running: it syncs within a second of a change in the agents'
folders (file system events), and rescans everything at start and every
--rescan (default 5m) to catch what events missed. It prints the first sync's
line, then one for each sync that stored a version or saw a file deleted.`,
		Example: `  sandbox vault sync
  sandbox vault sync --to /mnt/backup/vault --agent claude --agent codex
  sandbox vault sync --watch --to s3://backups/agents --s3-endpoint http://127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runVaultSync(cmd.Context(), o)
		},
	}
	f := c.Flags()
	o.flags(f, "to", "the vault")
	f.StringArrayVar(&o.Agents, "agent", nil, "sync only this `AGENT`'s transcripts (repeatable; the harness's sessions come with any)")
	f.StringVar(&o.Host, "host", "", "the `NAME` this machine's transcripts go by in the vault (default its host name)")
	f.BoolVar(&o.Watch, "watch", false, "keep running, syncing within a second of each change")
	f.DurationVar(&o.Rescan, "rescan", 5*time.Minute, "with --watch, rescan everything this often (`DURATION`)")
	return c
}

func (a *app) openVault(ctx context.Context, o vaultOptions, create bool) (*vault.Vault, error) {
	where, err := vault.Resolve(a.env, o.Where)
	if err != nil {
		return nil, err
	}
	if create {
		return vault.Create(ctx, where, o.options())
	}
	return vault.Open(ctx, where, o.options())
}

// vaultSyncReport is the --json document of vault sync.
type vaultSyncReport struct {
	Schema string `json:"schema"`
	Vault  string `json:"vault"`
	vault.SyncStats
}

func (a *app) runVaultSync(ctx context.Context, o vaultOptions) error {
	for _, ag := range o.Agents {
		if !knownAgent(ag) {
			return usagef("--agent %q: use %s", ag, agent.OrList(agentNames()))
		}
	}
	if o.Rescan < time.Second {
		// A rescan reads every folder and stats every file: more often
		// than each second it is a busy loop, and events do the rest.
		return usagef("--rescan %s: want a second or more, such as 5m", o.Rescan)
	}
	v, err := a.openVault(ctx, o, true)
	if err != nil {
		return s3Hint(err)
	}
	so := vault.SyncOptions{Env: a.env, Agents: o.Agents, Host: o.Host}
	if o.Watch {
		said, first := map[string]bool{}, true
		return vault.Watch(ctx, v, so, vault.WatchOptions{Rescan: o.Rescan, After: func(st vault.SyncStats, err error) {
			if err != nil {
				a.log.Error().Err(err).Msg("sync")
				return
			}
			for _, p := range st.Problems {
				a.log.Warn().Msg(printable(p))
			}
			// What is left out is said once, not at every rescan.
			for _, p := range st.Skipped {
				if !said[p] {
					said[p] = true
					a.log.Warn().Msg(printable(p))
				}
			}
			// The first sync says what is watched; later ones, what they
			// stored (a terminal or the service's journal shows each).
			if first || st.Versions > 0 || st.Gone > 0 {
				fmt.Fprintf(a.stdout, "%s %s\n", time.Now().Format(time.TimeOnly), syncLine(v, st))
			}
			first = false
		}})
	}
	st, err := v.Sync(ctx, so)
	if err != nil {
		return err
	}
	for _, p := range st.Problems {
		a.log.Warn().Msg(printable(p))
	}
	for _, p := range st.Skipped {
		a.log.Warn().Msg(printable(p))
	}
	if a.json {
		return a.writeJSON(vaultSyncReport{Schema: "sandbox.vault.sync/v1", Vault: v.Where(), SyncStats: st})
	}
	fmt.Fprintln(a.stdout, syncLine(v, st))
	if len(st.Problems) > 0 {
		return fmt.Errorf("%s could not be synced (the rest were)", plural.Count(len(st.Problems), "file"))
	}
	return nil
}

// syncLine is what a sync did, in one line.
func syncLine(v *vault.Vault, st vault.SyncStats) string {
	line := fmt.Sprintf("%s: %s, %d unchanged, %d read (%s); %s, %s stored; %d gone at the source",
		v.Where(), plural.Count(st.Files, "file"), st.Unchanged, st.Read, bytesize.Human(st.ReadBytes), plural.Count(st.Versions, "new version"), bytesize.Human(st.Stored), st.Gone)
	if len(st.Skipped) > 0 {
		line += fmt.Sprintf("; %d not copied (named above)", len(st.Skipped))
	}
	return line
}

func (a *app) vaultLsCommand() *cobra.Command {
	var o vaultOptions
	var wide bool
	c := &cobra.Command{
		Use:   "ls [--from DIR|s3://BUCKET/PREFIX]",
		Short: "List what the vault holds",
		Long: `sandbox vault ls lists every file the vault keeps: its agent, session (from its name),
host and path, how
many versions, the bytes of its longest, when the vault first and last stored
a version, and "gone at the source" when the original was deleted after its
last version. The table is aligned on a terminal and tab-separated when piped;
--json prints one document.`,
		Example: `  sandbox vault ls
  sandbox vault ls --from s3://backups/agents --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runVaultLs(cmd.Context(), o, wide)
		},
	}
	f := c.Flags()
	o.flags(f, "from", "the vault")
	f.BoolVar(&wide, "wide", false, "on a terminal, show every cell whole")
	return c
}

// vaultEntry is a file of vault ls --json.
type vaultEntry struct {
	Host      string    `json:"host"`
	Agent     string    `json:"agent"`
	Path      string    `json:"path"`
	Session   string    `json:"session,omitempty"`
	Versions  int       `json:"versions"`
	Bytes     int64     `json:"bytes"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Gone      bool      `json:"gone_at_source,omitempty"`
}

func (a *app) runVaultLs(ctx context.Context, o vaultOptions, wide bool) error {
	v, err := a.openVault(ctx, o, false)
	if err != nil {
		return s3Hint(err)
	}
	srcs, err := v.Sources(ctx)
	if err != nil {
		return s3Hint(err)
	}
	planted, err := v.Planted(ctx)
	if err != nil {
		return err
	}
	for _, p := range planted {
		a.log.Warn().Msgf("%s/%s (not listed; sandbox vault verify)", v.Where(), printable(p))
	}
	var entries []vaultEntry
	for _, s := range srcs {
		entries = append(entries, vaultEntry{Host: s.Host(), Agent: s.Agent(), Path: s.Path(), Session: discover.IDFromName(s.Path()), Versions: len(s.Versions),
			Bytes: s.Longest().Size, FirstSeen: s.Versions[0].Seen.UTC(), LastSeen: s.Versions[len(s.Versions)-1].Seen.UTC(), Gone: s.GoneNow()})
	}
	if a.json {
		return a.writeJSON(struct {
			Schema string       `json:"schema"`
			Vault  string       `json:"vault"`
			Files  []vaultEntry `json:"files"`
		}{"sandbox.vault.ls/v1", v.Where(), append([]vaultEntry{}, entries...)})
	}
	rows := [][]string{{"AGENT", "SESSION", "HOST", "VERSIONS", "BYTES", "FIRST SEEN", "LAST SEEN", "STATE", "PATH"}}
	for _, e := range entries {
		state := "kept"
		if e.Gone {
			state = "gone at the source"
		}
		session := e.Session
		if session == "" {
			session = "-"
		}
		rows = append(rows, []string{e.Agent, session, e.Host, strconv.Itoa(e.Versions), bytesize.Human(e.Bytes),
			e.FirstSeen.Local().Format("2006-01-02 15:04"), e.LastSeen.Local().Format("2006-01-02 15:04"), state, e.Path})
	}
	if len(entries) == 0 {
		fmt.Fprintf(a.stderr, "sandbox: the vault %s holds nothing yet\n", v.Where())
		return nil
	}
	return a.writeTable(rows, 8, wide)
}

func (a *app) vaultVerifyCommand() *cobra.Command {
	var o vaultOptions
	c := &cobra.Command{
		Use:   "verify [--from DIR|s3://BUCKET/PREFIX]",
		Short: "Read every version the vault holds, and name any that cannot be read",
		Long: `sandbox vault verify reads every version of every file the vault keeps, whole:
each version's record and those it extends, and each chunk (once, however many
versions share it), decompressed and checked against its SHA-256. It names
each version that cannot be read and why (a missing or damaged chunk or
record). Readers pass over such a version for the next longest that reads, and
say so; verify finds the damage before a recovery needs it. It changes
nothing.`,
		Example: `  sandbox vault verify
  sandbox vault verify --from s3://backups/agents --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runVaultVerify(cmd.Context(), o)
		},
	}
	f := c.Flags()
	o.flags(f, "from", "the vault")
	return c
}

func (a *app) runVaultVerify(ctx context.Context, o vaultOptions) error {
	v, err := a.openVault(ctx, o, false)
	if err != nil {
		return s3Hint(err)
	}
	st, err := v.Verify(ctx, nil)
	if err != nil {
		return s3Hint(err)
	}
	if a.json {
		if st.Damaged == nil {
			st.Damaged = []vault.Damage{}
		}
		if err := a.writeJSON(struct {
			Schema string `json:"schema"`
			Vault  string `json:"vault"`
			vault.VerifyStats
		}{"sandbox.vault.verify/v1", v.Where(), st}); err != nil {
			return err
		}
	} else {
		for _, d := range st.Damaged {
			if d.Source == "" {
				fmt.Fprintf(a.stdout, "damaged: %s: %s\n", printable(d.Key), printable(d.Why))
				continue
			}
			fmt.Fprintf(a.stdout, "damaged: %s@v%d: %s\n", printable(d.Source), d.N, printable(d.Why))
		}
		fmt.Fprintf(a.stdout, "%s: %s of %s checked, %s (%s) read; %s\n", v.Where(), plural.Count(st.Versions, "version"), plural.Count(st.Sources, "file"),
			plural.Count(st.Chunks, "chunk"), bytesize.Human(st.Bytes), plural.Count(len(st.Damaged), "damaged version"))
	}
	if len(st.Damaged) > 0 {
		return &PartialError{fmt.Sprintf("%d damaged, each named above", len(st.Damaged))}
	}
	return nil
}

func (a *app) vaultInstallCommand(install bool) *cobra.Command {
	var o vaultOptions
	c := &cobra.Command{
		Use:   "install [--to DIR|s3://BUCKET/PREFIX] [--agent A]...",
		Short: "Run vault sync --watch as a service of this user (systemd or launchd)",
		Long: `sandbox vault install writes a systemd user unit (Linux:
$XDG_CONFIG_HOME/systemd/user/sandbox-vault.service) or a launchd agent (macOS:
~/Library/LaunchAgents/dev.agentsandbox.vault.plist) that runs this binary's
vault sync --watch with the flags given, and enables and starts it. It never
needs root, and prints where it wrote. When the service manager cannot be
reached (no user session bus, a container), the file is still written and the
commands to enable it are printed. Running it again replaces the service.`,
		Example: `  sandbox vault install
  sandbox vault install --to s3://backups/agents --s3-endpoint http://minio.internal:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runVaultService(o, install)
		},
	}
	if !install {
		c.Use = "uninstall"
		c.Short = "Stop and remove the service vault install made"
		c.Long = `sandbox vault uninstall stops and disables the service vault install made and
removes its unit or agent file. The vault itself is left as it is. Uninstalling
when nothing is installed is not an error.`
		c.Example = `  sandbox vault uninstall`
		return c
	}
	f := c.Flags()
	o.flags(f, "to", "the vault the service syncs into")
	f.StringArrayVar(&o.Agents, "agent", nil, "sync only this `AGENT`'s transcripts (repeatable)")
	f.StringVar(&o.Host, "host", "", "the `NAME` this machine's transcripts go by in the vault")
	return c
}

func (a *app) runVaultService(o vaultOptions, install bool) error {
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		return err
	}
	so := vault.ServiceOptions{Env: a.env, Binary: bin, GOOS: runtime.GOOS}
	if !install {
		res, err := vault.Uninstall(so)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", res.Note)
		return nil
	}
	// The service's vault is fixed now: a relative folder or the default
	// would be read in the service's own environment.
	where, err := vault.Resolve(a.env, o.Where)
	if err != nil {
		return err
	}
	so.Args = []string{"vault", "sync", "--watch", "--to", where}
	if o.S3Endpoint != "" {
		so.Args = append(so.Args, "--s3-endpoint", o.S3Endpoint)
	}
	for _, ag := range o.Agents {
		if !knownAgent(ag) {
			return usagef("--agent %q: use %s", ag, agent.OrList(agentNames()))
		}
		so.Args = append(so.Args, "--agent", ag)
	}
	if o.Host != "" {
		so.Args = append(so.Args, "--host", o.Host)
	}
	so.Environment = serviceEnv(a.env)
	res, err := vault.Install(so)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "wrote %s\n%s\n", res.Path, res.Note)
	if len(so.Environment) > 0 {
		var names []string
		for _, kv := range so.Environment {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		fmt.Fprintf(a.stdout, "the service runs with this shell's %s, as set now (install again after changing them)\n", strings.Join(names, ", "))
	}
	return nil
}

// serviceEnv is what of this environment the sync service needs to find
// what this shell's sync finds: where each agent keeps its sessions
// (CLAUDE_CONFIG_DIR, CODEX_HOME…), the XDG base folders, the harness's
// home, and how S3 is reached (the profile, region and endpoint; never a
// secret key, which stays in the AWS configuration the profile names).
func serviceEnv(env osenv.Env) []string {
	names := []string{"SANDBOX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"}
	for _, ag := range agent.All() {
		names = append(names, ag.About().StateEnv...)
	}
	names = append(names, "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if v := env.Get(n); v != "" && !seen[n] {
			seen[n] = true
			out = append(out, n+"="+v)
		}
	}
	return out
}

func (a *app) vaultPruneCommand() *cobra.Command {
	var o vaultOptions
	var keep string
	var dryRun bool
	c := &cobra.Command{
		Use:   "prune --keep AGE [--from DIR|s3://BUCKET/PREFIX] [--dry-run]",
		Short: "Remove the versions the newest of each file supersedes, older than --keep",
		Long: `sandbox vault prune removes old versions, and only when asked: a vault keeps
everything otherwise. A version goes when the vault has held it longer than
--keep, it is neither the newest nor the longest of its file, the newest holds
all of it (its content is the newest's first bytes: a transcript that was cut
short and then grew again), and no kept version is stored as an extension of
it. Then the chunks no kept version uses go (those of the removed versions, and
any a killed sync left). A database's earlier copies are never the first bytes
of a later one, so they all stay. --dry-run says what would go.`,
		Example: `  sandbox vault prune --keep 90d --dry-run
  sandbox vault prune --keep 90d --from s3://backups/agents`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keep == "" {
				return usagef("prune needs --keep AGE (such as 90d): a vault keeps everything unless told")
			}
			now := a.now()
			since, err := parse.ParseTime(keep, now)
			if err != nil || since.After(now) {
				return usagef("--keep %q: an age such as 90d, 12w or 2160h", keep)
			}
			v, err := a.openVault(cmd.Context(), o, false)
			if err != nil {
				return s3Hint(err)
			}
			st, err := v.Prune(cmd.Context(), vault.PruneOptions{Keep: now.Sub(since), Now: now, DryRun: dryRun})
			if err != nil {
				return s3Hint(err)
			}
			if a.json {
				return a.writeJSON(struct {
					Schema string `json:"schema"`
					DryRun bool   `json:"dry_run"`
					vault.PruneStats
				}{"sandbox.vault.prune/v1", dryRun, st})
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			fmt.Fprintf(a.stdout, "%s: %s %d versions and %d chunks (%s)\n", v.Where(), verb, st.Versions, st.Chunks, bytesize.Human(st.Bytes))
			return nil
		},
	}
	f := c.Flags()
	o.flags(f, "from", "the vault")
	f.StringVar(&keep, "keep", "", "keep every version younger than `AGE` (90d, 12w, 2160h): required")
	f.BoolVar(&dryRun, "dry-run", false, "say what would go, remove nothing")
	return c
}

// startMirror mirrors a harness session to the vault at where while it
// runs (run --mirror): its workspace's transcripts and its own record and
// logs, within a second of each change and every two seconds whatever the
// events say. stop ends it with a last sync, after the run's last writes.
func (a *app) startMirror(ctx context.Context, st *harness.Store, sess *harness.Session, where string) (string, func(), error) {
	where, err := vault.Resolve(a.env, where)
	if err != nil {
		return "", nil, err
	}
	v, err := vault.Create(ctx, where, vault.Options{})
	if err != nil {
		return "", nil, s3Hint(fmt.Errorf("--mirror: %w", err))
	}
	dir := st.Dir(sess.ID)
	if err := st.MakeHome(sess.ID); err != nil {
		return "", nil, err
	}
	host := vault.HostName()
	so := vault.SyncOptions{Env: a.env, Host: host, Tree: &vault.Tree{Root: st.Root, Workspace: st.Home(sess.ID),
		Files: []string{filepath.Join(dir, "session.json"), st.RuntimeLog(sess.ID), st.OutputLog(sess.ID), st.Manifest(sess.ID)}}}
	if p := vault.CachePath(a.env, v, host); p != "" {
		so.Cache = strings.TrimSuffix(p, ".json") + "-session-" + sess.ID + ".json"
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	report := func(st vault.SyncStats, err error) {
		if err != nil {
			a.log.Warn().Err(err).Msg("mirror")
		}
		for _, p := range st.Problems {
			a.log.Warn().Msg("mirror: " + printable(p))
		}
	}
	go func() {
		defer close(done)
		_ = vault.Watch(mctx, v, so, vault.WatchOptions{Rescan: 2 * time.Second, After: report})
	}()
	return where, func() {
		cancel()
		<-done
		last, lcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer lcancel()
		report(v.Sync(last, so))
	}, nil
}

// mirrorSnapshot builds, from a vault that mirrors harness sessions, the
// snapshot of session id (its latest record and manifest, its logs' and
// transcripts' longest versions) in an unlinked temporary file, for
// restore; ok is false when where is no vault.
func (a *app) mirrorSnapshot(ctx context.Context, endpoint, where, id string) (io.ReadSeeker, int64, func(), bool, error) {
	if !vault.IsVault(where) {
		return nil, 0, nil, false, nil
	}
	path, err := vault.Resolve(a.env, where)
	if err != nil {
		return nil, 0, nil, true, err
	}
	v, err := vault.Open(ctx, path, vault.Options{S3: objstore.Options{Endpoint: endpoint}})
	if errors.Is(err, vault.ErrNotVault) {
		return nil, 0, nil, false, nil
	}
	if err != nil {
		return nil, 0, nil, true, s3Hint(err)
	}
	srcs, err := v.Sources(ctx)
	if err != nil {
		return nil, 0, nil, true, s3Hint(err)
	}
	bySession := map[string][]vault.Source{}
	for _, s := range srcs {
		rest, ok := strings.CutPrefix(s.Path(), "sessions/")
		if s.Agent() != "sandbox" || !ok {
			continue
		}
		sid, _, _ := strings.Cut(rest, "/")
		bySession[sid] = append(bySession[sid], s)
	}
	var ids []string
	for k := range bySession {
		ids = append(ids, k)
	}
	sort.Strings(ids)
	switch {
	case len(ids) == 0:
		return nil, 0, nil, true, fmt.Errorf("%s mirrors no harness session", where)
	case id == "" && len(ids) == 1:
		id = ids[0]
	case id == "":
		return nil, 0, nil, true, usagef("%s mirrors %d sessions (%s): name one with --session", where, len(ids), strings.Join(ids, ", "))
	case bySession[id] == nil:
		return nil, 0, nil, true, fmt.Errorf("%s mirrors no session %s (it has %s)", where, id, strings.Join(ids, ", "))
	}
	var files []harness.SnapFile
	for _, s := range bySession[id] {
		rel := strings.TrimPrefix(s.Path(), "sessions/"+id+"/")
		// A record is rewritten, not appended: its newest version is the
		// session's state; logs and transcripts only grow.
		ver := s.Longest()
		if strings.HasSuffix(rel, ".json") && !strings.Contains(rel, "/") {
			ver = s.Versions[len(s.Versions)-1]
		}
		key := ver.Key
		files = append(files, harness.SnapFile{Rel: rel, Size: ver.Size, ModTime: ver.Seen, Open: func() (io.ReadCloser, error) {
			f, err := v.OpenVersion(ctx, key)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(io.NewSectionReader(f, 0, f.Size())), nil
		}})
	}
	tmp, err := os.CreateTemp("", "sandbox-mirror-*.tar.gz")
	if err != nil {
		return nil, 0, nil, true, err
	}
	_ = os.Remove(tmp.Name())
	res, err := harness.SnapshotFiles(tmp, files)
	if err != nil {
		tmp.Close()
		return nil, 0, nil, true, fmt.Errorf("%s: session %s: %w", where, id, err)
	}
	for _, sk := range res.Skipped {
		a.log.Warn().Msgf("%s: %s: left out: %s", where, printable(sk.Path), sk.Reason)
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		tmp.Close()
		return nil, 0, nil, true, err
	}
	return tmp, size, func() { tmp.Close() }, true, nil
}
