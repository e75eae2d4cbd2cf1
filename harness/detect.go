package harness

import (
	"bufio"
	"strings"
)

// Detection is what Detect found: whether this process runs inside a
// sandbox, which kind, and the marks that say so.
type Detection struct {
	Inside   bool     `json:"inside"`
	Kind     string   `json:"kind,omitempty"`
	Evidence []string `json:"evidence"`
}

// Detect looks for the marks sandboxes leave (sandbox detect), through
// getenv and readFile, which tests replace.
func Detect(getenv func(string) string, readFile func(string) ([]byte, error)) Detection {
	d := Detection{Evidence: []string{}}
	add := func(kind, why string) {
		if d.Kind == "" {
			d.Kind = kind
		}
		d.Inside = true
		d.Evidence = append(d.Evidence, why)
	}
	if v := getenv("DOCKER_SANDBOX"); v != "" {
		add("docker", "DOCKER_SANDBOX="+v)
	}
	if v := getenv("SANDBOX_SESSION"); v != "" {
		add("sandbox run", "SANDBOX_SESSION="+v)
	}
	if v := getenv("CODEX_SANDBOX_MODE"); v != "" {
		add("codex", "CODEX_SANDBOX_MODE="+v)
	} else if v := getenv("CODEX_SANDBOX"); v != "" {
		add("codex", "CODEX_SANDBOX="+v)
	}
	if _, err := readFile("/.dockerenv"); err == nil {
		add("docker", "/.dockerenv exists")
	}
	if _, err := readFile("/run/.containerenv"); err == nil {
		add("podman", "/run/.containerenv exists")
	}
	if v := getenv("container"); v != "" {
		add(v, "container="+v)
	}
	if b, err := readFile("/proc/1/cgroup"); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			l := sc.Text()
			for _, k := range []string{"docker", "libpod", "containerd", "kubepods", "lxc"} {
				if strings.Contains(l, k) {
					kind := k
					if k == "libpod" {
						kind = "podman"
					}
					add(kind, "/proc/1/cgroup: "+l)
					break
				}
			}
		}
	}
	if b, err := readFile("/proc/1/comm"); err == nil && strings.TrimSpace(string(b)) == "bwrap" {
		add("bubblewrap", "process 1 is bwrap")
	}
	return d
}
