package cmd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentsandbox/sandbox/harness"
)

// runDefaults are sandbox run's flags that only add to the defaults.
type runDefaults struct {
	volumes  []string
	envFiles []string
}

// applyDefaults works out a run's settings from its flags, the project's
// devcontainer.json and the user's config file (flags first), checks them
// all — a bad one is a usage error naming its file and line — and puts
// them into o, before any session is created. It says where the settings
// came from: the files in one line, each setting with -v.
func (a *app) applyDefaults(c *cobra.Command, o *harness.RunOptions, d *runDefaults) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	given := func(name, v string) string {
		if c.Flags().Changed(name) {
			return v
		}
		return ""
	}
	f := harness.RunFlags{Runtime: o.Runtime, Image: o.Image, Memory: o.Memory, CPUs: o.CPUs,
		Network: given("network", o.Network), Volumes: d.volumes, EnvFiles: d.envFiles, Env: o.Env, Dir: cwd}

	// The session, if it exists: it keeps its runtime and image, and its
	// project is where the devcontainer is.
	var sess *harness.Session
	if o.Name != "" && harness.ValidName(o.Name) == nil {
		if s, err := a.store().Load(o.Name); err == nil {
			sess = s
		}
	}
	project := cwd
	switch {
	case o.Project != "":
		project, _ = filepath.Abs(o.Project)
	case sess != nil:
		project = sess.Project
	}
	if p, err := filepath.EvalSymlinks(project); err == nil {
		project = p
	}

	cfg, err := harness.LoadConfig(harness.ConfigPath(a.env), a.home())
	if err != nil {
		return a.settingErr(err)
	}
	dc, err := harness.LoadDevcontainer(project, a.env)
	if err != nil {
		return a.settingErr(err)
	}
	r, err := harness.Resolve(f, sess, dc, cfg)
	if err != nil {
		return a.settingErr(err)
	}
	if sess == nil && f.Runtime == "" && (cfg == nil || cfg.Runtime.Value == "") {
		// Which runtime a new session gets decides whether an image
		// applies and how mounts can be made: choose it now, as Validate
		// would, and resolve again with it.
		rt, err := harness.Pick(c.Context(), a.env)
		if err != nil {
			return err
		}
		f.Runtime = rt.Name()
		if r, err = harness.Resolve(f, sess, dc, cfg); err != nil {
			return a.settingErr(err)
		}
		r.Runtime.From = harness.Source{} // "the default": the first runtime that works here
	}
	if err := harness.CheckMounts(r.Runtime.Value, r.Mounts); err != nil {
		return a.settingErr(err)
	}
	env, _, err := r.Environment(a.env.Lookup)
	if err != nil {
		return a.settingErr(err)
	}

	for _, n := range r.Notes {
		a.note("%s", n)
	}
	if a.verbose > 0 {
		for _, l := range r.Report() {
			a.note("%s", l)
		}
	} else {
		if files := r.Files(); len(files) > 0 {
			a.note("settings from %s (-v shows each)", strings.Join(files, ", "))
		}
		// A project's own file chooses what of the host the agent sees:
		// say so every time.
		for _, m := range r.Mounts {
			if dc != nil && m.From.File == dc.File {
				a.note("mount %s (from %s)", m, m.From)
			}
		}
	}
	if dc != nil {
		for _, v := range dc.HostVars {
			a.note("%s reads your $%s", v.From, v.Key)
		}
	}
	o.Runtime, o.Image, o.Memory, o.CPUs, o.Network = r.Runtime.Value, r.Image.Value, r.Memory.Value, r.CPUs.Value, r.Network.Value
	if sess != nil && !c.Flags().Changed("runtime") {
		o.Runtime = "" // the session's own; Open checks a flag against it
	}
	if sess != nil && !c.Flags().Changed("image") {
		o.Image = ""
	}
	o.Mounts, o.Env = r.Mounts, env
	return nil
}

// settingErr makes a bad setting a usage error (exit 2); other errors (a
// file that cannot be read) stay what they are.
func (a *app) settingErr(err error) error {
	if errors.Is(err, harness.ErrBadSetting) {
		return &UsageError{err}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &HintError{err, "sandbox reads " + harness.ConfigPath(a.env) + " and the project's .devcontainer/devcontainer.json"}
	}
	return err
}

// attach adds the flags of the defaults to run, and says in its help where
// the defaults come from.
func (d *runDefaults) attach(c *cobra.Command) {
	c.Long += `

Defaults come from the project's .devcontainer/devcontainer.json (its image,
mounts, containerEnv and remoteUser) and from your config file,
$XDG_CONFIG_HOME/sandbox/config.toml or ~/.config/sandbox/config.toml
(runtime, image, memory, cpus, network, mounts, env_files); flags win over
the devcontainer, which wins over the config file. Every setting is checked
before a session is created: a bad one is a usage error naming its file and
line. run says which files it used; -v shows where each setting came from.`
	c.Example += `
  sandbox run --volume ~/datasets:/data:ro --env-file agent.env -- claude`
	d.flags(c.Flags())
}

func (d *runDefaults) flags(f *pflag.FlagSet) {
	f.StringArrayVar(&d.volumes, "volume", nil, "bind `HOST:GUEST[:ro]` into the sandbox (docker's -v syntax; repeatable; not with --runtime local)")
	f.StringArrayVar(&d.envFiles, "env-file", nil, "read variables from `FILE` (docker's --env-file syntax; repeatable)")
}
