package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/k8stest"
	"github.com/agentsandbox/sandbox/internal/s3test"
	recov "github.com/agentsandbox/sandbox/recover"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// kubeImage is the fake agent's image in the test cluster, tagged for this
// test process (docker import makes it, beside other tests' images).
var kubeImage = fmt.Sprintf("localhost/sandbox-fakeagent:test-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)

// kubeEnv starts a cluster with the fake agent's image (and busybox), and
// a hermetic harness environment whose kubeconfig is the cluster's admin's;
// it returns a client of the cluster too, for the test's own checks.
func kubeEnv(t *testing.T) (*k8stest.Cluster, *harnessEnv, kubernetes.Interface) {
	c := k8stest.Start(t)
	bin, err := os.ReadFile(filepath.Join(buildFakeAgent(t), "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(kubeImage, map[string][]byte{"bin/claude": bin}); err != nil {
		t.Fatal(err)
	}
	h := newKubeHarness(t, c)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, h, cs
}

// TestHarnessKubernetes runs sessions on a real single-node cluster: the
// harness scenario every runtime passes (the agent's files come back to
// the project, the transcript to the store, resume, recover --session,
// snapshot, rm, restore, exit 3), then what a cluster adds: the exit kept
// on the session's volume and in ps, an OOM kill recorded after its pod is
// gone, stop with a grace period, a pod deleted behind the harness's back,
// exec, labels and owner references, snapshot to MinIO and restore onto a
// new volume, gc, and the Role the docs give.
func TestHarnessKubernetes(t *testing.T) {
	netns := map[string]bool{}
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			netns[e.Name()] = true
		}
	}
	c, h, cs := kubeEnv(t)
	ctx := context.Background()
	harnessBasics(t, h)

	// The issue's own example: exit 3, in ps, the volume keeps the note,
	// and a resumed run sees it.
	out, errOut, code := h.sandbox(nil, "run", "--name", "note", "--runtime", "kubernetes", "--image", kubeImage, "--",
		"sh", "-c", `echo hi > ~/note; claude -p "remember AURORA-42" >/dev/null; exit 3`)
	if code != 3 {
		t.Fatalf("run: exit %d, want 3\n%s%s", code, out, errOut)
	}
	if st := psState(t, h, "note"); st.ExitCode != 3 || st.State != "exited" {
		t.Errorf("ps says %+v, want exited 3", st)
	}
	out, errOut, code = h.sandbox(nil, "run", "--name", "note", "--resume", "--", "sh", "-c", `cat ~/note; echo "resume=$SANDBOX_RESUME_ID"`)
	if code != 0 {
		t.Fatalf("run --resume: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "the resumed run", out, "hi\n")
	mustContain(t, "the resumed run", out, "resume="+h.session("note").AgentSessionID)

	// The project's changes come back through the journaled apply: a
	// deletion, a new file, bytes that are not text; undo reverses them.
	for n, text := range map[string]string{"del.txt": "delete me\n", "keep.txt": "one\n"} {
		if err := os.WriteFile(filepath.Join(h.project, n), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code = h.sandbox(nil, "run", "--name", "edits", "--runtime", "kubernetes", "--image", kubeImage, "--",
		"sh", "-c", `rm del.txt && echo two >> keep.txt && echo made > made.txt && printf '\000\377\r\n' > bin.dat`)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.project, "del.txt")); !os.IsNotExist(err) {
		t.Errorf("the agent's deletion did not come back: %v", err)
	}
	if got := string(readFile(filepath.Join(h.project, "keep.txt"))); got != "one\ntwo\n" {
		t.Errorf("keep.txt = %q", got)
	}
	if got := string(readFile(filepath.Join(h.project, "made.txt"))); got != "made\n" {
		t.Errorf("made.txt = %q", got)
	}
	if got := readFile(filepath.Join(h.project, "bin.dat")); string(got) != "\x00\xff\r\n" {
		t.Errorf("bin.dat = %q", got)
	}
	if out, errOut, code := h.sandbox(nil, "undo", "--dest", h.project); code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, out, errOut)
	}
	if got := string(readFile(filepath.Join(h.project, "del.txt"))) + string(readFile(filepath.Join(h.project, "keep.txt"))); got != "delete me\none\n" {
		t.Errorf("after undo, del.txt and keep.txt hold %q", got)
	}
	for _, n := range []string{"made.txt", "bin.dat"} {
		if _, err := os.Stat(filepath.Join(h.project, n)); !os.IsNotExist(err) {
			t.Errorf("after undo, %s is still there", n)
		}
	}

	// A file changed on the host while the agent ran keeps the host's
	// edit; the agent's version is written beside it.
	if err := os.WriteFile(filepath.Join(h.project, "conf.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, _ := h.start("cf", "--write", "conf.txt=from the agent", "--sleep", "120s")
	if err := os.WriteFile(filepath.Join(h.project, "conf.txt"), []byte("host edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := h.sandbox(nil, "stop", "cf", "--grace", "2s"); code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", code, out, errOut)
	}
	_ = cmd.Wait()
	if got := string(readFile(filepath.Join(h.project, "conf.txt"))); got != "host edit\n" {
		t.Errorf("the host's edit was not kept: %q", got)
	}
	if got := string(readFile(filepath.Join(h.project, "conf.txt.recovered"))); got != "from the agent\n" {
		t.Errorf("the agent's version beside it: %q", got)
	}

	// Two sessions at once, one whose name is not a DNS label.
	var runs [2]*exec.Cmd
	var outs [2]bytes.Buffer
	for i, n := range []string{"par", "Par_Two.2"} {
		runs[i] = h.command(nil, "run", "--name", n, "--runtime", "kubernetes", "--image", kubeImage, "--", "claude", "-p", "parallel "+n, "--write", n+".txt="+n)
		runs[i].Stdout, runs[i].Stderr = &outs[i], &outs[i]
		if err := runs[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range []string{"par", "Par_Two.2"} {
		if err := runs[i].Wait(); err != nil {
			t.Errorf("parallel run %s: %v\n%s", n, err, outs[i].String())
		}
		if got := string(readFile(filepath.Join(h.project, n+".txt"))); got != n+"\n" {
			t.Errorf("parallel run %s wrote %q; it said:\n%s", n, got, outs[i].String())
		}
	}
	if _, err := cs.NetworkingV1().NetworkPolicies("default").Get(ctx, "sandbox-par", metav1.GetOptions{}); err != nil {
		t.Errorf("--network none made no NetworkPolicy: %v", err)
	}

	// The connection to the API server cut while the agent prints (as an
	// API server's restart or a dropped network cuts it): the output is
	// read on from its last line, and output.log has every line once.
	px := newCuttingProxy(t, cfgServer(t, c.Kubeconfig))
	cutRun := h.command([]string{"KUBECONFIG=" + px.kubeconfig(t, c.Kubeconfig)}, "run", "--name", "cut", "--runtime", "kubernetes", "--image", kubeImage, "--",
		"sh", "-c", `i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo "line $i"; sleep 0.2; done; printf 'no newline'`)
	var cutOut bytes.Buffer
	cutRun.Stdout, cutRun.Stderr = &cutOut, &cutOut
	if err := cutRun.Start(); err != nil {
		t.Fatal(err)
	}
	cutLog := filepath.Join(h.root, "sessions", "cut", "logs", "output.log")
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(string(readFile(cutLog)), "line 5\n"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run's output never reached line 5:\n%s", cutOut.String())
		}
	}
	if n := px.cut(); n == 0 {
		t.Fatal("the proxy had no connection to cut")
	}
	if err := cutRun.Wait(); err != nil {
		t.Fatalf("the run whose connection was cut: %v\n%s", err, cutOut.String())
	}
	var wantLog strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&wantLog, "line %d\n", i)
	}
	wantLog.WriteString("no newline")
	if got := string(readFile(cutLog)); got != wantLog.String() {
		t.Errorf("output.log after a cut stream is not every line once:\n%q\nthe run said:\n%s", got, cutOut.String())
	}

	// OOM: recorded as OOMKilled in the runtime log and in ps, with the
	// pod already gone.
	_, _, code = h.sandbox(nil, "run", "--name", "oom", "--runtime", "kubernetes", "--image", kubeImage, "--memory", "64m", "--", "claude", "--oom")
	if code != 137 {
		t.Errorf("OOM run exited %d, want 137", code)
	}
	ev := h.lastEvent("oom", "sandbox_stopped")
	if ev["oom"] != true || ev["state"] != "oom" || ev["reason"] != "OOMKilled" || ev["node"] != k8stest.NodeName {
		t.Errorf("OOM recorded as %v", ev)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		_, err := cs.CoreV1().Pods("default").Get(ctx, fmt.Sprint(ev["container"]), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the OOM-killed pod %s is still there: %v", ev["container"], err)
		}
	}
	if st := psState(t, h, "oom"); st.State != "oom" || st.ExitCode != 137 {
		t.Errorf("ps says %+v after the OOM kill, with its pod gone", st)
	}

	// What a user sees (go test -v shows it).
	out, _, _ = h.sandbox(nil, "ps", "-A")
	t.Logf("sandbox ps -A:\n%s", out)
	out, errOut, code = h.sandbox(nil, "ps", "-A", "--json")
	if code != 0 {
		t.Fatalf("ps -A: exit %d\n%s", code, errOut)
	}
	var psa struct {
		Cluster []struct{ Namespace, Session, State, Reason, Host string } `json:"cluster"`
	}
	if err := json.Unmarshal([]byte(out), &psa); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range psa.Cluster {
		if r.Session == "oom" {
			found = r.Namespace == "default" && r.State == "oom" && r.Reason == "OOMKilled" && r.Host != ""
		}
	}
	if !found {
		t.Errorf("ps -A does not show the OOM kill:\n%s", out)
	}

	// kill -9 of the harness while its pod runs: ps finds the session
	// dropped, stop stops the pod and records its end, and the next run
	// first brings back what the dropped one wrote in the project.
	cmd, _ = h.start("hk", "--write", "hk.txt=from the pod", "--sleep", "120s")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if st := psState(t, h, "hk"); st.State != "dropped" {
		t.Errorf("after kill -9 of the harness, ps says %s", st.State)
	}
	if ev := h.lastEvent("hk", "session_drop"); ev["container_state"] != "running" {
		t.Errorf("session_drop: %v", ev)
	}
	if out, errOut, code := h.sandbox(nil, "stop", "hk", "--grace", "2s"); code != 0 {
		t.Fatalf("stop of a dropped session: exit %d\n%s%s", code, out, errOut)
	}
	if ev := h.lastEvent("hk", "sandbox_stopped"); ev["signal"] != "SIGTERM" {
		t.Errorf("the stop of a dropped session recorded as %v", ev)
	}
	if _, err := os.Stat(filepath.Join(h.project, "hk.txt")); err == nil {
		t.Fatalf("hk.txt is in the project before any run brought it back")
	}
	out, errOut, code = h.run("hk", "-p", "again")
	if code != 0 {
		t.Fatalf("the run after a drop: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "the run after a drop", errOut, "copying it back now")
	if got := string(readFile(filepath.Join(h.project, "hk.txt"))); got != "from the pod\n" {
		t.Errorf("the dropped run's file: %q", got)
	}

	// stop: a graceful delete; the agent's TERM exit is recorded.
	cmd, _ = h.start("st", "--sleep", "120s")
	if out, errOut, code := h.sandbox(nil, "exec", "st", "--", "sh", "-c", "echo $HOME; pwd; ls ~/.claude"); code != 0 || !strings.Contains(out, "/home/sandbox\n/workspace\nprojects") {
		t.Errorf("exec: exit %d\n%s%s", code, out, errOut)
	}
	began := time.Now()
	if out, errOut, code := h.sandbox(nil, "stop", "st", "--grace", "5s"); code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", code, out, errOut)
	}
	if code := exitCode(cmd.Wait()); code != 143 {
		t.Errorf("stopped run exited %d, want 143", code)
	}
	if ev := h.lastEvent("st", "sandbox_stopped"); ev["signal"] != "SIGTERM" || ev["state"] != "killed" {
		t.Errorf("stop recorded as %v", ev)
	}
	t.Logf("stop took %s", time.Since(began).Round(10*time.Millisecond))

	// ^C of the run: TERM through a graceful delete, recorded as an
	// interrupt.
	cmd, _ = h.start("int", "--sleep", "120s")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 130 && code != 143 {
		t.Errorf("an interrupted run exited %d", code)
	}
	if ev := h.lastEvent("int", "sandbox_stopped"); ev["interrupted"] != true || ev["signal"] != "SIGTERM" {
		t.Errorf("^C recorded as %v", ev)
	}

	// An image the node cannot get: a clear error and exit 125, not a
	// wait without end; nothing is kept.
	_, errOut, code = h.sandbox(nil, "run", "--name", "noimage", "--runtime", "kubernetes", "--image", "localhost/not-there:1", "--", "true")
	if code != 125 || !strings.Contains(errOut, "ErrImagePull") && !strings.Contains(errOut, "ImagePullBackOff") {
		t.Errorf("a run of a missing image: exit %d\n%s", code, errOut)
	}
	if cms, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: "agentsandbox.io/session=noimage"}); err != nil || len(cms.Items) != 0 {
		t.Errorf("the session that never ran left %d configmaps (%v)", len(cms.Items), err)
	}

	// A pod deleted by someone else: a drop, with the evidence.
	cmd, s := h.start("gone", "--sleep", "120s")
	if err := cs.CoreV1().Pods("default").Delete(ctx, s.Container, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	ev = h.lastEvent("gone", "session_drop")
	mustContain(t, "the drop of a deleted pod", fmt.Sprint(ev["error"]), "deleted by someone other than sandbox")
	mustContain(t, "the drop's events", fmt.Sprint(ev["events"]), "Killing")
	if h.session("gone").State != harness.StateDropped {
		t.Errorf("a deleted pod's session is %s", h.session("gone").State)
	}

	// Everything is labelled, and the session's ConfigMap owns the rest.
	// (An io pod goes with a second's grace.)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=sandbox"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, p := range pods.Items {
				t.Errorf("pod %s is left after the runs (%s, deleted: %v)", p.Name, p.Status.Phase, p.DeletionTimestamp != nil)
			}
			break
		}
	}
	pvcs, err := cs.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=sandbox"})
	if err != nil || len(pvcs.Items) == 0 {
		t.Fatalf("no volumes by label: %v", err)
	}
	for _, p := range pvcs.Items {
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "ConfigMap" || p.OwnerReferences[0].Name != p.Name {
			t.Errorf("volume %s is owned by %v", p.Name, p.OwnerReferences)
		}
	}

	// Snapshot into MinIO; another machine restores it and resumes on a
	// new volume, which its HOME seeds.
	srv := s3test.Start(t)
	if err := srv.MakeBucket(ctx, "snaps"); err != nil {
		t.Fatal(err)
	}
	aws := s3Env(t, srv)
	h.env = append(h.env, aws...)
	const url = "s3://snaps/k8s/note.tar.gz"
	if out, errOut, code := h.sandbox(nil, "snapshot", "note", "-o", url); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s%s", code, out, errOut)
	}
	two := newKubeHarness(t, c)
	two.env = append(two.env, aws...)
	two.restoreAndResume(t, url, "note2", h.session("note").AgentSessionID, "what did I ask you to remember?")
	out, errOut, code = two.sandbox(nil, "run", "--name", "note2", "--", "cat", "/home/sandbox/note")
	if code != 0 || out != "hi\n" {
		t.Errorf("the restored volume: exit %d, %q\n%s", code, out, errOut)
	}

	// gc removes idle sessions and their objects on the cluster.
	if out, errOut, code := h.sandbox(nil, "gc", "--idle", "0", "--ttl", "1ms"); code != 0 {
		t.Fatalf("gc: exit %d\n%s%s", code, out, errOut)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		pvcs, _ := cs.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{LabelSelector: "agentsandbox.io/session=oom"})
		cms, _ := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: "agentsandbox.io/session=oom"})
		if len(pvcs.Items) == 0 && len(cms.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gc left %d volumes and %d configmaps of session oom", len(pvcs.Items), len(cms.Items))
		}
		time.Sleep(250 * time.Millisecond)
	}

	// A user without the Role is told which permission, context and
	// namespace; with the Role the docs give, the run works.
	kc, err := c.UserKubeconfig("alice")
	if err != nil {
		t.Fatal(err)
	}
	alice := newKubeHarness(t, c)
	alice.env = append(alice.env, "KUBECONFIG="+kc)
	_, errOut, code = alice.run("a1", "-p", "hello")
	if code == 0 || !strings.Contains(errOut, `kubernetes context "sandbox-k8stest", namespace "default": not allowed to create configmaps`) {
		t.Errorf("a run without rights: exit %d\n%s", code, errOut)
	}
	bindRole(t, cs, "alice")
	if out, errOut, code := alice.run("a2", "-p", "hello", "--write", "a.txt=from alice"); code != 0 {
		t.Errorf("a run with the documented Role: exit %d\n%s%s", code, out, errOut)
	}

	// The cluster stops with no pod's network left behind, though the
	// last run's pods went a moment ago.
	c.Stop()
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if !netns[e.Name()] {
			t.Errorf("/run/netns/%s is left after the cluster stopped", e.Name())
		}
	}
}

