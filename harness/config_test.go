package harness

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/internal/osenv"
)

func noEnv(string) (string, bool) { return "", false }

func mustConfig(t *testing.T, text string) *Config {
	t.Helper()
	c, err := parseConfig("/cfg/config.toml", []byte(text), "/home/me")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustDev(t *testing.T, text string) *Devcontainer {
	t.Helper()
	d, err := parseDevcontainer("/p/.devcontainer/devcontainer.json", []byte(text), "/p", func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/me", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseConfig(t *testing.T) {
	c := mustConfig(t, `# defaults
runtime = "docker"
image = "agent:1"
memory = 2147483648
cpus = 1.5
network = "host"
mounts = [
  "~/.cache/go:/go-cache",
  "data:/data:ro",
]
env_files = ["agent.env", "/etc/agent.env"]
`)
	want := &Config{File: "/cfg/config.toml",
		Runtime: Setting{"docker", Source{File: "/cfg/config.toml", Line: 2}},
		Image:   Setting{"agent:1", Source{File: "/cfg/config.toml", Line: 3}},
		Memory:  Setting{"2147483648", Source{File: "/cfg/config.toml", Line: 4}},
		CPUs:    Setting{"1.5", Source{File: "/cfg/config.toml", Line: 5}},
		Network: Setting{"host", Source{File: "/cfg/config.toml", Line: 6}},
		Mounts: []Setting{{"~/.cache/go:/go-cache", Source{File: "/cfg/config.toml", Line: 8}},
			{"data:/data:ro", Source{File: "/cfg/config.toml", Line: 9}}},
		EnvFiles: []Setting{{"/cfg/agent.env", Source{File: "/cfg/config.toml", Line: 11}},
			{"/etc/agent.env", Source{File: "/cfg/config.toml", Line: 11}}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "runtime = \"docker\"\nimage = \n", "/cfg/config.toml:2: column"},
		{"unknown key", "runtime = \"docker\"\n\nimages = \"x\"\n", `/cfg/config.toml:3: unknown setting "images"`},
		{"table", "[run]\nimage = \"x\"\n", `unknown setting "run`},
		{"wrong type", "mounts = \"a:b\"\n", "/cfg/config.toml:1:"},
		{"memory type", "memory = true\n", `/cfg/config.toml:1: memory: want a string or a number, not bool`},
		{"env file in another's home", "env_files = [\"~bob/x\"]\n", "/cfg/config.toml:1: env_files: ~bob/x: only ~/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("/cfg/config.toml", []byte(tc.text), "/home/me")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadSetting) {
				t.Errorf("got %v, want %q (a bad setting)", err, tc.want)
			}
		})
	}
}

