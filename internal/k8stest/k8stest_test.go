package k8stest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCluster starts a real cluster and checks what the harness's
// Kubernetes runtime will stand on: a pod on a dynamically provisioned
// volume that writes a file and exits 3 (its exit code and the file are
// kept), and a pod over its memory limit (OOMKilled). Stop leaves nothing
// behind: no process, mount or bridge.
func TestCluster(t *testing.T) {
	netns, results := names("/run/netns"), names("/var/lib/cni/results")
	c := Start(t)
	if _, err := os.Stat(c.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	pvc := `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"home"},
		"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"64Mi"}}}}`
	exit3 := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"exit3"},"spec":{"restartPolicy":"Never",
		"automountServiceAccountToken":false,
		"containers":[{"name":"agent","image":%q,"imagePullPolicy":"Never",
			"command":["sh","-c","echo hi > /home/agent/note; exit 3"],
			"volumeMounts":[{"name":"home","mountPath":"/home/agent"}]}],
		"volumes":[{"name":"home","persistentVolumeClaim":{"claimName":"home"}}]}}`, BusyboxImage)
	// The allocation waits a second: containerd 1.x watches for OOM kills
	// only once the task has started, and reports a container killed
	// before that as "Error" (containerd#8180); it failed CI once so.
	oom := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"oom"},"spec":{"restartPolicy":"Never",
		"automountServiceAccountToken":false,
		"containers":[{"name":"agent","image":%q,"imagePullPolicy":"Never",
			"command":["sh","-c","sleep 1; exec dd if=/dev/zero of=/dev/null bs=100M count=1"],
			"resources":{"limits":{"memory":"20Mi"},"requests":{"memory":"20Mi"}}}]}}`, BusyboxImage)
	for path, body := range map[string]string{"persistentvolumeclaims": pvc, "pods": exit3} {
		if err := c.post("/api/v1/namespaces/default/"+path, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.post("/api/v1/namespaces/default/pods", oom); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		code   int
		reason string
	}{"exit3": {3, "Error"}, "oom": {137, "OOMKilled"}} {
		code, reason := c.terminated(t, name)
		if code != want.code || reason != want.reason {
			t.Errorf("pod %s ended with %d %q, want %d %q", name, code, reason, want.code, want.reason)
		}
	}
	// The volume keeps what the pod wrote: the hostPath provisioner's
	// folder on this host.
	var vol struct {
		Spec struct{ VolumeName string }
	}
	c.get(t, "/api/v1/namespaces/default/persistentvolumeclaims/home", &vol)
	var pv struct {
		Spec struct{ HostPath struct{ Path string } }
	}
	c.get(t, "/api/v1/persistentvolumes/"+vol.Spec.VolumeName, &pv)
	if got, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "note")); err != nil || string(got) != "hi\n" {
		t.Errorf("the volume holds %q, %v", got, err)
	}
	dir := c.Dir
	c.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cluster's folder is left: %v", err)
	}
	if mounts, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(mounts), dir) {
		t.Errorf("mounts are left under %s", dir)
	}
	if _, err := os.Stat("/sys/class/net/" + bridge); err == nil {
		t.Errorf("the bridge %s is left", bridge)
	}
	// The pods' network namespaces and CNI results: the kubelet tore
	// their networks down before it stopped.
	for dir, before := range map[string]map[string]bool{"/run/netns": netns, "/var/lib/cni/results": results} {
		for n := range names(dir) {
			if !before[n] {
				t.Errorf("%s/%s is left", dir, n)
			}
		}
	}
	if _, err := os.Stat(pv.Spec.HostPath.Path); !os.IsNotExist(err) {
		t.Errorf("the volume's folder %s is left: %v", pv.Spec.HostPath.Path, err)
	}
}

// names lists a folder's entries.
func names(dir string) map[string]bool {
	out := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		out[e.Name()] = true
	}
	return out
}

// terminated waits (two minutes at most) for a pod's one container to end,
// and says its exit code and reason.
func (c *Cluster) terminated(t *testing.T, pod string) (int, string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var p struct {
			Status struct {
				ContainerStatuses []struct {
					State struct {
						Terminated *struct {
							ExitCode int
							Reason   string
						}
					}
				}
			}
		}
		c.get(t, "/api/v1/namespaces/default/pods/"+pod, &p)
		if cs := p.Status.ContainerStatuses; len(cs) > 0 && cs[0].State.Terminated != nil {
			return cs[0].State.Terminated.ExitCode, cs[0].State.Terminated.Reason
		}
	}
	t.Fatalf("pod %s did not end in two minutes\n%s", pod, c.Log("kubelet", 20))
	return 0, ""
}

func (c *Cluster) get(t *testing.T, path string, v any) {
	t.Helper()
	if err := c.getJSON(path, v); err != nil {
		t.Fatal(err)
	}
}

// deadlineTB is a test's view of Start with a deadline near, recording
// how Start ends instead of ending the test.
type deadlineTB struct {
	end         time.Time
	skip, fatal string
	cleanups    []func()
}

func (d *deadlineTB) Helper()                     {}
func (d *deadlineTB) Logf(string, ...any)         {}
func (d *deadlineTB) Cleanup(f func())            { d.cleanups = append(d.cleanups, f) }
func (d *deadlineTB) Deadline() (time.Time, bool) { return d.end, true }
func (d *deadlineTB) Skip(args ...any)            { d.skip = fmt.Sprint(args...); panic(d) }
func (d *deadlineTB) Fatalf(format string, args ...any) {
	d.fatal = fmt.Sprintf(format, args...)
	panic(d)
}

// TestStartWithoutTimeToBuild: with nothing built and 10 minutes left, Start
// says how to build the cluster (skips, or fails under CI=true) at once,
// instead of building until go test's deadline kills it with a dump.
func TestStartWithoutTimeToBuild(t *testing.T) {
	if m := Missing(); m != "" {
		t.Skip("k8stest: " + m + " (Start stops there, before the build)")
	}
	t.Setenv("GOCACHE", t.TempDir())
	for _, ci := range []string{"false", "true"} {
		t.Setenv("CI", ci)
		tb := &deadlineTB{end: time.Now().Add(10 * time.Minute)}
		func() {
			defer func() {
				if r := recover(); r != nil && r != any(tb) {
					panic(r)
				}
			}()
			Start(tb)
		}()
		got := tb.skip
		if ci == "true" {
			got = tb.fatal
		}
		if !strings.Contains(got, "go run ./internal/k8stest/prepare") || !strings.Contains(got, "not built yet") {
			t.Errorf("CI=%s: Start ended with skip %q, fatal %q", ci, tb.skip, tb.fatal)
		}
		if _, err := os.Stat(filepath.Join(os.Getenv("GOCACHE"), "sandbox-tools")); !os.IsNotExist(err) {
			t.Errorf("CI=%s: Start began a build it had no time for (%v)", ci, err)
		}
	}
}
