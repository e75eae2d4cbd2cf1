package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFiles adds every file of a fixtures directory to a fuzz corpus.
func seedFiles(f *testing.F, dir string) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("..", "fixtures", dir, "*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in fixtures/%s: %v", dir, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkResolved checks what must hold of any settings Resolve accepts,
// whatever the files said: no mount covers the workspace, HOME or the
// runtime's directories, every host path is absolute and clean, no guest
// path is mounted twice, and local gets no mount.
func checkResolved(t *testing.T, r *Resolved) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range r.Mounts {
		if err := checkGuest(m); err != nil {
			t.Fatalf("an accepted mount fails its own check: %v", err)
		}
		g := filepath.Clean(m.Guest)
		for _, p := range guardedGuest {
			if g == p || strings.HasPrefix(g, p+"/") {
				t.Fatalf("mount %s covers %s", m, p)
			}
		}
		if !filepath.IsAbs(m.Host) || filepath.Clean(m.Host) != m.Host || strings.Contains(m.Host, ":") {
			t.Fatalf("mount %s: host path %q", m, m.Host)
		}
		if seen[g] {
			t.Fatalf("%s mounted twice: %v", g, r.Mounts)
		}
		seen[g] = true
	}
	if r.Runtime.Value == "local" && len(r.Mounts) > 0 {
		t.Fatalf("local with mounts: %v", r.Mounts)
	}
	if n := r.Network.Value; n != "none" && n != "host" {
		t.Fatalf("network %q", n)
	}
}

// FuzzParseConfig reads any bytes as config.toml and as an env file: an
// error is a bad setting naming the file, never a crash; what is accepted
// resolves to settings that keep the sandbox's invariants.
func FuzzParseConfig(f *testing.F) {
	seedFiles(f, "sandboxconfig")
	f.Add([]byte("runtime = \"local\"\nmounts = [\"/a:/b\"]\n"))
	f.Add([]byte("mounts = [\"/a:/workspace/../etc\", \"/a:/home/sandbox\"]\n"))
	f.Add([]byte("A=1\nB\n=x\nC=\x00\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const path = "/cfg/config.toml"
		c, err := parseConfig(path, b, "/home/me")
		if err != nil {
			if !errors.Is(err, ErrBadSetting) || !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("not a bad setting naming the file: %v", err)
			}
		} else {
			r, err := Resolve(RunFlags{Dir: "/cwd"}, nil, nil, c)
			if err != nil {
				if !errors.Is(err, ErrBadSetting) {
					t.Fatalf("not a bad setting: %v", err)
				}
			} else {
				checkResolved(t, r)
			}
		}
		vars, err := parseEnvFile("a.env", b, func(k string) (string, bool) { return "v", len(k)%2 == 0 })
		if err != nil {
			if !errors.Is(err, ErrBadSetting) || !strings.HasPrefix(err.Error(), "a.env") {
				t.Fatalf("not a bad setting naming the file: %v", err)
			}
			return
		}
		for _, v := range vars {
			if checkEnvKey(v.Key, v.From) != nil || strings.ContainsRune(v.Value, 0) || v.From.Line < 1 {
				t.Fatalf("accepted %+v", v)
			}
		}
	})
}

// FuzzParseDevcontainer reads any bytes as a project's devcontainer.json,
// which sandbox must treat as hostile (it comes with a cloned repository):
// an error is a bad setting, never a crash; what is accepted never mounts
// over the workspace or HOME, never sets the harness's own variables, and
// never moves an agent's home out of the workspace.
func FuzzParseDevcontainer(f *testing.F) {
	seedFiles(f, "devcontainer")
	f.Add([]byte(`{"mounts": ["source=/,target=/home/sandbox/../sandbox,type=bind"], "containerEnv": {"HOME": "/"}}`))
	f.Add([]byte(`{"mounts": [{"source": "${localEnv:X:/a}", "target": "/b/", "type": "bind"}, "src=a,dst=/b,type=bind,ro"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		const path = "/p/.devcontainer/devcontainer.json"
		d, err := parseDevcontainer(path, b, "/p", func(k string) (string, bool) { return "/x:" + k, k == "COLON" })
		if err != nil {
			if !errors.Is(err, ErrBadSetting) || !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("not a bad setting naming the file: %v", err)
			}
			return
		}
		for _, v := range d.Env {
			if checkEnvKey(v.Key, v.From) != nil || reservedEnv[v.Key] || (agentHomeVars[v.Key] && !underGuestHome(v.Value)) {
				t.Fatalf("accepted %+v", v)
			}
		}
		for _, rt := range []string{"", "docker", "bwrap", "local"} {
			r, err := Resolve(RunFlags{Runtime: rt, Dir: "/cwd"}, nil, d, nil)
			if err != nil {
				if !errors.Is(err, ErrBadSetting) {
					t.Fatalf("not a bad setting: %v", err)
				}
				continue
			}
			checkResolved(t, r)
		}
	})
}
