package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/harness/kube/volume"
	"github.com/agentsandbox/sandbox/internal/bytesize"
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Paths inside the pod: the volume's two folders are mounted where every
// runtime puts HOME and the project.
const (
	volHome    = volume.Home
	volProject = volume.Project
	agentName  = "agent"
	// defaultStorage is the volume's size when --kube-storage is not given.
	defaultStorage = "1Gi"
	// poll is how often a pod's state is read.
	poll = 250 * time.Millisecond
	// schedulingSaid is how long a pod waits to be scheduled before the
	// reason is said: a new volume's first moments unbound are no news.
	schedulingSaid = 3 * time.Second
)

// session is one session's objects on its cluster.
type session struct {
	*client
	sess  *harness.Session
	owner metav1.OwnerReference // the session's ConfigMap
	note  func(format string, args ...any)
}

// open connects to a session's cluster.
func (r *Runtime) open(sess *harness.Session) (*session, error) {
	c, err := r.connect(sess.Kube)
	if err != nil {
		return nil, err
	}
	return &session{client: c, sess: sess}, nil
}

func (k *session) meta(name, component string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: k.namespace, Labels: labels(k.sess, component),
		Annotations: map[string]string{annSession: k.sess.ID}}
	if host, err := os.Hostname(); err == nil {
		m.Annotations[annHost] = host
	}
	if k.owner.UID != "" {
		m.OwnerReferences = []metav1.OwnerReference{k.owner}
	}
	return m
}

// ensure makes what a run stands on, or finds it made: the session's
// ConfigMap (which owns the rest), its volume, and, when its network is
// none, a NetworkPolicy that lets nothing in or out. It says whether the
// volume is new.
func (k *session) ensure(ctx context.Context, spec *harness.Spec) (bool, error) {
	name := objectName(k.sess.ID)
	cms := k.cs.CoreV1().ConfigMaps(k.namespace)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		m := k.meta(name, "session")
		m.Annotations[annStore] = spec.Store.Root
		cm, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: m, Data: map[string]string{"session": k.sess.ID}}, metav1.CreateOptions{})
	}
	if err != nil {
		return false, k.denied(err, "create", "configmaps")
	}
	if cm.Annotations[annSession] != k.sess.ID {
		return false, fmt.Errorf("kubernetes context %q, namespace %q: configmap %s belongs to session %q, not %s", k.context, k.namespace, name, cm.Annotations[annSession], k.sess.ID)
	}
	k.owner = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}

	pvcs := k.cs.CoreV1().PersistentVolumeClaims(k.namespace)
	created := false
	if _, err := pvcs.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		size := defaultStorage
		if k.sess.Kube != nil && k.sess.Kube.Storage != "" {
			size = k.sess.Kube.Storage
		}
		q, err := resource.ParseQuantity(size)
		if err != nil {
			return false, fmt.Errorf("--kube-storage %q: %w", size, err)
		}
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: k.meta(name, "workspace"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}}}
		if k.sess.Kube != nil && k.sess.Kube.StorageClass != "" {
			pvc.Spec.StorageClassName = &k.sess.Kube.StorageClass
		}
		if _, err := pvcs.Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			return false, k.denied(err, "create", "persistentvolumeclaims")
		}
		created = true
	} else if err != nil {
		return false, k.denied(err, "get", "persistentvolumeclaims")
	}

	nps := k.cs.NetworkingV1().NetworkPolicies(k.namespace)
	if spec.Network == "host" {
		if err := nps.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return false, k.denied(err, "delete", "networkpolicies")
		}
		return created, nil
	}
	np := &netv1.NetworkPolicy{ObjectMeta: k.meta(name, "network"), Spec: netv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{labelSession: labelValue(k.sess.ID), labelComponent: agentName}},
		PolicyTypes: []netv1.PolicyType{netv1.PolicyTypeIngress, netv1.PolicyTypeEgress}}}
	if _, err := nps.Create(ctx, np, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, k.denied(err, "create", "networkpolicies")
	}
	return created, nil
}

