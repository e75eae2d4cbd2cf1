package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/osenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Inspect reads a session's last pod: its end, or that it still runs.
func (r *Runtime) Inspect(ctx context.Context, sess *harness.Session) (harness.Result, bool, bool) {
	if sess.Container == "" {
		return harness.Result{}, false, false
	}
	k, err := r.open(sess)
	if err != nil {
		return harness.Result{}, false, false
	}
	pod, err := k.cs.CoreV1().Pods(k.namespace).Get(ctx, sess.Container, metav1.GetOptions{})
	if err != nil {
		return harness.Result{}, false, false
	}
	if t := ended(pod); t != nil {
		return k.result(ctx, pod, t), false, true
	}
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return k.result(ctx, pod, nil), false, true
	}
	return harness.Result{Container: pod.Name, Node: pod.Spec.NodeName}, true, true
}

// Stop deletes a session's pod gracefully: TERM, then KILL after grace.
// The finalizer keeps the pod until its end is recorded.
func (r *Runtime) Stop(ctx context.Context, sess *harness.Session, grace time.Duration) error {
	if sess.Container == "" {
		return fmt.Errorf("session %s has no pod", sess.ID)
	}
	k, err := r.open(sess)
	if err != nil {
		return err
	}
	k.stop(ctx, sess.Container, grace)
	return nil
}

// Remove lets a run's pod go once its end is recorded, and the io pod.
func (r *Runtime) Remove(ctx context.Context, sess *harness.Session) error {
	k, err := r.open(sess)
	if err != nil {
		return err
	}
	k.dropIO(ioPodName(sess))
	if sess.Container == "" {
		return nil
	}
	return k.release(ctx, sess.Container)
}

// Purge deletes everything of a session on its cluster: its pods (their
// finalizers removed), and its ConfigMap, which takes the volume and the
// network policy with it.
func (r *Runtime) Purge(ctx context.Context, sess *harness.Session) error {
	k, err := r.open(sess)
	if err != nil {
		return err
	}
	pods, err := k.cs.CoreV1().Pods(k.namespace).List(ctx, metav1.ListOptions{LabelSelector: labelSession + "=" + labelValue(sess.ID)})
	if err != nil {
		return k.denied(err, "list", "pods")
	}
	for _, p := range pods.Items {
		if p.Annotations[annSession] != sess.ID {
			continue
		}
		if err := k.release(ctx, p.Name); err != nil {
			return err
		}
	}
	name := objectName(sess.ID)
	bg := metav1.DeletePropagationBackground
	err = k.cs.CoreV1().ConfigMaps(k.namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return k.denied(err, "delete", "configmaps")
	}
	// No owner (made by hand, or half made): its parts, one by one.
	if err := k.cs.CoreV1().PersistentVolumeClaims(k.namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return k.denied(err, "delete", "persistentvolumeclaims")
	}
	if err := k.cs.NetworkingV1().NetworkPolicies(k.namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return k.denied(err, "delete", "networkpolicies")
	}
	return nil
}

// Exec runs a command in a running session's pod, beside the agent, with
// the agent's HOME and working folder.
func (r *Runtime) Exec(ctx context.Context, sess *harness.Session, o *harness.ExecOptions) (harness.Result, error) {
	if sess.Container == "" {
		return harness.Result{}, fmt.Errorf("session %s has no pod yet", sess.ID)
	}
	k, err := r.open(sess)
	if err != nil {
		return harness.Result{}, err
	}
	argv := []string{"env", "HOME=" + harness.GuestHome, "SANDBOX_SESSION=" + sess.ID, "DOCKER_SANDBOX=1", "USER=sandbox"}
	argv = append(argv, o.Env...)
	argv = append(argv, "sh", "-c", `cd `+harness.GuestWorkspace+` 2>/dev/null; exec "$@"`, "sh")
	argv = append(argv, o.Command...)
	code, err := k.exec(ctx, sess.Container, agentName, argv, o.Stdin, o.Stdout, o.Stderr, o.TTY)
	if err != nil {
		return harness.Result{}, err
	}
	return harness.CodeResult(code), nil
}

// record writes a run's state into the session's ConfigMap, where every
// machine that sees the cluster reads it (sandbox ps -A).
func (k *session) record(ctx context.Context, fields map[string]string) {
	data := map[string]any{}
	for key, v := range fields {
		data[key] = v
	}
	patch, _ := json.Marshal(map[string]any{"data": data})
	_, _ = k.cs.CoreV1().ConfigMaps(k.namespace).Patch(ctx, objectName(k.sess.ID), types.MergePatchType, patch, metav1.PatchOptions{})
}

// endFields are a run's end as ConfigMap data.
func endFields(res harness.Result) map[string]string {
	return map[string]string{"state": string(res.State()), "exit_code": strconv.Itoa(res.ExitCode), "signal": res.Signal,
		"reason": res.Reason, "node": res.Node, "error": res.Error, "ended": time.Now().UTC().Format(time.RFC3339)}
}

// Remote is a session as its cluster shows it: sandbox ps -A.
type Remote struct {
	Namespace string    `json:"namespace"`
	Session   string    `json:"session"`
	Host      string    `json:"host,omitempty"`  // the machine that made it
	Store     string    `json:"store,omitempty"` // its SANDBOX_HOME there
	State     string    `json:"state"`
	Run       int       `json:"run,omitempty"`
	ExitCode  int       `json:"exit_code"`
	Signal    string    `json:"signal,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Node      string    `json:"node,omitempty"`
	Pod       string    `json:"pod,omitempty"`
	Created   time.Time `json:"created"`
}

// List lists the sessions on the cluster of the kubeconfig's context (or
// kubeContext): in its namespace, or every namespace with all.
func List(ctx context.Context, env osenv.Env, kubeContext string, all bool) ([]Remote, string, error) {
	r := &Runtime{env: env}
	c, err := r.connect(&harness.KubeTarget{Context: kubeContext})
	if err != nil {
		return nil, "", err
	}
	ns := c.namespace
	if all {
		ns = ""
	}
	sel := metav1.ListOptions{LabelSelector: Selector}
	cms, err := c.cs.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if err != nil {
		return nil, c.context, c.denied(err, "list", "configmaps")
	}
	pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: Selector + "," + labelComponent + "=" + agentName})
	if err != nil {
		return nil, c.context, c.denied(err, "list", "pods")
	}
	running := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		if ended(&p) == nil && p.DeletionTimestamp == nil {
			running[p.Namespace+"/"+p.Annotations[annSession]] = p
		}
	}
	var out []Remote
	for _, cm := range cms.Items {
		id := cm.Annotations[annSession]
		x := Remote{Namespace: cm.Namespace, Session: id, Host: cm.Annotations[annHost], Store: cm.Annotations[annStore],
			State: cm.Data["state"], Signal: cm.Data["signal"], Reason: cm.Data["reason"], Node: cm.Data["node"],
			Pod: cm.Data["pod"], Created: cm.CreationTimestamp.UTC()}
		x.ExitCode, _ = strconv.Atoi(cm.Data["exit_code"])
		x.Run, _ = strconv.Atoi(cm.Data["run"])
		if p, ok := running[cm.Namespace+"/"+id]; ok {
			x.State, x.Pod, x.Node = "running", p.Name, p.Spec.NodeName
		} else if x.State == "running" {
			x.State = "dropped" // its pod is gone, and no end was recorded
		}
		if x.State == "" {
			x.State = "created"
		}
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Session < out[j].Session
	})
	return out, c.context, nil
}