func TestLoadConfigMissingIsNone(t *testing.T) {
	c, err := LoadConfig(filepath.Join(t.TempDir(), "nope.toml"), "/home/me")
	if c != nil || err != nil {
		t.Errorf("got %v, %v", c, err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "config.toml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "config.toml"), "/home/me"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as config: %v", err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, maxSettingsFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(big, "/home/me"); err == nil || !strings.Contains(err.Error(), "the limit") {
		t.Errorf("an oversized config: %v", err)
	}
}

func TestConfigPath(t *testing.T) {
	env := osenv.Env{"HOME=/home/me"}
	if got := ConfigPath(env.With("XDG_CONFIG_HOME", "/xdg")); got != "/xdg/sandbox/config.toml" {
		t.Errorf("with XDG_CONFIG_HOME: %s", got)
	}
	// The XDG spec says to ignore a relative one.
	if got := ConfigPath(env.With("XDG_CONFIG_HOME", "relative")); got != "/home/me/.config/sandbox/config.toml" {
		t.Errorf("with a relative XDG_CONFIG_HOME: %s", got)
	}
	if got := ConfigPath(env.With("XDG_CONFIG_HOME", "")); got != "/home/me/.config/sandbox/config.toml" {
		t.Errorf("without XDG_CONFIG_HOME: %s", got)
	}
}

func TestParseDevcontainer(t *testing.T) {
	d := mustDev(t, `{
  // JSON with comments
  "name": "app",
  "image": "node:20",
  "remoteUser": "node",
  "containerEnv": {
    "B": "${localWorkspaceFolderBasename}",
    "A": "${localEnv:NOPE:fallback}", /* trailing commas too */
  },
  "mounts": [
    "source=${localEnv:HOME}/.ssh,target=/root/.ssh,type=bind,readonly,consistency=cached",
    {"source": "${localWorkspaceFolder}/../data", "target": "/data", "type": "bind"},
    "source=node_modules,target=${containerWorkspaceFolder}-nm,type=volume",
    "src=rel,dst=/rel,type=bind,ro=false",
  ],
  "features": {"ghcr.io/devcontainers/features/go:1": {}},
}`)
	f := "/p/.devcontainer/devcontainer.json"
	want := &Devcontainer{File: f,
		Image:      Setting{"node:20", Source{File: f, Line: 4}},
		RemoteUser: Setting{"node", Source{File: f, Line: 5}},
		Env:        []EnvVar{{"A", "fallback", Source{File: f, Line: 8}}, {"B", "p", Source{File: f, Line: 7}}},
		Mounts: []Mount{
			{Host: "/home/me/.ssh", Guest: "/root/.ssh", ReadOnly: true, From: Source{File: f, Line: 11}},
			{Host: "/data", Guest: "/data", From: Source{File: f, Line: 12}},
			{Host: "/p/rel", Guest: "/rel", From: Source{File: f, Line: 14}},
		},
		HostVars: []EnvVar{{"NOPE", "fallback", Source{File: f, Line: 8}}, {"HOME", "/home/me", Source{File: f, Line: 11}}},
		Notes:    []string{f + ":13: mount source=node_modules,target=${containerWorkspaceFolder}-nm,type=volume is a volume mount, left out: sandbox binds host paths only (type=bind)"},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got  %+v\nwant %+v", d, want)
	}
	b := mustDev(t, `{"build": {"dockerfile": "Dockerfile"}}`)
	if b.Image.Value != "" || len(b.Notes) != 1 || !strings.Contains(b.Notes[0], "sandbox does not build images") {
		t.Errorf("a devcontainer that builds: %+v", b)
	}
}

func TestParseDevcontainerErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "{\n  \"image\": \"x\"\n  \"mounts\": []\n}", "devcontainer.json:3:"},
		{"image type", "{\n\n  \"image\": 3\n}", "devcontainer.json:3: image: want string"},
		{"env type", "{\"containerEnv\": {\n \"A\": 1}}", "devcontainer.json:2: containerEnv: want string"},
		{"mount over the workspace", "{\"mounts\": [\n\"source=/tmp,target=/workspace/x,type=bind\"]}", "devcontainer.json:2: mount /tmp:/workspace/x: /workspace/x is the project"},
		{"mount over home", "{\"mounts\": [{\"source\": \"/tmp\", \"target\": \"/home/sandbox\", \"type\": \"bind\"}]}", "is the session's workspace"},
		{"unknown option", "{\"mounts\": [\"source=/a,target=/b,type=bind,z\"]}", `unknown option "z"`},
		{"unknown field", "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/b\", \"type\": \"bind\", \"mode\": 1}]}", "want a string or an object"},
		{"no target", "{\"mounts\": [\"source=/a,type=bind\"]}", "needs a source and a target"},
		{"variable", "{\"containerEnv\": {\"A\": \"${containerEnv:PATH}\"}}", "${containerEnv:PATH}: sandbox cannot substitute"},
		{"reserved", "{\"containerEnv\": {\"HOME\": \"/root\"}}", "variable HOME is the harness's own"},
		{"relative guest", "{\"mounts\": [\"source=/a,target=b,type=bind\"]}", "is not absolute"},
		{"colon", "{\"mounts\": [\"source=/a:b,target=/b,type=bind\"]}", "holds ':'"},
		{"colon in the guest", "{\"mounts\": [{\"source\": \"/a\", \"target\": \"/b:ro\", \"type\": \"bind\"}]}", "holds a ':'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseDevcontainer("/p/.devcontainer/devcontainer.json", []byte(tc.text), "/p", noEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadSetting) {
				t.Errorf("got %v, want %q (a bad setting)", err, tc.want)
			}
		})
	}
}