// securityContext runs a pod as the caller's uid and gid, as every runtime
// runs the agent.
func securityContext(spec *harness.Spec) *corev1.PodSecurityContext {
	uid, gid := int64(spec.UID), int64(spec.GID)
	sc := &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &gid, FSGroup: &gid}
	if uid != 0 {
		yes := true
		sc.RunAsNonRoot = &yes
	}
	return sc
}

// agentPod is the pod of a run: the agent, as the caller's uid, with HOME
// and the project from the session's volume, the run's limits and
// environment, and the finalizer that keeps the pod until its end is
// recorded.
func (k *session) agentPod(spec *harness.Spec) (*corev1.Pod, error) {
	m := k.meta(podName(k.sess), agentName)
	m.Labels[labelRun] = strconv.Itoa(k.sess.Runs)
	m.Finalizers = []string{finalizer}
	res := corev1.ResourceRequirements{}
	if spec.Memory != "" {
		n, err := bytesize.Parse(spec.Memory)
		if err != nil {
			return nil, fmt.Errorf("--memory %q: %w", spec.Memory, err)
		}
		q := resource.NewQuantity(n, resource.BinarySI)
		res.Limits, res.Requests = corev1.ResourceList{corev1.ResourceMemory: *q}, corev1.ResourceList{corev1.ResourceMemory: *q}
	}
	if spec.CPUs != "" {
		q, err := resource.ParseQuantity(spec.CPUs)
		if err != nil {
			return nil, fmt.Errorf("--cpus %q: %w", spec.CPUs, err)
		}
		if res.Limits == nil {
			res.Limits, res.Requests = corev1.ResourceList{}, corev1.ResourceList{}
		}
		res.Limits[corev1.ResourceCPU], res.Requests[corev1.ResourceCPU] = q, q
	}
	var env []corev1.EnvVar
	for _, e := range harness.GuestEnv(spec) {
		name, value, _ := strings.Cut(e, "=")
		env = append(env, corev1.EnvVar{Name: name, Value: value})
	}
	grace := int64(spec.Grace / time.Second)
	if grace <= 0 {
		grace = int64(harness.StopGrace / time.Second)
	}
	no, yes := false, true
	pod := &corev1.Pod{ObjectMeta: m, Spec: corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		AutomountServiceAccountToken:  &no,
		EnableServiceLinks:            &no,
		TerminationGracePeriodSeconds: &grace,
		// The pause container is PID 1, as an init is for Docker's
		// --init: TERM reaches an agent that installs no handler for it,
		// and its shells' zombies are reaped.
		ShareProcessNamespace: &yes,
		SecurityContext:       securityContext(spec),
		// The pod sits where the volume is: the io pod holds it.
		Affinity: k.besideIO(),
		Containers: []corev1.Container{{
			Name: agentName, Image: k.sess.Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: spec.Command, WorkingDir: harness.GuestWorkspace, Env: env, Resources: res,
			// The last lines of output are kept in the container's status
			// too, should the log stream have been lost.
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			VolumeMounts: []corev1.VolumeMount{
				{Name: "workspace", MountPath: harness.GuestHome, SubPath: volHome},
				{Name: "workspace", MountPath: harness.GuestWorkspace, SubPath: volProject}},
		}},
		Volumes: []corev1.Volume{{Name: "workspace", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: objectName(k.sess.ID)}}}},
	}}
	return pod, nil
}

