package harness

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentsandbox/sandbox/internal/bytesize"
)

// RunFlags are what the command line says for sandbox run; an empty value
// was not given.
type RunFlags struct {
	Runtime, Image, Memory, CPUs, Network string
	Volumes                               []string // --volume HOST:GUEST[:ro]
	EnvFiles                              []string // --env-file FILE
	Env                                   []string // --env K=V
	// Dir is where relative paths on the command line start: the
	// current directory.
	Dir string
	// Home is the user's home directory, where paths that start with ~/
	// start (in the flags and the config file).
	Home string
}

// Resolved are a run's settings, each with where it came from.
type Resolved struct {
	Runtime, Image, Memory, CPUs, Network Setting
	Mounts                                []Mount
	// Env are the layers of the environment, lowest first: a later layer's
	// variable wins over an earlier one of the same name.
	Env []EnvLayer
	// Notes are what was left out, and why.
	Notes []string
}

// EnvLayer is an env file to read, or variables given as they are.
type EnvLayer struct {
	File string // an env file, named by From
	Vars []EnvVar
	From Source
}

var (
	cpusRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

// Resolve works out a run's settings from the command line, the session
// (nil for a new one), the project's devcontainer.json and the user's
// config file (either nil when there is none): flags first, then the
// devcontainer, then the config file. A session keeps its runtime and
// image: for an existing one they come from the flags or its record.
// Mounts and environment variables add up across the three, a later
// source replacing an earlier one's mount of the same guest path or
// variable of the same name. Resolve reads no file (env files are read by
// Environment, mounts checked by CheckMounts): every error it
// returns is a bad setting, wrapping ErrBadSetting, named by its source.
func Resolve(f RunFlags, sess *Session, dc *Devcontainer, cfg *Config) (*Resolved, error) {
	if dc == nil {
		dc = &Devcontainer{}
	}
	if cfg == nil {
		cfg = &Config{}
	}
	flag := func(name, v string) Setting {
		if v == "" {
			return Setting{}
		}
		return Setting{Value: v, From: Source{Flag: "--" + name}}
	}
	first := func(ss ...Setting) Setting {
		for _, s := range ss {
			if s.Value != "" {
				return s
			}
		}
		return Setting{}
	}
	r := &Resolved{Notes: append([]string(nil), dc.Notes...)}
	var sessRuntime, sessImage Setting
	if sess != nil {
		// A session keeps its runtime and its image: defaults are for
		// new sessions.
		sessRuntime = Setting{Value: sess.Runtime, From: Source{File: "session " + sess.ID}}
		sessImage = Setting{Value: sess.Image, From: Source{File: "session " + sess.ID}}
		r.Runtime = first(flag("runtime", f.Runtime), sessRuntime)
		r.Image = first(flag("image", f.Image), sessImage)
	} else {
		r.Runtime = first(flag("runtime", f.Runtime), cfg.Runtime)
		r.Image = first(flag("image", f.Image), dc.Image, cfg.Image)
	}
	if rt := r.Runtime.Value; (rt == "bwrap" || rt == "local") && r.Image.Value != "" && r.Image.From.Flag == "" {
		// An image is for docker and podman: a default one does not
		// apply to a runtime that runs the host's own programs (a flag's
		// --image is refused by Validate, as the user's own mistake).
		if dc.File != "" && r.Image.From.File == dc.File {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: image %s is not used: runtime %s runs this machine's own programs", r.Image.From, r.Image.Value, rt))
		}
		r.Image = Setting{}
	}
	r.Memory = first(flag("memory", f.Memory), cfg.Memory)
	r.CPUs = first(flag("cpus", f.CPUs), cfg.CPUs)
	r.Network = first(flag("network", f.Network), cfg.Network)
	if r.Network.Value == "" {
		r.Network = Setting{Value: "none"}
	}

	if v := r.Runtime; v.Value != "" && !slices.Contains(runtimes, v.Value) && registered[v.Value] == nil {
		return nil, badSetting(v.From, "unknown runtime %q (use %s)", v.Value, runtimeNames())
	}
	if v := r.Network; v.Value != "none" && v.Value != "host" {
		return nil, badSetting(v.From, "%s %q: use none or host", settingName(v.From, "network"), v.Value)
	}
	// The same bounds as Validate's, said here with the file and line.
	if v := r.Memory; v.Value != "" {
		if n, err := bytesize.Parse(v.Value); err != nil || n < 6<<20 {
			return nil, badSetting(v.From, "%s %q: want a size of at least 6m, such as 512m or 2g", settingName(v.From, "memory"), v.Value)
		}
	}
	if v := r.CPUs; v.Value != "" {
		n, err := strconv.ParseFloat(v.Value, 64)
		if !cpusRe.MatchString(v.Value) || err != nil || n <= 0 || n > 1024 {
			return nil, badSetting(v.From, "%s %q: want a positive number such as 1.5", settingName(v.From, "cpus"), v.Value)
		}
	}
	if v := r.Image; v.Value != "" && (strings.HasPrefix(v.Value, "-") || strings.ContainsAny(v.Value, " \t\n\x00")) {
		return nil, badSetting(v.From, "%s %q: not an image name", settingName(v.From, "image"), v.Value)
	}

	// Mounts: config, then the devcontainer, then the flags; a later
	// source's mount of a guest path replaces an earlier one's.
	var cfgMounts, flagMounts []Mount
	for _, s := range cfg.Mounts {
		m, err := parseMount(s.Value, filepath.Dir(cfg.File), f.Home, s.From)
		if err != nil {
			return nil, err
		}
		cfgMounts = append(cfgMounts, m)
	}
	for _, v := range f.Volumes {
		m, err := parseMount(v, f.Dir, f.Home, Source{Flag: "--volume"})
		if err != nil {
			return nil, err
		}
		flagMounts = append(flagMounts, m)
	}
	for _, layer := range [][]Mount{cfgMounts, dc.Mounts, flagMounts} {
		seen := map[string]Mount{}
		for _, m := range layer {
			g := filepath.Clean(m.Guest)
			if prev, ok := seen[g]; ok {
				return nil, badSetting(m.From, "mount %s: %s is mounted twice (also by %s at %s)", m, g, prev, prev.From)
			}
			seen[g] = m
			r.Mounts = slices.DeleteFunc(r.Mounts, func(o Mount) bool { return filepath.Clean(o.Guest) == g })
		}
		r.Mounts = append(r.Mounts, layer...)
	}
	if r.Runtime.Value == "local" && len(r.Mounts) > 0 {
		m := r.Mounts[0]
		return nil, badSetting(m.From, "mount %s: runtime local runs the agent on the host itself, with no sandbox to mount into; use the host path as it is, or a sandboxing runtime", m)
	}
	if r.Runtime.Value == "kubernetes" && len(r.Mounts) > 0 {
		m := r.Mounts[0]
		return nil, badSetting(m.From, "mount %s: runtime kubernetes runs the agent on a cluster's node, where this machine's paths are not; put what it needs in the project, which is copied in", m)
	}

	// The environment: config env files, the devcontainer's containerEnv
	// and remoteUser, --env-file, --env.
	for _, s := range cfg.EnvFiles {
		r.Env = append(r.Env, EnvLayer{File: s.Value, From: s.From})
	}
	if len(dc.Env) > 0 {
		r.Env = append(r.Env, EnvLayer{Vars: dc.Env, From: Source{File: dc.File}})
	}
	if u := dc.RemoteUser; u.Value != "" {
		// The agent runs as the caller's uid:gid whatever the
		// devcontainer says, so the files it writes on the host are the
		// caller's; remoteUser is the name it goes by.
		r.Env = append(r.Env, EnvLayer{Vars: []EnvVar{{Key: "USER", Value: u.Value, From: u.From}}, From: u.From})
	}
	for _, p := range f.EnvFiles {
		path, err := hostPath(p, f.Dir, f.Home)
		if err != nil {
			return nil, badSetting(Source{Flag: "--env-file"}, "%v", err)
		}
		r.Env = append(r.Env, EnvLayer{File: path, From: Source{Flag: "--env-file"}})
	}
	var flagEnv []EnvVar
	for _, e := range f.Env {
		k, v, ok := strings.Cut(e, "=")
		from := Source{Flag: "--env"}
		if !ok || k == "" {
			return nil, badSetting(from, "--env %q: want K=V", e)
		}
		flagEnv = append(flagEnv, EnvVar{Key: k, Value: v, From: from})
	}
	if len(flagEnv) > 0 {
		r.Env = append(r.Env, EnvLayer{Vars: flagEnv, From: Source{Flag: "--env"}})
	}
	return r, nil
}

// Environment reads the env files and merges the layers into K=V
// variables, each in the place of its first setting with the value of its
// last; it also says where each final value came from.
func (r *Resolved) Environment(lookup func(string) (string, bool)) ([]string, []EnvVar, error) {
	var vars []EnvVar
	index := map[string]int{}
	for _, l := range r.Env {
		layer := l.Vars
		if l.File != "" {
			var err error
			if layer, err = readEnvFile(l.File, l.From, lookup); err != nil {
				return nil, nil, err
			}
		}
		for _, v := range layer {
			if i, ok := index[v.Key]; ok {
				vars[i] = v
				continue
			}
			index[v.Key] = len(vars)
			vars = append(vars, v)
		}
	}
	env := make([]string, len(vars))
	for i, v := range vars {
		env[i] = v.Key + "=" + v.Value
	}
	return env, vars, nil
}

// Report describes each setting that was given and where it came from, a
// line each, for sandbox run -v.
func (r *Resolved) Report() []string {
	var lines []string
	for _, s := range []struct {
		name string
		s    Setting
	}{{"runtime", r.Runtime}, {"image", r.Image}, {"memory", r.Memory}, {"cpus", r.CPUs}, {"network", r.Network}} {
		if s.s.Value == "" {
			continue
		}
		from := s.s.From.String()
		if s.s.From == (Source{}) {
			from = "the default"
		}
		lines = append(lines, fmt.Sprintf("%s %s (from %s)", s.name, s.s.Value, from))
	}
	for _, m := range r.Mounts {
		lines = append(lines, fmt.Sprintf("mount %s (from %s)", m, m.From))
	}
	for _, l := range r.Env {
		if l.File != "" {
			lines = append(lines, fmt.Sprintf("env file %s (from %s)", l.File, l.From))
			continue
		}
		for _, v := range l.Vars {
			lines = append(lines, fmt.Sprintf("env %s (from %s)", v.Key, v.From))
		}
	}
	return lines
}

// Files are the files any of the settings came from.
func (r *Resolved) Files() []string {
	var files []string
	add := func(s Source) {
		if s.File != "" && !strings.HasPrefix(s.File, "session ") && !slices.Contains(files, s.File) {
			files = append(files, s.File)
		}
	}
	for _, s := range []Setting{r.Runtime, r.Image, r.Memory, r.CPUs, r.Network} {
		add(s.From)
	}
	for _, m := range r.Mounts {
		add(m.From)
	}
	for _, l := range r.Env {
		add(l.From)
	}
	return files
}
