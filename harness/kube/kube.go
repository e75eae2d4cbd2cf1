// Package kube is the harness's kubernetes runtime: a session is a
// ConfigMap that owns the rest (so deleting it deletes the session's
// objects), a PersistentVolumeClaim that holds the agent's HOME and a copy
// of the project, and one Pod a run, which a finalizer keeps until the
// harness has recorded how it ended. It speaks to the API server with
// client-go; no kubectl is needed.
//
// Importing the package registers the runtime as "kubernetes".
package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/osenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Name is the runtime's name for --runtime.
const Name = "kubernetes"

func init() {
	harness.Register(Name, func(env osenv.Env) harness.Runtime { return &Runtime{env: env} })
}

// The labels, annotations and finalizer of everything the runtime makes.
const (
	labelManaged   = "app.kubernetes.io/managed-by"
	labelName      = "app.kubernetes.io/name"
	labelComponent = "app.kubernetes.io/component"
	labelSession   = "agentsandbox.io/session"
	labelRun       = "agentsandbox.io/run"
	annSession     = "agentsandbox.io/session-id"
	annHost        = "agentsandbox.io/host"
	annStore       = "agentsandbox.io/store"
	annStop        = "agentsandbox.io/stop-requested"
	finalizer      = "agentsandbox.io/exit-record"
	managedBy      = "sandbox"
	// Selector finds every object the tool made.
	Selector = labelManaged + "=" + managedBy
)

// Runtime runs sessions on a cluster.
type Runtime struct {
	env osenv.Env
}

// Name is "kubernetes".
func (*Runtime) Name() string { return Name }

// NeedsImage: a pod runs an image.
func (*Runtime) NeedsImage() bool { return true }

// client is a connection to one cluster, in one namespace.
type client struct {
	cs        kubernetes.Interface
	config    *rest.Config
	context   string // the kubeconfig context, for messages
	namespace string
}

// connect reads the kubeconfig as kubectl does ($KUBECONFIG, else
// ~/.kube/config, from the runtime's environment), with the session's
// context and namespace when it names them.
func (r *Runtime) connect(t *harness.KubeTarget) (*client, error) {
	rules := &clientcmd.ClientConfigLoadingRules{}
	if v := r.env.Get("KUBECONFIG"); v != "" {
		rules.Precedence = filepath.SplitList(v)
	} else if home, err := r.env.Home(); err == nil {
		rules.Precedence = []string{filepath.Join(home, ".kube", "config")}
	}
	over := &clientcmd.ConfigOverrides{}
	if t != nil {
		over.CurrentContext = t.Context
		over.Context.Namespace = t.Namespace
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, over)
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ctxName := raw.CurrentContext
	if over.CurrentContext != "" {
		ctxName = over.CurrentContext
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("no kubeconfig (looked in %s; set KUBECONFIG): %w", strings.Join(rules.Precedence, ", "), harness.ErrUnavailable)
		}
		return nil, fmt.Errorf("kubeconfig context %q: %w", ctxName, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "sandbox"
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &client{cs: cs, config: cfg, context: ctxName, namespace: ns}, nil
}

// Available says whether the cluster the kubeconfig names answers.
func (r *Runtime) Available(ctx context.Context) error {
	return r.available(ctx, nil)
}

func (r *Runtime) available(ctx context.Context, t *harness.KubeTarget) error {
	c, err := r.connect(t)
	if err != nil {
		if errors.Is(err, harness.ErrUnavailable) {
			return err
		}
		return fmt.Errorf("%v: %w", err, harness.ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := c.cs.Discovery().ServerVersion(); done <- err }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("the cluster of context %q does not answer (%s): %v: %w", c.context, c.config.Host, err, harness.ErrUnavailable)
	}
	return nil
}

// denied turns an API error into one that says what was refused, where:
// the verb and resource, the context and the namespace, and the Role that
// grants it.
func (c *client) denied(err error, verb, resource string) error {
	if err == nil {
		return nil
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("kubernetes context %q, namespace %q: not allowed to %s %s (docs/scale.md has the Role sandbox needs): %w", c.context, c.namespace, verb, resource, err)
	}
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("kubernetes context %q: the cluster does not accept these credentials: %w", c.context, err)
	}
	return fmt.Errorf("kubernetes context %q, namespace %q: %s %s: %w", c.context, c.namespace, verb, resource, err)
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName is the name of a session's objects: sandbox-<session>, made a
// DNS label (lower case, [a-z0-9-]), with a hash of the session's own name
// when that had to change it, so two sessions never share one.
func objectName(id string) string {
	n := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(id), "-"), "-")
	if n != id || len(n) > 40 {
		sum := sha256.Sum256([]byte(id))
		if len(n) > 40 {
			n = n[:40]
		}
		n = strings.Trim(n, "-") + "-" + hex.EncodeToString(sum[:4])
	}
	return "sandbox-" + n
}

// labelValue is a session's name as a label value (63 characters of
// [A-Za-z0-9._-], starting and ending with a letter or digit).
func labelValue(id string) string {
	n := objectName(id)[len("sandbox-"):]
	return n
}

// podName is the pod of a session's run.
func podName(sess *harness.Session) string {
	return fmt.Sprintf("%s-%d", objectName(sess.ID), sess.Runs)
}

// ioPodName is the short-lived pod that copies a session's files in and
// out of its volume.
func ioPodName(sess *harness.Session) string { return objectName(sess.ID) + "-io" }

func labels(sess *harness.Session, component string) map[string]string {
	return map[string]string{labelManaged: managedBy, labelName: "sandbox", labelComponent: component, labelSession: labelValue(sess.ID)}
}