// Run runs a session's command in a pod to its end. Before it, the
// project is copied onto the session's volume (and HOME, when the volume is
// new and the store holds one: a restored session); the pod's output is
// streamed into the session's log; its end is read from the pod, which
// its finalizer keeps until Remove, after the end is recorded and Finish
// has copied the work back.
func (r *Runtime) Run(ctx context.Context, spec *harness.Spec) (harness.Result, error) {
	// What this runtime cannot give ends the run as one whose sandbox could
	// not start (125), before anything is made on the cluster.
	if spec.TTY {
		return harness.Result{ExitCode: 125, Error: "runtime kubernetes runs agents without a terminal: give the agent its task on the command line"}, nil
	}
	if len(spec.Mounts) > 0 {
		return harness.Result{ExitCode: 125, Error: "runtime kubernetes cannot mount this machine's paths"}, nil
	}
	k, err := r.open(spec.Session)
	if err != nil {
		return harness.Result{}, err
	}
	k.note = spec.Note
	newVolume, err := k.ensure(ctx, spec)
	if err != nil {
		return harness.Result{}, err
	}
	iop, err := k.startIO(ctx, spec, ioPodName(k.sess))
	var never *cannotStart
	if errors.As(err, &never) {
		return harness.Result{ExitCode: 125, Error: never.msg, Reason: "ContainerCannotRun"}, nil
	}
	if err != nil {
		return harness.Result{}, err
	}
	if was, err := loadSent(spec.Store, spec.Session.ID); err == nil && !was.Returned && !newVolume {
		// The last run's harness died before it brought the project back:
		// that comes first, or this copy-in would replace it.
		k.say("kubernetes: the last run's project was not copied back (its harness stopped first); copying it back now")
		if err := k.bringBack(ctx, spec, iop.Name); err != nil {
			k.dropIO(iop.Name)
			return harness.Result{}, err
		}
	}
	began := time.Now()
	sent, err := k.copyIn(ctx, iop, spec, newVolume)
	if err == nil {
		err = saveSent(spec.Store, spec.Session.ID, sent)
	}
	if err != nil {
		k.dropIO(iop.Name)
		return harness.Result{}, err
	}
	k.say("kubernetes: context %s, namespace %s: copied %s in %s", k.context, k.namespace, sent.Summary(), time.Since(began).Round(10*time.Millisecond))
	pod, err := k.agentPod(spec)
	if err != nil {
		return harness.Result{}, err
	}
	pods := k.cs.CoreV1().Pods(k.namespace)
	_ = k.release(context.WithoutCancel(ctx), pod.Name) // a leftover of a dropped run of the same number
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return harness.Result{}, k.denied(err, "create", "pods")
	}
	k.record(ctx, map[string]string{"state": "running", "run": strconv.Itoa(k.sess.Runs), "pod": pod.Name,
		"started": time.Now().UTC().Format(time.RFC3339), "exit_code": "", "signal": "", "reason": "", "error": "", "ended": ""})
	return k.follow(ctx, spec, pod.Name), nil
}

// besideIO puts a pod on the node of the session's io pod, where its volume
// is attached (a ReadWriteOnce volume is one node's at a time).
func (k *session) besideIO() *corev1.Affinity {
	return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelSession: labelValue(k.sess.ID), labelComponent: "io"}},
		TopologyKey:   "kubernetes.io/hostname"}}}}
}

