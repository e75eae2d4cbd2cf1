package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/pelletier/go-toml/v2"
)

// ErrBadSetting marks a mistake in a setting — on the command line, in the
// config file or in a project's devcontainer.json — found before anything
// is created: a usage error.
var ErrBadSetting = errors.New("bad setting")

// settingError is a bad setting, with where it was given.
type settingError struct {
	from Source
	msg  string
}

func (e *settingError) Error() string {
	switch {
	case e.from.File != "":
		return e.from.String() + ": " + e.msg
	case e.from.Flag != "" && !strings.HasPrefix(e.msg, e.from.Flag):
		return e.from.Flag + ": " + e.msg
	}
	return e.msg
}

// settingName is how an error names a setting: by its flag when it came
// from the command line, else by its key (the file and line go first).
func settingName(from Source, key string) string {
	if from.File == "" && from.Flag != "" {
		return from.Flag
	}
	return key
}

func (e *settingError) Is(target error) bool { return target == ErrBadSetting }

func badSetting(from Source, format string, args ...any) error {
	return &settingError{from: from, msg: fmt.Sprintf(format, args...)}
}

// Source is where a setting came from: a file and line, or the command
// line (File empty).
type Source struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Flag string `json:"flag,omitempty"` // --image, …, when from the command line
}

func (s Source) String() string {
	switch {
	case s.File == "" && s.Flag != "":
		return s.Flag
	case s.File == "":
		return "the command line"
	case s.Line > 0:
		return s.File + ":" + strconv.Itoa(s.Line)
	}
	return s.File
}

// maxSettingsFile bounds what sandbox reads of a config file, a
// devcontainer.json or an env file: a project's files are not to be
// trusted to be small.
const maxSettingsFile = 1 << 20

// ConfigPath is the user's config file: $XDG_CONFIG_HOME/sandbox/config.toml,
// else ~/.config/sandbox/config.toml.
func ConfigPath(env osenv.Env) string {
	if d := env.Get("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "sandbox", "config.toml")
	}
	home, _ := env.Home()
	return filepath.Join(home, ".config", "sandbox", "config.toml")
}

// Config is the user's defaults for sandbox run (config.toml).
type Config struct {
	File     string
	Runtime  Setting
	Image    Setting
	Memory   Setting
	CPUs     Setting
	Network  Setting
	Mounts   []Setting // HOST:GUEST[:ro], host paths resolved against the file's directory
	EnvFiles []Setting
}

// Setting is one value and where it was given.
type Setting struct {
	Value string
	From  Source
}

// configFile is config.toml's schema. Memory and cpus may be written as a
// number or a string (cpus = 1.5, memory = "2g").
type configFile struct {
	Runtime  string   `toml:"runtime"`
	Image    string   `toml:"image"`
	Memory   any      `toml:"memory"`
	CPUs     any      `toml:"cpus"`
	Network  string   `toml:"network"`
	Mounts   []string `toml:"mounts"`
	EnvFiles []string `toml:"env_files"`
}

// LoadConfig reads a config file. A file that does not exist is no config
// (nil, nil); any other problem is an error naming the file and line,
// which wraps ErrBadSetting when the file's content is at fault.
// home is the user's home directory, for the paths that start with ~/.
func LoadConfig(path, home string) (*Config, error) {
	b, err := readSettingsFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseConfig(path, b, home)
}

// readSettingsFile reads a regular file of at most maxSettingsFile bytes.
func readSettingsFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, badSetting(Source{File: path}, "not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSettingsFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSettingsFile {
		return nil, badSetting(Source{File: path}, "larger than %d bytes, the limit", maxSettingsFile)
	}
	return b, nil
}

// parseConfig parses config.toml's bytes; path names the file in errors and
// is where relative host paths start from.
func parseConfig(path string, b []byte, home string) (*Config, error) {
	var raw configFile
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, tomlError(path, err)
	}
	at := func(key string) Source { return Source{File: path, Line: keyLine(b, key)} }
	c := &Config{File: path}
	set := func(dst *Setting, key, v string) {
		if v != "" {
			*dst = Setting{Value: v, From: at(key)}
		}
	}
	set(&c.Runtime, "runtime", raw.Runtime)
	set(&c.Image, "image", raw.Image)
	set(&c.Network, "network", raw.Network)
	for _, f := range []struct {
		dst *Setting
		key string
		v   any
	}{{&c.Memory, "memory", raw.Memory}, {&c.CPUs, "cpus", raw.CPUs}} {
		switch v := f.v.(type) {
		case nil:
		case string:
			set(f.dst, f.key, v)
		case int64:
			set(f.dst, f.key, strconv.FormatInt(v, 10))
		case float64:
			set(f.dst, f.key, strconv.FormatFloat(v, 'f', -1, 64))
		default:
			return nil, badSetting(at(f.key), "%s: want a string or a number, not %T", f.key, v)
		}
	}
	dir := filepath.Dir(path)
	for _, m := range raw.Mounts {
		from := Source{File: path, Line: elemLine(b, "mounts", m)}
		c.Mounts = append(c.Mounts, Setting{Value: m, From: from})
	}
	for _, e := range raw.EnvFiles {
		from := Source{File: path, Line: elemLine(b, "env_files", e)}
		p, err := hostPath(e, dir, home)
		if err != nil {
			return nil, badSetting(from, "env_files: %v", err)
		}
		c.EnvFiles = append(c.EnvFiles, Setting{Value: p, From: from})
	}
	return c, nil
}

