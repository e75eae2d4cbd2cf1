package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/tailscale/hujson"
)

// Devcontainer is what sandbox run takes from a project's
// .devcontainer/devcontainer.json (or .devcontainer.json): its image,
// mounts, containerEnv and remoteUser. Everything else in the file (build,
// features, customizations, …) is the editor's business.
type Devcontainer struct {
	File       string
	Image      Setting
	Mounts     []Mount
	Env        []EnvVar // containerEnv, sorted by name
	RemoteUser Setting
	// HostVars are the caller's environment variables the file reads
	// (${localEnv:VAR}), each with where: a project's file choosing what
	// of the host goes into the sandbox is said at every run.
	HostVars []EnvVar
	// Notes are what sandbox leaves out, for the user: a volume mount, a
	// build it does not do.
	Notes []string
}

// devcontainerFiles are where a project's devcontainer.json is looked for,
// in order.
var devcontainerFiles = []string{".devcontainer/devcontainer.json", ".devcontainer.json"}

// LoadDevcontainer reads the devcontainer.json of a project, if it has one
// (nil, nil when not). Errors name the file and line, and wrap
// ErrBadSetting when the file's content is at fault.
// Its ${localEnv:VAR} and ~/ come from env.
func LoadDevcontainer(project string, env osenv.Env) (*Devcontainer, error) {
	if st, err := os.Stat(project); err == nil && !st.IsDir() {
		return nil, &InvalidError{Err: fmt.Errorf("project %s is not a directory", project)}
	}
	for _, name := range devcontainerFiles {
		p := filepath.Join(project, filepath.FromSlash(name))
		b, err := readSettingsFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return parseDevcontainer(p, b, project, env.Lookup)
	}
	return nil, nil
}

// devcontainerFile is the part of devcontainer.json's schema sandbox reads.
type devcontainerFile struct {
	Image             *string           `json:"image"`
	Mounts            []json.RawMessage `json:"mounts"`
	ContainerEnv      map[string]string `json:"containerEnv"`
	RemoteUser        *string           `json:"remoteUser"`
	Build             json.RawMessage   `json:"build"`
	DockerFile        json.RawMessage   `json:"dockerFile"`
	DockerComposeFile json.RawMessage   `json:"dockerComposeFile"`
}

// parseDevcontainer parses a devcontainer.json (JSON with comments and
// trailing commas). project is ${localWorkspaceFolder}; lookup is
// ${localEnv:…}.
func parseDevcontainer(path string, b []byte, project string, lookup func(string) (string, bool)) (*Devcontainer, error) {
	ast, err := hujson.Parse(b)
	if err != nil {
		return nil, badSetting(Source{File: path, Line: hujsonLine(err)}, "%s", strings.TrimPrefix(err.Error(), "hujson: "))
	}
	std := ast.Clone()
	std.Standardize() // comments become spaces: offsets, and so lines, stay
	js := std.Pack()
	lineAt := func(off int) int { return bytes.Count(js[:min(off, len(js))], []byte("\n")) + 1 }
	at := func(ptr string) Source {
		if v := ast.Find(ptr); v != nil {
			return Source{File: path, Line: lineAt(v.StartOffset)}
		}
		return Source{File: path}
	}
	var raw devcontainerFile
	if err := json.Unmarshal(js, &raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, badSetting(Source{File: path, Line: lineAt(int(te.Offset))}, "%s: want %s, not a JSON %s", te.Field, te.Type, te.Value)
		}
		return nil, badSetting(Source{File: path}, "%v", err)
	}
	d := &Devcontainer{File: path}
	x := expander{project: project, lookup: lookup, used: &d.HostVars}
	if raw.Image != nil && *raw.Image != "" {
		from := at("/image")
		v, err := x.expand(*raw.Image, from)
		if err != nil {
			return nil, err
		}
		d.Image = Setting{Value: v, From: from}
	} else if raw.Build != nil || raw.DockerFile != nil || raw.DockerComposeFile != nil {
		d.Notes = append(d.Notes, path+": builds its image (build, dockerFile or dockerComposeFile); sandbox does not build images: give --image")
	}
	if raw.RemoteUser != nil && *raw.RemoteUser != "" {
		from := at("/remoteUser")
		v, err := x.expand(*raw.RemoteUser, from)
		if err != nil {
			return nil, err
		}
		if err := checkEnvValue("remoteUser", v, from); err != nil {
			return nil, err
		}
		d.RemoteUser = Setting{Value: v, From: from}
	}
	keys := make([]string, 0, len(raw.ContainerEnv))
	for k := range raw.ContainerEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		from := at("/containerEnv/" + jsonPointerEscape(k))
		if err := checkEnvKey(k, from); err != nil {
			return nil, err
		}
		v, err := x.expand(raw.ContainerEnv[k], from)
		if err != nil {
			return nil, err
		}
		if err := checkEnvValue(k, v, from); err != nil {
			return nil, err
		}
		if agentHomeVars[k] && !underGuestHome(v) {
			// A devcontainer made for another setup (Claude Code's own
			// sets CLAUDE_CONFIG_DIR=/home/node/.claude) would send the
			// agent's transcripts out of the session's workspace, into
			// the container, to be lost with it: what sandbox exists to
			// prevent.
			d.Notes = append(d.Notes, fmt.Sprintf("%s: containerEnv %s=%s left out: it would keep the agent's transcripts outside %s, where they would be lost with the sandbox", from, k, v, GuestHome))
			continue
		}
		d.Env = append(d.Env, EnvVar{Key: k, Value: v, From: from})
	}
	for i, rm := range raw.Mounts {
		from := at(fmt.Sprintf("/mounts/%d", i))
		m, skip, err := parseDevMount(rm, from, x)
		if err != nil {
			return nil, err
		}
		if skip != "" {
			d.Notes = append(d.Notes, from.String()+": "+skip)
			continue
		}
		d.Mounts = append(d.Mounts, m)
	}
	return d, nil
}