// follow watches a run's pod to its end: it streams the output, stops the
// agent when the run is cancelled (TERM through a graceful delete, then
// KILL), and reads the end from the container's terminated state, or says
// the pod was lost.
func (k *session) follow(ctx context.Context, spec *harness.Spec, name string) harness.Result {
	pods := k.cs.CoreV1().Pods(k.namespace)
	bg := context.WithoutCancel(ctx)
	logsDone := make(chan struct{})
	logging := false
	stopping, killing := false, false
	var last *corev1.Pod
	seen := map[string]bool{} // waiting reasons already said
	created := time.Now()
	for {
		pod, err := pods.Get(bg, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return k.lost(bg, name, last, "the pod was deleted and its finalizer removed before sandbox read its end")
		case err != nil:
			// The API server is away: keep asking, unless told to stop.
			if ctx.Err() != nil && killing {
				return harness.Result{ExitCode: 125, Error: "the cluster did not answer while the run was stopped: " + err.Error(), Container: name}
			}
		default:
			last = pod
			if !logging && (started(pod) || ended(pod) != nil) {
				logging = true
				if spec.Started != nil {
					spec.Started(0, name)
				}
				go func() {
					defer close(logsDone)
					k.stream(bg, name, spec.Stdout)
				}()
			}
			if t := ended(pod); t != nil {
				if logging {
					select {
					case <-logsDone:
					case <-time.After(5 * time.Second):
					}
				}
				return k.result(bg, pod, t)
			}
			if why := cannotRun(pod); why != "" {
				k.deletePod(name, 0)
				return harness.Result{ExitCode: 125, Error: why, Container: name, Reason: "ContainerCannotRun", Node: pod.Spec.NodeName, Events: k.events(bg, name)}
			}
			if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
				// Failed with no container end: evicted before it ran.
				return k.result(bg, pod, nil)
			}
			if c := unscheduled(pod, created, seen); c != nil {
				k.say("kubernetes: pod %s is not scheduled yet: %s: %s", name, c.Reason, c.Message)
			}
		}
		select {
		case <-spec.Kill:
			if !killing {
				killing = true
				k.stop(bg, name, 0)
			}
		case <-ctx.Done():
			if !stopping {
				stopping = true
				k.stop(bg, name, spec.Grace)
			}
		default:
		}
		time.Sleep(poll)
	}
}

// started says the agent's container has begun.
func started(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == agentName && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// unscheduled is why pod, made at created, is not scheduled yet, once
// for each reason (seen holds those said) and only after schedulingSaid;
// nil otherwise.
func unscheduled(pod *corev1.Pod, created time.Time, seen map[string]bool) *corev1.PodCondition {
	if time.Since(created) <= schedulingSaid {
		return nil
	}
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" && !seen[c.Message] {
			seen[c.Message] = true
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// ended is the agent container's end, if it has one.
func ended(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == agentName && cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

// waitingFatal are the reasons a container waits for something that will
// not come by waiting.
var waitingFatal = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}

// cannotRun says why a pod's container will never start, or "".
func cannotRun(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && slices.Contains(waitingFatal, w.Reason) {
			return fmt.Sprintf("the container could not start: %s: %s", w.Reason, w.Message)
		}
	}
	return ""
}

// result is a run's end from its pod: the exit code and signal, the reason
// (OOMKilled, Error, ContainerCannotRun; Evicted from the pod), the node
// and the pod's events. A pod deleted by someone other than sandbox is a
// drop, with that evidence.
func (k *session) result(ctx context.Context, pod *corev1.Pod, t *corev1.ContainerStateTerminated) harness.Result {
	r := harness.Result{Container: pod.Name, Node: pod.Spec.NodeName, Events: k.events(ctx, pod.Name)}
	if t != nil {
		c := harness.CodeResult(int(t.ExitCode))
		r.ExitCode, r.Signal, r.Reason = c.ExitCode, c.Signal, t.Reason
		if t.Signal > 0 {
			r.Signal = harness.SignalName(int(t.Signal))
		}
		r.OOM = t.Reason == "OOMKilled"
		if t.Reason != "" && t.Reason != "Completed" && t.Reason != "Error" && t.Reason != "OOMKilled" {
			r.Error = strings.TrimSpace(t.Reason + ": " + t.Message)
		}
	} else {
		r.ExitCode, r.Reason = 137, pod.Status.Reason
		r.Error = strings.TrimSpace(fmt.Sprintf("the pod ended (%s) before its container did: %s %s", pod.Status.Phase, pod.Status.Reason, pod.Status.Message))
	}
	if pod.Status.Reason == "Evicted" {
		r.Reason = "Evicted"
		r.Error = strings.TrimSpace("evicted: " + pod.Status.Message)
	}
	if pod.DeletionTimestamp != nil && pod.Annotations[annStop] == "" {
		r.Dropped = true
		r.Error = strings.TrimSpace(fmt.Sprintf("the pod was deleted by someone other than sandbox (at %s) %s", pod.DeletionTimestamp.UTC().Format(time.RFC3339), r.Error))
	}
	return r
}

// lost is the end of a run whose pod is gone without an end on record:
// what was last seen of it, and its events.
func (k *session) lost(ctx context.Context, name string, last *corev1.Pod, why string) harness.Result {
	r := harness.Result{ExitCode: 137, Container: name, Dropped: true, Error: why, Events: k.events(ctx, name)}
	if last != nil {
		r.Node = last.Spec.NodeName
		r.Error += fmt.Sprintf(" (last seen %s", last.Status.Phase)
		if last.Status.Reason != "" {
			r.Error += ", " + last.Status.Reason
		}
		r.Error += ")"
	}
	return r
}

// events are the pod's events, oldest first: "Warning OOMKilling: …".
func (k *session) events(ctx context.Context, pod string) []string {
	list, err := k.cs.CoreV1().Events(k.namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod})
	if err != nil {
		return []string{"(events not read: " + err.Error() + ")"}
	}
	items := list.Items
	// Events' times are whole seconds, some of them: within a second, the
	// order they were made in, which their names end with (the time in
	// nanoseconds, in hex).
	slices.SortStableFunc(items, func(a, b corev1.Event) int {
		if c := eventTime(a).Truncate(time.Second).Compare(eventTime(b).Truncate(time.Second)); c != 0 {
			return c
		}
		return cmp.Compare(nameTime(a.Name), nameTime(b.Name))
	})
	var out []string
	for _, e := range items {
		s := fmt.Sprintf("%s %s: %s", e.Type, e.Reason, strings.TrimSpace(e.Message))
		if e.Count > 1 {
			s += fmt.Sprintf(" (×%d)", e.Count)
		}
		out = append(out, s)
	}
	if len(out) > 20 {
		out = out[len(out)-20:]
	}
	return out
}

