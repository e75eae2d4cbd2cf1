// Package k8stest runs a real single-node Kubernetes for tests, as
// s3test runs MinIO: etcd, a private containerd (with runc and the CNI
// bridge, from Debian's packages), and the control plane and kubelet built
// from the Go module proxy (Build; kept beside Go's build cache). Nothing
// is pulled: the pause and busybox images are made here and imported.
// The cluster lives in a temporary folder; Stop removes every process,
// mount, network link and cgroup it made. One cluster runs at a time on a
// machine (its pods' network is fixed).
//
// It needs root (the kubelet and containerd manage mounts, namespaces and
// cgroups), Docker (to make the images) and the Debian packages etcd-server,
// containerd, runc, containernetworking-plugins and busybox-static; a test
// without them skips saying what is missing, and fails under CI=true.
package k8stest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentsandbox/sandbox/internal/flock"
)

// TB is the part of testing.TB Start uses.
type TB interface {
	Helper()
	Logf(string, ...any)
	Skip(...any)
	Fatalf(string, ...any)
	Cleanup(func())
}

// NodeName is the cluster's one node.
const NodeName = "sandbox-k8stest"

// bridge is the pods' network link on the host.
const bridge = "sbxk8s0"

// Cluster is a running cluster.
type Cluster struct {
	// Kubeconfig is the admin's kubeconfig (system:masters).
	Kubeconfig string
	// Dir holds the cluster's state, logs and certificates.
	Dir string
	// Server is the API server's URL.
	Server string

	pki    *pki
	sock   string          // containerd's
	netns  map[string]bool // the network namespaces before it started
	procs  []*proc
	unlock func()
	client *http.Client
}

type proc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
}

// Missing says what this machine lacks to run a cluster, or "".
func Missing() string {
	if os.Geteuid() != 0 {
		return "a Kubernetes cluster needs root (the kubelet and containerd manage mounts, namespaces and cgroups)"
	}
	var lack []string
	for _, c := range []string{"etcd", "containerd", "runc", "ctr", "docker", "ip"} {
		if _, err := exec.LookPath(c); err != nil {
			lack = append(lack, c)
		}
	}
	for _, p := range []string{"/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback", "/bin/busybox"} {
		if !isExec(p) {
			lack = append(lack, p)
		}
	}
	if len(lack) > 0 {
		return "no " + strings.Join(lack, ", ") + " here (apt-get install etcd-server containerd runc containernetworking-plugins busybox-static, and Docker)"
	}
	return ""
}

func onCI() bool {
	v, _ := strconv.ParseBool(os.Getenv("CI"))
	return v
}

// Prepare builds what the cache lacks: the programs (Build) and the two
// images. .ci/run calls it (internal/k8stest/prepare) before the tests,
// so that the first test does not spend its time building.
func Prepare(ctx context.Context, log io.Writer) error {
	if err := Build(ctx, log); err != nil {
		return err
	}
	return buildImages(ctx, log)
}

// Start starts a cluster for t, building what the cache lacks, and stops
// it when t ends. A machine that cannot run one skips t (fails it under
// CI=true).
func Start(t TB) *Cluster {
	t.Helper()
	if m := Missing(); m != "" {
		if onCI() {
			t.Fatalf("k8stest: %s", m)
		}
		t.Skip("k8stest: " + m)
	}
	// Building the cluster inside go test's default 10 minutes is bound to
	// time out with a goroutine dump; say instead what builds it.
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok && !Ready() {
		if end, ok := d.Deadline(); ok && time.Until(end) < buildTime {
			m := fmt.Sprintf("k8stest: Kubernetes %s is not built yet (%s), and building it takes up to %v once, more than the %v left before this test's deadline: run go run ./internal/k8stest/prepare first, or go test -timeout 60m",
				Version, CacheDir(), buildTime, time.Until(end).Round(time.Second))
			if onCI() {
				t.Fatalf("%s", m)
			}
			t.Skip(m)
		}
	}
	var log bytes.Buffer
	ctx := context.Background()
	if err := Prepare(ctx, &log); err != nil {
		t.Fatalf("k8stest: %v\n%s", err, tail(log.String(), 40))
	}
	began := time.Now()
	c, err := start(ctx)
	if err != nil {
		if c != nil {
			c.Stop()
		}
		t.Fatalf("k8stest: %v", err)
	}
	t.Logf("k8stest: Kubernetes %s up in %s (%s)", Version, time.Since(began).Round(100*time.Millisecond), c.Dir)
	t.Cleanup(c.Stop)
	return c
}

