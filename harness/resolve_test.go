package harness

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	cfg := mustConfig(t, `runtime = "docker"
image = "cfg:1"
memory = "1g"
cpus = 2
network = "host"
mounts = ["/c:/shared", "/c2:/only-cfg:ro"]
env_files = ["cfg.env"]
`)
	dc := mustDev(t, `{
  "image": "dev:1",
  "remoteUser": "node",
  "containerEnv": {"X": "dev"},
  "mounts": ["source=/d,target=/shared,type=bind"]
}`)
	cfgAt := func(line int) Source { return Source{File: "/cfg/config.toml", Line: line} }
	devAt := func(line int) Source { return Source{File: "/p/.devcontainer/devcontainer.json", Line: line} }
	flagS := func(name string) Source { return Source{Flag: "--" + name} }
	type want struct {
		runtime, image, memory, cpus, network Setting
		mounts                                []Mount
		env                                   []EnvLayer
	}
	cfgEnv := EnvLayer{File: "/cfg/cfg.env", From: cfgAt(7)}
	devEnv := EnvLayer{Vars: []EnvVar{{"X", "dev", devAt(4)}}, From: Source{File: "/p/.devcontainer/devcontainer.json"}}
	userEnv := EnvLayer{Vars: []EnvVar{{"USER", "node", devAt(3)}}, From: devAt(3)}
	for _, tc := range []struct {
		name string
		f    RunFlags
		sess *Session
		dc   *Devcontainer
		cfg  *Config
		want want
	}{
		{name: "nothing", want: want{network: Setting{Value: "none"}}},
		{name: "config alone", cfg: cfg, want: want{
			runtime: Setting{"docker", cfgAt(1)}, image: Setting{"cfg:1", cfgAt(2)}, memory: Setting{"1g", cfgAt(3)},
			cpus: Setting{"2", cfgAt(4)}, network: Setting{"host", cfgAt(5)},
			mounts: []Mount{{Host: "/c", Guest: "/shared", From: cfgAt(6)}, {Host: "/c2", Guest: "/only-cfg", ReadOnly: true, From: cfgAt(6)}},
			env:    []EnvLayer{cfgEnv},
		}},
		{name: "the devcontainer over the config", cfg: cfg, dc: dc, want: want{
			runtime: Setting{"docker", cfgAt(1)}, image: Setting{"dev:1", devAt(2)}, memory: Setting{"1g", cfgAt(3)},
			cpus: Setting{"2", cfgAt(4)}, network: Setting{"host", cfgAt(5)},
			mounts: []Mount{{Host: "/c2", Guest: "/only-cfg", ReadOnly: true, From: cfgAt(6)}, {Host: "/d", Guest: "/shared", From: devAt(5)}},
			env:    []EnvLayer{cfgEnv, devEnv, userEnv},
		}},
		{name: "flags over both", cfg: cfg, dc: dc,
			f: RunFlags{Runtime: "podman", Image: "flag:1", Memory: "512m", CPUs: "0.5", Network: "none",
				Volumes: []string{"/f:/shared:ro"}, EnvFiles: []string{"f.env"}, Env: []string{"X=flag"}, Dir: "/cwd"},
			want: want{
				runtime: Setting{"podman", flagS("runtime")}, image: Setting{"flag:1", flagS("image")}, memory: Setting{"512m", flagS("memory")},
				cpus: Setting{"0.5", flagS("cpus")}, network: Setting{"none", flagS("network")},
				mounts: []Mount{{Host: "/c2", Guest: "/only-cfg", ReadOnly: true, From: cfgAt(6)}, {Host: "/f", Guest: "/shared", ReadOnly: true, From: flagS("volume")}},
				env: []EnvLayer{cfgEnv, devEnv, userEnv, {File: "/cwd/f.env", From: flagS("env-file")},
					{Vars: []EnvVar{{"X", "flag", flagS("env")}}, From: flagS("env")}},
			}},
		{name: "a session keeps its runtime and image", cfg: cfg, dc: dc, sess: &Session{ID: "s", Runtime: "bwrap", Image: ""},
			want: want{
				runtime: Setting{"bwrap", Source{File: "session s"}}, memory: Setting{"1g", cfgAt(3)},
				cpus: Setting{"2", cfgAt(4)}, network: Setting{"host", cfgAt(5)},
				mounts: []Mount{{Host: "/c2", Guest: "/only-cfg", ReadOnly: true, From: cfgAt(6)}, {Host: "/d", Guest: "/shared", From: devAt(5)}},
				env:    []EnvLayer{cfgEnv, devEnv, userEnv},
			}},
		{name: "flags over a session", sess: &Session{ID: "s", Runtime: "docker", Image: "old:1"}, f: RunFlags{Image: "new:1"},
			want: want{runtime: Setting{"docker", Source{File: "session s"}}, image: Setting{"new:1", flagS("image")}, network: Setting{Value: "none"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Resolve(tc.f, tc.sess, tc.dc, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := want{r.Runtime, r.Image, r.Memory, r.CPUs, r.Network, r.Mounts, r.Env}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestResolveRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    RunFlags
		cfg  string
		dev  string
		sess *Session
		want string
	}{
		{name: "runtime", cfg: `runtime = "chroot"`, want: `/cfg/config.toml:1: unknown runtime "chroot" (use docker`},
		{name: "network flag", f: RunFlags{Network: "bridge"}, want: `--network "bridge": use none or host`},
		{name: "memory", cfg: "\nmemory = \"lots\"", want: `/cfg/config.toml:2: memory "lots"`},
		{name: "cpus", f: RunFlags{CPUs: "-1"}, want: `--cpus "-1"`},
		{name: "cpus zero", cfg: "cpus = 0", want: `cpus "0"`},
		{name: "memory too small", cfg: "memory = \"4m\"", want: `/cfg/config.toml:1: memory "4m": want a size of at least 6m`},
		{name: "image", f: RunFlags{Image: "--privileged"}, want: `--image "--privileged": not an image name`},
		{name: "mount twice in one source", f: RunFlags{Volumes: []string{"/a:/x", "/b:/x/"}}, want: "--volume: mount /b:/x/: /x is mounted twice"},
		{name: "mount over the workspace", cfg: `mounts = ["/a:/workspace"]`, want: "/cfg/config.toml:1: mount /a:/workspace: /workspace is the project"},
		{name: "local with a mount", f: RunFlags{Runtime: "local", Volumes: []string{"/a:/b"}}, want: "--volume: mount /a:/b: runtime local runs the agent on the host itself"},
		{name: "local session with a devcontainer mount", sess: &Session{ID: "s", Runtime: "local"},
			dev: "{\n\"mounts\": [\"source=/a,target=/b,type=bind\"]}", want: "devcontainer.json:2: mount /a:/b: runtime local"},
		{name: "env", f: RunFlags{Env: []string{"NOVALUE"}}, want: `--env "NOVALUE": want K=V`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg *Config
			if tc.cfg != "" {
				cfg = mustConfig(t, tc.cfg)
			}
			var dc *Devcontainer
			if tc.dev != "" {
				dc = mustDev(t, tc.dev)
			}
			_, err := Resolve(tc.f, tc.sess, dc, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadSetting) {
				t.Errorf("got %v, want %q (a bad setting)", err, tc.want)
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.env")
	if err := os.WriteFile(a, []byte("X=from a\nY=from a\nHOSTVAR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Resolved{Env: []EnvLayer{
		{File: a, From: Source{File: "c.toml", Line: 3}},
		{Vars: []EnvVar{{Key: "Y", Value: "from dev"}, {Key: "Z", Value: "z"}}},
		{Vars: []EnvVar{{Key: "X", Value: "from flag", From: Source{Flag: "--env"}}}},
	}}
	env, vars, err := r.Environment(func(k string) (string, bool) { return "h", k == "HOSTVAR" })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"X=from flag", "Y=from dev", "HOSTVAR=h", "Z=z"}; !reflect.DeepEqual(env, want) {
		t.Errorf("got %q, want %q", env, want)
	}
	if vars[0].From.Flag != "--env" || vars[2].From != (Source{File: a, Line: 3}) {
		t.Errorf("sources: %+v", vars)
	}
	r.Env = append(r.Env, EnvLayer{File: filepath.Join(dir, "missing.env"), From: Source{Flag: "--env-file"}})
	if _, _, err := r.Environment(noEnv); err == nil || !strings.Contains(err.Error(), "--env-file: env file: open") || !errors.Is(err, ErrBadSetting) {
		t.Errorf("a missing env file: %v", err)
	}
}

func TestReportAndFiles(t *testing.T) {
	cfg := mustConfig(t, "memory = \"1g\"\nmounts = [\"/c:/c\"]")
	dc := mustDev(t, `{"image": "dev:1"}`)
	r, err := Resolve(RunFlags{Runtime: "docker"}, nil, dc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"runtime docker (from --runtime)", "image dev:1 (from /p/.devcontainer/devcontainer.json:1)",
		"memory 1g (from /cfg/config.toml:1)", "network none (from the default)", "mount /c:/c (from /cfg/config.toml:2)"}
	if got := r.Report(); !reflect.DeepEqual(got, want) {
		t.Errorf("report:\n%q\nwant\n%q", got, want)
	}
	if got, want := r.Files(), []string{"/p/.devcontainer/devcontainer.json", "/cfg/config.toml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
}

func TestResolveImageOnlyForContainers(t *testing.T) {
	dc := mustDev(t, `{"image": "dev:1"}`)
	cfg := mustConfig(t, `image = "cfg:1"`)
	for _, rt := range []string{"bwrap", "local"} {
		r, err := Resolve(RunFlags{Runtime: rt}, nil, dc, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Image.Value != "" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "devcontainer.json:1: image dev:1 is not used: runtime "+rt) {
			t.Errorf("%s: image %+v, notes %q", rt, r.Image, r.Notes)
		}
		if r, _ := Resolve(RunFlags{Runtime: rt}, nil, nil, cfg); r.Image.Value != "" || len(r.Notes) != 0 {
			t.Errorf("%s: the config's image %+v, notes %q", rt, r.Image, r.Notes)
		}
	}
	// A flag's image stays, for Validate to refuse as the user's mistake.
	if r, _ := Resolve(RunFlags{Runtime: "bwrap", Image: "x:1"}, nil, dc, cfg); r.Image.Value != "x:1" {
		t.Errorf("the flag's image: %+v", r.Image)
	}
	if r, _ := Resolve(RunFlags{Runtime: "podman"}, nil, dc, cfg); r.Image.Value != "dev:1" {
		t.Errorf("podman: %+v", r.Image)
	}
}