// nameTime is the time an event's name ends with (pod.<hex nanoseconds>).
func nameTime(name string) uint64 {
	i := strings.LastIndexByte(name, '.')
	n, _ := strconv.ParseUint(name[i+1:], 16, 64)
	return n
}

func eventTime(e corev1.Event) time.Time {
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time, e.CreationTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// stop asks a pod to end: a graceful delete (TERM, then KILL after grace),
// marked as sandbox's own so its end is a stop, not a drop.
func (k *session) stop(ctx context.Context, name string, grace time.Duration) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, annStop, time.Now().UTC().Format(time.RFC3339))
	_, _ = k.cs.CoreV1().Pods(k.namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	k.deletePod(name, grace)
}

// dropIO deletes an io pod. Its sleep ends at TERM, so a second's grace
// costs nothing, and the pod goes the orderly way: the kubelet stops it
// and tears its network down before the API forgets it (a force delete
// leaves that to the kubelet's housekeeping).
func (k *session) dropIO(name string) { k.deletePod(name, time.Second) }

// deletePod deletes a pod, with grace (0: at once).
func (k *session) deletePod(name string, grace time.Duration) {
	g := int64(grace / time.Second)
	_ = k.cs.CoreV1().Pods(k.namespace).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &g})
}

// release lets a run's pod go: its finalizer removed, and deleted.
func (k *session) release(ctx context.Context, name string) error {
	pods := k.cs.CoreV1().Pods(k.namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return k.denied(err, "get", "pods")
	}
	if i := slices.Index(pod.Finalizers, finalizer); i >= 0 {
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, finalizer, i)
		if _, err := pods.Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return k.denied(err, "patch", "pods")
		}
	}
	// The pod has ended: its own grace is no wait.
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return k.denied(err, "delete", "pods")
	}
	return nil
}