// newKubeHarness is another machine's harness environment on cluster c.
func newKubeHarness(t *testing.T, c *k8stest.Cluster) *harnessEnv {
	h := newHarnessEnv(t, "--runtime", "kubernetes", "--image", kubeImage)
	h.env = append(h.env, "KUBECONFIG="+c.Kubeconfig)
	return h
}

// bindRole creates the Role of docs/kubernetes/role.yaml in the default
// namespace and binds it to user.
func bindRole(t *testing.T, cs kubernetes.Interface, user string) {
	t.Helper()
	var role rbacv1.Role
	if err := yaml.Unmarshal(readFile("../docs/kubernetes/role.yaml"), &role); err != nil || len(role.Rules) == 0 {
		t.Fatalf("docs/kubernetes/role.yaml: %v", err)
	}
	ctx := context.Background()
	if _, err := cs.RbacV1().Roles("default").Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "sandbox-" + user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
	if _, err := cs.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// cuttingProxy forwards TCP connections to an address and can cut them
// all at once, as an API server's restart or a dropped network does.
type cuttingProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCuttingProxy(t *testing.T, target string) *cuttingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{ln: ln}
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	return p
}

// cut closes every connection open now and says how many there were.
func (p *cuttingProxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	n := len(p.conns) / 2
	p.conns = nil
	return n
}