func TestLoadDevcontainer(t *testing.T) {
	p := t.TempDir()
	if d, err := LoadDevcontainer(p, nil); d != nil || err != nil {
		t.Fatalf("no devcontainer: %v %v", d, err)
	}
	if err := os.WriteFile(filepath.Join(p, ".devcontainer.json"), []byte(`{"image": "b"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := LoadDevcontainer(p, nil); err != nil || d.Image.Value != "b" {
		t.Fatalf(".devcontainer.json: %+v %v", d, err)
	}
	if err := os.Mkdir(filepath.Join(p, ".devcontainer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, ".devcontainer", "devcontainer.json"), []byte(`{"image": "a"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := LoadDevcontainer(p, nil); err != nil || d.Image.Value != "a" {
		t.Fatalf(".devcontainer/devcontainer.json comes first: %+v %v", d, err)
	}
}

func TestParseEnvFile(t *testing.T) {
	text := "\xef\xbb\xbf# docker's syntax\n\n  A=1\nB=two words \nC=\"quoted\"\nD=a=b\nFROMHOST\nUNSET\r\nE=\r\n"
	got, err := parseEnvFile("a.env", []byte(text), func(k string) (string, bool) {
		if k == "FROMHOST" {
			return "host value", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []EnvVar{
		{"A", "1", Source{File: "a.env", Line: 3}},
		{"B", "two words ", Source{File: "a.env", Line: 4}},
		{"C", `"quoted"`, Source{File: "a.env", Line: 5}},
		{"D", "a=b", Source{File: "a.env", Line: 6}},
		{"FROMHOST", "host value", Source{File: "a.env", Line: 7}},
		{"E", "", Source{File: "a.env", Line: 9}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	for _, tc := range []struct{ text, want string }{
		{"A=1\nB C=2\n", "a.env:2: variable \"B C\""},
		{"=x\n", "a.env:1: an empty variable name"},
		{"OK=1\nSANDBOX_SESSION=other\n", "a.env:2: variable SANDBOX_SESSION is the harness's own"},
		{"A=\xff\n", "a.env:1: not valid UTF-8"},
	} {
		if _, err := parseEnvFile("a.env", []byte(tc.text), noEnv); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestParseMount(t *testing.T) {
	from := Source{Flag: "--volume"}
	for _, tc := range []struct {
		spec string
		want Mount
		err  string
	}{
		{spec: "/a:/b", want: Mount{Host: "/a", Guest: "/b", From: from}},
		{spec: "/a:/b:ro", want: Mount{Host: "/a", Guest: "/b", ReadOnly: true, From: from}},
		{spec: "/a:/b:rw", want: Mount{Host: "/a", Guest: "/b", From: from}},
		{spec: "rel/x:/b", want: Mount{Host: "/cwd/rel/x", Guest: "/b", From: from}},
		{spec: "~/x:/b/", want: Mount{Host: "/home/me/x", Guest: "/b/", From: from}},
		{spec: "/a", err: "want HOST:GUEST"},
		{spec: "/a:/b:z", err: "want HOST:GUEST"},
		{spec: "/a:/b:ro:x", err: "want HOST:GUEST"},
		{spec: ":/b", err: "host path an empty path"},
		{spec: "/a:/", err: "cannot mount over the sandbox's /"},
		{spec: "/a:/workspace", err: "/workspace is the project"},
		{spec: "/a:/workspace/sub", err: "/workspace/sub is the project"},
		{spec: "/a:/home/sandbox/.ssh", err: "/home/sandbox/.ssh is the session's workspace"},
		{spec: "/a:/home/sandbox/../sandbox", err: "is not clean"},
		{spec: "/a:/proc/x", err: "/proc/x belongs to the runtime"},
		{spec: "/a:/workspaces", want: Mount{Host: "/a", Guest: "/workspaces", From: from}},
		{spec: "/a:b", err: "is not absolute"},
	} {
		m, err := parseMount(tc.spec, "/cwd", "/home/me", from)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBadSetting) {
				t.Errorf("%s: got %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || m != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.spec, m, err, tc.want)
		}
	}
}

func TestCheckMounts(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	ms := []Mount{{Host: filepath.Join(dir, "link"), Guest: "/x"}}
	if err := CheckMounts("docker", ms); err != nil || ms[0].Host != real {
		t.Errorf("a link is bound as what it leads to: %+v %v", ms, err)
	}
	ms = []Mount{{Host: filepath.Join(dir, "nope"), Guest: "/x", From: Source{File: "c.toml", Line: 4}}}
	if err := CheckMounts("docker", ms); err == nil || !strings.Contains(err.Error(), "c.toml:4: mount") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing host path: %v", err)
	}
	ms = []Mount{{Host: real, Guest: "/usr/share/sandbox-no-such-dir"}}
	if err := CheckMounts("docker", ms); err != nil {
		t.Errorf("docker makes its mount points: %v", err)
	}
	if err := CheckMounts("bwrap", ms); err == nil || !strings.Contains(err.Error(), "under bwrap /usr is this machine's own") {
		t.Errorf("bwrap under a read-only system directory: %v", err)
	}
	ms = []Mount{{Host: real, Guest: "/usr"}, {Host: real, Guest: "/mnt/x"}}
	if err := CheckMounts("bwrap", ms); err != nil {
		t.Errorf("bwrap over an existing directory, or outside the system's: %v", err)
	}
}

func TestMountArgs(t *testing.T) {
	ms := []Mount{{Host: "/a", Guest: "/b"}, {Host: "/c", Guest: "/d/", ReadOnly: true}}
	if got, want := mountArgs(ms), []string{"-v", "/a:/b", "-v", "/c:/d/:ro"}; !reflect.DeepEqual(got, want) {
		t.Errorf("docker/podman: %q", got)
	}
	if got, want := bwrapMountArgs(ms), []string{"--bind", "/a", "/b", "--ro-bind", "/c", "/d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("bwrap: %q", got)
	}
}

// TestDevcontainerFixtures reads the fixtures, shaped like real projects'
// files, as sandbox run would.
func TestDevcontainerFixtures(t *testing.T) {
	env := osenv.Env{"HOME=/home/me"}
	read := func(name string) *Devcontainer {
		t.Helper()
		p := filepath.Join("..", "fixtures", "devcontainer", name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := parseDevcontainer(p, b, "/p", env.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Claude Code's shape: everything but its two volumes and the config
	// directory that would take the transcripts out of HOME.
	d := read("agent-sandbox.json")
	if d.Image.Value != "" || d.RemoteUser.Value != "node" || len(d.Mounts) != 0 || len(d.Env) != 1 || d.Env[0].Key != "NODE_OPTIONS" {
		t.Errorf("agent-sandbox.json: %+v", d)
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{"sandbox does not build images", "agent-history-${devcontainerId},target=/commandhistory,type=volume is a volume mount",
		"containerEnv CLAUDE_CONFIG_DIR=/home/node/.claude left out"} {
		if !strings.Contains(notes, want) {
			t.Errorf("agent-sandbox.json: no note %q in\n%s", want, notes)
		}
	}
	// The kubernetes template: ${env:HOME}${env:USERPROFILE}, comments
	// inside the array.
	d = read("kube-bind.json")
	if len(d.Mounts) != 1 || d.Mounts[0].Host != "/home/me/.kube" || d.Mounts[0].Guest != "/usr/local/share/kube-localhost" || d.Mounts[0].From.Line != 9 {
		t.Errorf("kube-bind.json: %+v", d.Mounts)
	}
	d = read("python-ssh.json")
	if len(d.Mounts) != 1 || !d.Mounts[0].ReadOnly || d.Mounts[0].Host != "/home/me/.ssh" || len(d.Env) != 3 || d.Env[2].Value != "/workspace/.uv" {
		t.Errorf("python-ssh.json: %+v %+v", d.Mounts, d.Env)
	}
}
