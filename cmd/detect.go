package cmd

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// detection is what sandbox detect found.
type detection struct {
	Inside   bool     `json:"inside"`
	Kind     string   `json:"kind,omitempty"`
	Evidence []string `json:"evidence"`
}

func (a *app) detectCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "detect",
		Short: "Say whether sandbox runs inside a sandbox, and which",
		Long: `sandbox detect looks for the marks sandboxes leave: DOCKER_SANDBOX and SANDBOX_SESSION
(set by sandbox run), CODEX_SANDBOX_MODE (Codex's own sandbox), /.dockerenv and
/run/.containerenv, container cgroups (docker, podman, containerd, kubepods,
lxc), and bubblewrap (a process 1 that is bwrap, or the container=bwrap mark).
It prints what it found and exits 0 inside a sandbox, 1 outside; an agent's
script can branch on it before sandbox export --add.`,
		Example: `  sandbox detect && sandbox export --add dist/report.html`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			d := detectSandbox(os.Getenv, readFileFn)
			if a.json {
				if err := a.writeJSON(d); err != nil {
					return err
				}
			} else if d.Inside {
				fmt.Fprintf(a.stdout, "inside a sandbox: %s (%s)\n", d.Kind, strings.Join(d.Evidence, "; "))
			} else {
				fmt.Fprintln(a.stdout, "not inside a sandbox")
			}
			if !d.Inside {
				return &silentExit{1}
			}
			return nil
		},
	}
}

// silentExit is an exit status that is not an error to report.
type silentExit struct{ code int }

func (e *silentExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

func readFileFn(name string) ([]byte, error) { return os.ReadFile(name) }

// detectSandbox looks for sandbox marks through getenv and readFile, which
// tests replace.
func detectSandbox(getenv func(string) string, readFile func(string) ([]byte, error)) detection {
	d := detection{Evidence: []string{}}
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