// kubeconfig writes a copy of kubeconfig whose server is the proxy.
func (p *cuttingProxy) kubeconfig(t *testing.T, kubeconfig string) string {
	t.Helper()
	text := strings.Replace(string(readFile(kubeconfig)), "https://"+cfgServer(t, kubeconfig), "https://"+p.ln.Addr().String(), 1)
	path := filepath.Join(t.TempDir(), "proxied.kubeconfig")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cfgServer is the host:port of a kubeconfig's API server.
func cfgServer(t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestApplyProjectWaitsForTheLock: a runtime's copy-back onto a project
// another sandbox is writing to (two sessions on one project ending at
// once) waits for it, instead of leaving the agent's work on the volume.
func TestApplyProjectWaitsForTheLock(t *testing.T) {
	env := hermetic(t)
	dir := t.TempDir()
	m, project := filepath.Join(dir, "changes.json"), filepath.Join(dir, "proj")
	if _, stderr, code := runApp(t, env, "export", "-t", samplePath, "-o", m); code != ExitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	a := newAppIn(env, nil, io.Discard, &errb)
	unlock, err := recov.LockDests(a.stateRoot(), []string{project})
	if err != nil {
		t.Fatal(err)
	}
	held := 700 * time.Millisecond
	time.AfterFunc(held, unlock)
	began := time.Now()
	said, err := a.applyProject(context.Background(), m, project)
	if err != nil {
		t.Fatalf("the apply did not wait for the lock: %v", err)
	}
	if waited := time.Since(began); waited < held {
		t.Errorf("applied after %s, while the lock was held for %s", waited, held)
	}
	mustContain(t, "what the wait said", errb.String(), "is being written by another sandbox")
	mustContain(t, "what the apply said", said, "sandbox undo --dest")
	if entries, _ := os.ReadDir(project); len(entries) < 2 {
		t.Errorf("the project holds %d entries after the apply", len(entries))
	}

	// Cancelled while it waits: the lock's error, nothing written.
	unlock, err = recov.LockDests(a.stateRoot(), []string{project})
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var busy *recov.BusyError
	if _, err := a.applyProject(ctx, m, project); !errors.As(err, &busy) {
		t.Errorf("a cancelled wait: %v, want the lock's error", err)
	}
}