// agentHomeVars name where agents keep their transcripts.
var agentHomeVars = map[string]bool{"CLAUDE_CONFIG_DIR": true, "CODEX_HOME": true}

func underGuestHome(p string) bool {
	p = filepath.Clean(p)
	return p == GuestHome || strings.HasPrefix(p, GuestHome+"/")
}

func checkEnvValue(k, v string, from Source) error {
	if strings.ContainsRune(v, 0) {
		return badSetting(from, "%s: a value may not hold NUL", k)
	}
	return nil
}

func jsonPointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

var hujsonPos = regexp.MustCompile(`line (\d+)`)

// hujsonLine digs the line out of a hujson syntax error ("hujson: line 3,
// column 5: …"), or 0.
func hujsonLine(err error) int {
	m := hujsonPos.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n := 0
	fmt.Sscan(m[1], &n)
	return n
}

// parseDevMount reads one entry of mounts: docker's --mount string
// ("source=…,target=…,type=bind") or an object {source, target, type}.
// A mount that is not a bind of a host path is left out, with the reason
// as skip.
func parseDevMount(rm json.RawMessage, from Source, x expander) (m Mount, skip string, err error) {
	var fields = map[string]string{}
	readOnly := false
	var s string
	if json.Unmarshal(rm, &s) == nil {
		for _, part := range strings.Split(s, ",") {
			k, v, hasValue := strings.Cut(strings.TrimSpace(part), "=")
			switch k {
			case "readonly", "ro":
				readOnly = !hasValue || v == "true" || v == "1"
			case "type", "source", "src", "target", "destination", "dst":
				if !hasValue {
					return m, "", badSetting(from, "mount %q: %s needs a value", s, k)
				}
				switch k {
				case "src":
					k = "source"
				case "destination", "dst":
					k = "target"
				}
				fields[k] = v
			case "consistency", "bind-propagation":
				// Docker Desktop's and propagation hints: nothing to do
				// for a plain bind.
			default:
				return m, "", badSetting(from, "mount %q: unknown option %q (sandbox binds host paths: type=bind,source=…,target=…[,readonly])", s, k)
			}
		}
	} else {
		var o struct {
			Type     string `json:"type"`
			Source   string `json:"source"`
			Target   string `json:"target"`
			ReadOnly bool   `json:"readonly"`
		}
		dec := json.NewDecoder(bytes.NewReader(rm))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return m, "", badSetting(from, "mount: want a string or an object {type, source, target}: %v", err)
		}
		fields["type"], fields["source"], fields["target"], readOnly = o.Type, o.Source, o.Target, o.ReadOnly
		s = string(rm)
	}
	typ := fields["type"]
	if typ == "" {
		typ = "volume" // docker's --mount default
	}
	if typ != "bind" {
		return m, fmt.Sprintf("mount %s is a %s mount, left out: sandbox binds host paths only (type=bind)", s, typ), nil
	}
	if fields["source"] == "" || fields["target"] == "" {
		return m, "", badSetting(from, "mount %s: a bind needs a source and a target", s)
	}
	src, err := x.expand(fields["source"], from)
	if err != nil {
		return m, "", err
	}
	dst, err := x.expand(fields["target"], from)
	if err != nil {
		return m, "", err
	}
	home, _ := x.lookup("HOME")
	host, err := hostPath(src, x.project, home)
	if err != nil {
		return m, "", badSetting(from, "mount %s: host path %v", s, err)
	}
	if strings.Contains(host, ":") {
		return m, "", badSetting(from, "mount %s: the host path %s holds ':', which cannot be mounted", s, host)
	}
	m = Mount{Host: host, Guest: dst, ReadOnly: readOnly, From: from}
	return m, "", checkGuest(m)
}

// expander substitutes devcontainer.json's variables: ${localEnv:VAR},
// ${localEnv:VAR:default}, ${localWorkspaceFolder},
// ${localWorkspaceFolderBasename}, ${containerWorkspaceFolder},
// ${containerWorkspaceFolderBasename}. Any other is an error: sandbox
// cannot know what it would be.
type expander struct {
	project string
	lookup  func(string) (string, bool)
	used    *[]EnvVar // the host variables read, if not nil
}

var devVar = regexp.MustCompile(`\$\{([^}]*)\}`)

func (x expander) expand(s string, from Source) (string, error) {
	var bad error
	out := devVar.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		switch name {
		case "localWorkspaceFolder":
			return x.project
		case "localWorkspaceFolderBasename":
			return filepath.Base(x.project)
		case "containerWorkspaceFolder":
			return GuestWorkspace
		case "containerWorkspaceFolderBasename":
			return filepath.Base(GuestWorkspace)
		}
		if rest, ok := strings.CutPrefix(name, "localEnv:"); ok || strings.HasPrefix(name, "env:") {
			if !ok {
				rest = strings.TrimPrefix(name, "env:")
			}
			k, def, _ := strings.Cut(rest, ":")
			v, ok := x.lookup(k)
			if !ok {
				v = def
			}
			if x.used != nil {
				*x.used = append(*x.used, EnvVar{Key: k, Value: v, From: from})
			}
			return v
		}
		if bad == nil {
			bad = badSetting(from, "%s: sandbox cannot substitute this variable (it knows ${localEnv:VAR}, ${localWorkspaceFolder}, ${containerWorkspaceFolder} and their Basename forms)", m)
		}
		return m
	})
	return out, bad
}