func start(ctx context.Context) (*Cluster, error) {
	unlock, err := flock.Lock(filepath.Join(CacheDir(), "cluster.lock"))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("/var/tmp", "k8stest-")
	if err != nil {
		unlock()
		return nil, err
	}
	c := &Cluster{Dir: dir, unlock: unlock, netns: map[string]bool{}}
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			c.netns[e.Name()] = true
		}
	}
	nodeIP, err := hostIP()
	if err != nil {
		return c, err
	}
	ports, err := freePorts(7)
	if err != nil {
		return c, err
	}
	etcdClient, etcdPeer, apiPort, kubeletPort, kubeletHealthz, cmPort, schedPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6]
	if c.pki, err = newPKI(filepath.Join(dir, "pki"), NodeName, nodeIP); err != nil {
		return c, err
	}
	c.Server = fmt.Sprintf("https://%s", net.JoinHostPort(nodeIP.String(), strconv.Itoa(apiPort)))
	kc := map[string]string{}
	for _, u := range []string{"admin", "controller-manager", "scheduler", "kubelet"} {
		if kc[u], err = c.pki.kubeconfig(u, c.Server); err != nil {
			return c, err
		}
	}
	c.Kubeconfig = kc["admin"]
	if c.client, err = c.pki.client("admin"); err != nil {
		return c, err
	}
	run := filepath.Join(dir, "run")
	for _, d := range []string{"logs", "run/containerd", "run/kubelet", "run/pod-logs", "run/cni-ipam", "conf/cni"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return c, err
		}
	}
	bin := filepath.Join(CacheDir(), "bin")
	p := c.pki.path

	// etcd
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	if err := c.spawn("etcd", "etcd", "--name", "k8stest", "--data-dir", filepath.Join(run, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "k8stest="+peerURL, "--listen-metrics-urls", ""); err != nil {
		return c, err
	}
	if err := c.wait(ctx, "etcd", func() error { return httpOK(http.DefaultClient, etcdURL+"/health") }); err != nil {
		return c, err
	}

	// containerd, private: its own socket, root and state, none of Docker's.
	sock := filepath.Join(run, "containerd", "containerd.sock")
	if err := c.writeContainerdConfig(sock); err != nil {
		return c, err
	}
	if err := c.spawn("containerd", "containerd", "--config", filepath.Join(dir, "conf", "containerd.toml")); err != nil {
		return c, err
	}
	c.sock = sock
	ctr := func(args ...string) *exec.Cmd { return c.ctr(ctx, args...) }
	if err := c.wait(ctx, "containerd", func() error { return ctr("version").Run() }); err != nil {
		return c, err
	}
	for _, img := range []string{"pause.tar", "busybox.tar"} {
		if out, err := ctr("images", "import", filepath.Join(CacheDir(), "images", img)).CombinedOutput(); err != nil {
			return c, fmt.Errorf("importing %s: %v: %s", img, err, out)
		}
	}

	// The control plane.
	if err := c.spawn("kube-apiserver", filepath.Join(bin, "kube-apiserver"),
		"--advertise-address="+nodeIP.String(), "--bind-address=0.0.0.0", "--secure-port="+strconv.Itoa(apiPort),
		"--etcd-servers="+etcdURL, "--service-cluster-ip-range=10.96.0.0/16",
		"--client-ca-file="+p("ca.crt"), "--tls-cert-file="+p("apiserver.crt"), "--tls-private-key-file="+p("apiserver.key"),
		"--kubelet-client-certificate="+p("apiserver-kubelet-client.crt"), "--kubelet-client-key="+p("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p("sa.pub"), "--service-account-signing-key-file="+p("sa.key"),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true", "--profiling=false"); err != nil {
		return c, err
	}
	if err := c.wait(ctx, "kube-apiserver", func() error { return httpOK(c.client, c.Server+"/readyz") }); err != nil {
		return c, err
	}
	if err := c.spawn("kube-controller-manager", filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig="+kc["controller-manager"], "--authentication-kubeconfig="+kc["controller-manager"], "--authorization-kubeconfig="+kc["controller-manager"],
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(cmPort), "--leader-elect=false",
		"--service-account-private-key-file="+p("sa.key"), "--root-ca-file="+p("ca.crt"), "--use-service-account-credentials=true",
		"--cluster-signing-cert-file="+p("ca.crt"), "--cluster-signing-key-file="+p("ca.key"),
		"--enable-hostpath-provisioner=true", "--profiling=false"); err != nil {
		return c, err
	}
	if err := c.spawn("kube-scheduler", filepath.Join(bin, "kube-scheduler"),
		"--kubeconfig="+kc["scheduler"], "--authentication-kubeconfig="+kc["scheduler"], "--authorization-kubeconfig="+kc["scheduler"],
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(schedPort), "--leader-elect=false", "--profiling=false"); err != nil {
		return c, err
	}

	// The kubelet.
	if err := c.writeKubeletConfig(sock, nodeIP, kubeletPort, kubeletHealthz); err != nil {
		return c, err
	}
	if err := c.spawn("kubelet", filepath.Join(bin, "kubelet"), "--config="+filepath.Join(dir, "conf", "kubelet.yaml"),
		"--kubeconfig="+kc["kubelet"], "--hostname-override="+NodeName, "--node-ip="+nodeIP.String(), "--root-dir="+filepath.Join(run, "kubelet")); err != nil {
		return c, err
	}
	if err := c.wait(ctx, "the node", c.nodeReady); err != nil {
		return c, err
	}
	if err := c.wait(ctx, "the default service account", func() error {
		return httpOK(c.client, c.Server+"/api/v1/namespaces/default/serviceaccounts/default")
	}); err != nil {
		return c, err
	}
	// A default StorageClass on the controller-manager's hostPath
	// provisioner: a PersistentVolumeClaim binds without a CSI driver.
	sc := `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"standard",` +
		`"annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},` +
		`"provisioner":"kubernetes.io/host-path","reclaimPolicy":"Delete","volumeBindingMode":"Immediate"}`
	if err := c.post("/apis/storage.k8s.io/v1/storageclasses", sc); err != nil {
		return c, err
	}
	return c, nil
}

// spawn starts a program of the cluster, in its own process group, its
// output in logs/<name>.log.
// ctr runs containerd's client on the cluster's containerd, in the
// namespace the kubelet uses.
func (c *Cluster) ctr(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ctr", append([]string{"-a", c.sock, "-n", "k8s.io"}, args...)...)
}

func (c *Cluster) spawn(name, path string, args ...string) error {
	log, err := os.Create(filepath.Join(c.Dir, "logs", name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	c.procs = append(c.procs, &proc{name: name, cmd: cmd, log: log})
	return nil
}

// wait polls ready until it succeeds, the program that was started last
// exits, or two minutes pass.
func (c *Cluster) wait(ctx context.Context, what string, ready func() error) error {
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		if last = ready(); last == nil {
			return nil
		}
		for _, p := range c.procs {
			if p.cmd.ProcessState != nil || syscall.Kill(p.cmd.Process.Pid, 0) != nil {
				return fmt.Errorf("%s exited while waiting for %s:\n%s", p.name, what, c.Log(p.name, 30))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready after 2 minutes: %v", what, last)
}

// Log is the last n lines of a program's log (etcd, containerd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kubelet).
func (c *Cluster) Log(name string, n int) string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, "logs", name+".log"))
	return tail(string(data), n)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (c *Cluster) nodeReady() error {
	var node struct {
		Status struct {
			Conditions []struct{ Type, Status string }
		}
	}
	if err := c.getJSON("/api/v1/nodes/"+NodeName, &node); err != nil {
		return err
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == "Ready" && cond.Status == "True" {
			return nil
		}
	}
	return errors.New("the node is not Ready")
}

// getJSON reads the API object at path into v.
func (c *Cluster) getJSON(path string, v any) error {
	resp, err := c.client.Get(c.Server + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (c *Cluster) post(path, body string) error {
	resp, err := c.client.Post(c.Server+path, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusConflict {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, msg)
	}
	return nil
}

func httpOK(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// client is an HTTPS client authenticated as user (a certificate's file
// name) that trusts the cluster's authority.
func (p *pki) client(user string) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(p.path(user+".crt"), p.path(user+".key"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

// hostIP is the address the host reaches others from (the default
// route's): the API server and the kubelet listen there, so that pods
// reach them too. No packet is sent.
func hostIP() (net.IP, error) {
	conn, err := net.Dial("udp", "192.0.2.1:9")
	if err != nil {
		return nil, fmt.Errorf("no route out of this machine to take an address from: %w", err)
	}
	defer conn.Close()
	return conn.LocalAddr().(*net.UDPAddr).IP, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
