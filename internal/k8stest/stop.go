package k8stest

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Stop stops the cluster and removes everything it made: its pods (the
// kubelet tears down their networks and volumes), the containers left in
// its containerd, every program it started, the mounts under its folder,
// its network bridge, the kubelet's cgroups, and the folder.
func (c *Cluster) Stop() {
	var volumes []string
	if c.client != nil && c.alive("kube-apiserver") {
		volumes = c.hostPathVolumes()
	}
	if c.client != nil && c.alive("kubelet") && c.alive("kube-apiserver") {
		c.deletePods()
	}
	if c.alive("kubelet") {
		c.waitNetworks(20 * time.Second)
	}
	c.kill("kubelet", 20*time.Second)
	sock := filepath.Join(c.Dir, "run", "containerd", "containerd.sock")
	if c.alive("containerd") {
		ctr := func(args ...string) []string {
			out, _ := exec.Command("ctr", append([]string{"-a", sock, "-n", "k8s.io"}, args...)...).Output()
			return strings.Fields(string(out))
		}
		for _, t := range ctr("tasks", "ls", "-q") {
			ctr("tasks", "kill", "-s", "SIGKILL", t)
		}
		time.Sleep(500 * time.Millisecond)
		for _, t := range ctr("tasks", "ls", "-q") {
			ctr("tasks", "rm", "-f", t)
		}
		for _, k := range ctr("containers", "ls", "-q") {
			ctr("containers", "rm", k)
		}
	}
	c.kill("containerd", 10*time.Second)
	// The shims our containerd started: found by its socket in their
	// command lines, never by name.
	if procs, err := filepath.Glob("/proc/[0-9]*/cmdline"); err == nil {
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), sock) {
				if pid := pidOf(p); pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
	for _, n := range []string{"kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		c.kill(n, 20*time.Second)
	}
	for _, p := range c.procs {
		p.log.Close()
	}
	c.unmount()
	_ = exec.Command("ip", "link", "del", bridge).Run()
	// The kubelet's cgroups (cgroupfs driver), deepest first.
	for _, root := range []string{"/sys/fs/cgroup/*/kubepods", "/sys/fs/cgroup/unified/kubepods", "/sys/fs/cgroup/kubepods"} {
		dirs, _ := filepath.Glob(root)
		for _, d := range dirs {
			var all []string
			_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
				if err == nil && e.IsDir() {
					all = append(all, p)
				}
				return nil
			})
			sort.Sort(sort.Reverse(sort.StringSlice(all)))
			for _, x := range all {
				_ = syscall.Rmdir(x)
			}
		}
	}
	for _, v := range volumes {
		_ = os.RemoveAll(v)
	}
	if c.Dir != "" {
		_ = os.RemoveAll(c.Dir)
	}
	if c.unlock != nil {
		c.unlock()
		c.unlock = nil
	}
}

// hostPathRoot is where the controller-manager's hostPath provisioner
// makes the folders of the volumes it provisions.
const hostPathRoot = "/tmp/hostpath_pv/"

// hostPathVolumes lists the folders of this cluster's provisioned
// volumes, to remove when it stops (the provisioner would, on a claim's
// deletion, but the cluster stops first).
func (c *Cluster) hostPathVolumes() []string {
	var pvs struct {
		Items []struct {
			Spec struct{ HostPath *struct{ Path string } }
		}
	}
	if c.getJSON("/api/v1/persistentvolumes", &pvs) != nil {
		return nil
	}
	var out []string
	for _, pv := range pvs.Items {
		if h := pv.Spec.HostPath; h != nil && strings.HasPrefix(filepath.Clean(h.Path)+"/", hostPathRoot) && filepath.Clean(h.Path)+"/" != hostPathRoot {
			out = append(out, filepath.Clean(h.Path))
		}
	}
	return out
}

// deletePods deletes every pod at once and waits (30 s at most) for the
// kubelet to have torn them down.
func (c *Cluster) deletePods() {
	list := func() []struct{ Namespace, Name string } {
		var pods struct {
			Items []struct {
				Metadata struct{ Namespace, Name string }
			}
		}
		if c.getJSON("/api/v1/pods", &pods) != nil {
			return nil
		}
		var out []struct{ Namespace, Name string }
		for _, p := range pods.Items {
			out = append(out, p.Metadata)
		}
		return out
	}
	for _, p := range list() {
		req, _ := http.NewRequest(http.MethodDelete, c.Server+"/api/v1/namespaces/"+p.Namespace+"/pods/"+p.Name+"?gracePeriodSeconds=1", nil)
		if resp, err := c.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && len(list()) > 0; {
		time.Sleep(250 * time.Millisecond)
	}
}

// waitNetworks waits (up to limit) for the kubelet to tear down the
// networks of pods the API no longer holds: a pod deleted at once (grace
// 0) leaves its sandbox to the kubelet's housekeeping, every 2 s. The
// cluster's are the cni- network namespaces made since it started (one
// cluster runs at a time).
func (c *Cluster) waitNetworks(limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		left := false
		entries, _ := os.ReadDir("/run/netns")
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "cni-") && !c.netns[e.Name()] {
				left = true
				break
			}
		}
		if !left {
			return
		}
	}
}

func (c *Cluster) proc(name string) *proc {
	for _, p := range c.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

func (c *Cluster) alive(name string) bool {
	p := c.proc(name)
	return p != nil && p.cmd.ProcessState == nil && syscall.Kill(p.cmd.Process.Pid, 0) == nil
}

// kill stops a program: TERM to its process group, KILL after grace.
func (c *Cluster) kill(name string, grace time.Duration) {
	p := c.proc(name)
	if p == nil || p.cmd.ProcessState != nil {
		return
	}
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// unmount unmounts what is mounted under the cluster's folder, deepest
// first (the kubelet's volumes, containerd's snapshots).
func (c *Cluster) unmount() {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return
	}
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && strings.HasPrefix(fields[1], c.Dir+"/") {
			points = append(points, fields[1])
		}
	}
	f.Close()
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	for _, m := range points {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
}

func pidOf(cmdline string) int {
	n := 0
	for _, r := range filepath.Base(filepath.Dir(cmdline)) {
		if r < '0' || r > '9' {
			return 0
		}
		n = n*10 + int(r-'0')
	}
	return n
}