// tomlError names the file, line and column of a TOML decoding error.
func tomlError(path string, err error) error {
	// Unknown keys first: a StrictMissingError unwraps to DecodeErrors.
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		e := sm.Errors[0]
		line, _ := e.Position()
		return badSetting(Source{File: path, Line: line}, "unknown setting %q (known: runtime, image, memory, cpus, network, mounts, env_files)", strings.Join(e.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		return badSetting(Source{File: path, Line: line}, "column %d: %s", col, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return badSetting(Source{File: path}, "%s", strings.TrimPrefix(err.Error(), "toml: "))
}

// keyLine is the line of a top-level key's assignment (config.toml has
// only top-level keys), or 0.
func keyLine(b []byte, key string) int {
	re := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(key) + `"?\s*=`)
	for i, l := range bytes.Split(b, []byte("\n")) {
		if re.Match(l) {
			return i + 1
		}
	}
	return 0
}

// elemLine is the line of an array element: the first line from its key's
// on that holds it.
func elemLine(b []byte, key, elem string) int {
	start := keyLine(b, key)
	if start == 0 {
		return 0
	}
	lines := bytes.Split(b, []byte("\n"))
	for i := start - 1; i < len(lines); i++ {
		if bytes.Contains(lines[i], []byte(elem)) {
			return i + 1
		}
	}
	return start
}

// hostPath makes a host path absolute: ~/ is home, the user's home
// directory, and a relative path starts from dir.
func hostPath(p, dir, home string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("an empty path")
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", fmt.Errorf("%s: no home directory ($HOME is not set)", p)
		}
		p = filepath.Join(home, p[1:])
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%s: only ~/ (your own home) is understood", p)
	case !filepath.IsAbs(p) && dir != "":
		p = filepath.Join(dir, p)
	case !filepath.IsAbs(p):
		// Never relative: docker would take a relative "host path" for
		// the name of a volume.
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		p = abs
	}
	return filepath.Clean(p), nil
}

// Mount is a host path bound into the sandbox.
type Mount struct {
	Host     string `json:"host"`
	Guest    string `json:"guest"`
	ReadOnly bool   `json:"read_only,omitempty"`
	From     Source `json:"from"`
}

func (m Mount) String() string {
	s := m.Host + ":" + m.Guest
	if m.ReadOnly {
		s += ":ro"
	}
	return s
}

// parseMount parses docker's -v syntax, HOST:GUEST[:ro|rw]; a relative or
// ~/ host path is resolved against dir.
func parseMount(spec, dir, home string, from Source) (Mount, error) {
	parts := strings.Split(spec, ":")
	m := Mount{From: from}
	switch {
	case len(parts) == 3 && (parts[2] == "ro" || parts[2] == "rw"):
		m.ReadOnly = parts[2] == "ro"
	case len(parts) == 2:
	default:
		return m, badSetting(from, "mount %q: want HOST:GUEST or HOST:GUEST:ro (paths with ':' cannot be mounted)", spec)
	}
	host, err := hostPath(parts[0], dir, home)
	if err != nil {
		return m, badSetting(from, "mount %q: host path %v", spec, err)
	}
	m.Host, m.Guest = host, parts[1]
	return m, checkGuest(m)
}

// guardedGuest are the guest paths a mount may not cover: the harness's own
// (the workspace and the project, which a mount would hide or replace) and
// the runtime's (/proc, /dev, /sys).
var guardedGuest = []string{GuestHome, GuestWorkspace, "/proc", "/dev", "/sys"}

// checkGuest checks a mount's guest path.
func checkGuest(m Mount) error {
	g := m.Guest
	switch {
	case !strings.HasPrefix(g, "/"):
		return badSetting(m.From, "mount %s: the guest path %q is not absolute", m, g)
	case strings.ContainsAny(g, ":,\n\x00"):
		// -v HOST:GUEST[:ro] cannot say a ':' in either path.
		return badSetting(m.From, "mount %s: the guest path %q holds a ':', comma, newline or NUL", m, g)
	case filepath.Clean(g) != g && filepath.Clean(g)+"/" != g:
		return badSetting(m.From, "mount %s: the guest path %q is not clean (want %s)", m, g, filepath.Clean(g))
	case filepath.Clean(g) == "/":
		return badSetting(m.From, "mount %s: cannot mount over the sandbox's /", m)
	}
	g = filepath.Clean(g)
	for _, p := range guardedGuest {
		if g == p || strings.HasPrefix(g, p+"/") {
			what := "belongs to the runtime"
			switch p {
			case GuestHome:
				what = "is the session's workspace (HOME), which the harness mounts; put files there through the workspace, or mount elsewhere"
			case GuestWorkspace:
				what = "is the project, which the harness mounts; mount elsewhere"
			}
			return badSetting(m.From, "mount %s: %s %s", m, g, what)
		}
	}
	return nil
}

// CheckMounts checks what of the mounts the file system decides: each host
// path exists (its links resolved, so that what is bound is what was
// checked), and under bubblewrap each guest path inside the host's
// read-only system directories is already there, since bwrap cannot make a
// mount point in them ("Can't mkdir …: Read-only file system") and would
// fail only once the session exists.
func CheckMounts(runtime string, ms []Mount) error {
	for i := range ms {
		real, err := filepath.EvalSymlinks(ms[i].Host)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return badSetting(ms[i].From, "mount %s: the host path %s does not exist", ms[i], ms[i].Host)
			}
			return badSetting(ms[i].From, "mount %s: %v", ms[i], err)
		}
		if strings.Contains(real, ":") {
			// -v HOST:GUEST cannot say it.
			return badSetting(ms[i].From, "mount %s: the host path %s leads to %s, a path with ':', which cannot be mounted", ms[i], ms[i].Host, real)
		}
		ms[i].Host = real
		if runtime != "bwrap" {
			continue
		}
		g := filepath.Clean(ms[i].Guest)
		for _, d := range systemDirs {
			if g != d && !strings.HasPrefix(g, d+"/") {
				continue
			}
			if _, err := os.Stat(g); err != nil {
				return badSetting(ms[i].From, "mount %s: under bwrap %s is this machine's own, read-only, and %s is not in it, so there is nowhere to mount; choose a guest path outside %s (such as /mnt/%s)", ms[i], d, g, strings.Join(systemDirs, ", "), filepath.Base(g))
			}
		}
	}
	return nil
}

// mountArgs are a container runtime's flags for mounts.
func mountArgs(ms []Mount) []string {
	var args []string
	for _, m := range ms {
		args = append(args, "-v", m.String())
	}
	return args
}

// bwrapMountArgs are bubblewrap's flags for mounts.
func bwrapMountArgs(ms []Mount) []string {
	var args []string
	for _, m := range ms {
		flag := "--bind"
		if m.ReadOnly {
			flag = "--ro-bind"
		}
		args = append(args, flag, m.Host, filepath.Clean(m.Guest))
	}
	return args
}

// EnvVar is one variable for the sandbox and where it was set.
type EnvVar struct {
	Key, Value string
	From       Source
}

// reservedEnv are the variables the harness sets itself: an env file or a
// devcontainer may not change them under it.
var reservedEnv = map[string]bool{"HOME": true, "SANDBOX_SESSION": true, "SANDBOX_EXPORTS": true, "DOCKER_SANDBOX": true}

// checkEnvKey checks a variable's name.
func checkEnvKey(k string, from Source) error {
	switch {
	case k == "":
		return badSetting(from, "an empty variable name")
	case strings.ContainsAny(k, "=\x00") || strings.IndexFunc(k, unicode.IsSpace) >= 0:
		return badSetting(from, "variable %q: a name may not hold '=', spaces or NUL", k)
	case reservedEnv[k]:
		return badSetting(from, "variable %s is the harness's own and cannot be set here", k)
	}
	return nil
}

// readEnvFile reads an env file in docker's --env-file syntax: one
// VAR=VALUE per line, the value taken as it is (no quotes are removed);
// blank lines and lines starting with # are skipped; a line holding only
// VAR takes VAR from lookup (the caller's environment) and is dropped when
// it is not set there. from names the file in errors.
func readEnvFile(path string, from Source, lookup func(string) (string, bool)) ([]EnvVar, error) {
	b, err := readSettingsFile(path)
	if err != nil {
		if errors.Is(err, ErrBadSetting) {
			return nil, err
		}
		return nil, badSetting(from, "env file: %v", err)
	}
	return parseEnvFile(path, b, lookup)
}

// parseEnvFile parses an env file's bytes (see ReadEnvFile).
func parseEnvFile(path string, b []byte, lookup func(string) (string, bool)) ([]EnvVar, error) {
	var out []EnvVar
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxSettingsFile+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a byte order mark
		}
		from := Source{File: path, Line: n}
		if !utf8.Valid(line) {
			return nil, badSetting(from, "not valid UTF-8")
		}
		s := strings.TrimRight(strings.TrimLeftFunc(string(line), unicode.IsSpace), "\r")
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		k, v, hasValue := strings.Cut(s, "=")
		if err := checkEnvKey(k, from); err != nil {
			return nil, err
		}
		if !hasValue {
			var ok bool
			if v, ok = lookup(k); !ok {
				continue
			}
		}
		if strings.ContainsRune(v, 0) {
			return nil, badSetting(from, "variable %s: a value may not hold NUL", k)
		}
		out = append(out, EnvVar{Key: k, Value: v, From: from})
	}
	if err := sc.Err(); err != nil {
		return nil, badSetting(Source{File: path}, "%v", err)
	}
	return out, nil
}
