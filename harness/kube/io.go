package kube

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/harness/kube/volume"
	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/manifest"
	recov "github.com/agentsandbox/sandbox/recover"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
)

// The io pod mounts the session's whole volume here.
const ioRoot = "/data"

// sentName is the session file that lists what the last run copied in:
// each project file's digest, to tell the agent's changes from the
// host's when the project comes back.
const sentName = harness.KubePrefix + "sent.json"

// The volume's contents, from package volume (which needs no client).
type (
	entry = volume.Entry
	sent  = volume.Sent
)

// startIO starts the pod that copies a session's files in and out: the
// session's image, as the caller's uid, the whole volume at /data, doing
// nothing until it is deleted. It needs sh and tar in the image.
func (k *session) startIO(ctx context.Context, spec *harness.Spec, name string) (*corev1.Pod, error) {
	no, yes := false, true
	zero := int64(0)
	pod := &corev1.Pod{ObjectMeta: k.meta(name, "io"), Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: &no, EnableServiceLinks: &no,
		ShareProcessNamespace: &yes, TerminationGracePeriodSeconds: &zero, SecurityContext: securityContext(spec),
		Containers: []corev1.Container{{Name: "io", Image: k.sess.Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command:      []string{"sh", "-c", "mkdir -p " + ioRoot + "/" + volHome + " " + ioRoot + "/" + volProject + " && exec sleep 2147483647"},
			VolumeMounts: []corev1.VolumeMount{{Name: "workspace", MountPath: ioRoot}}}},
		Volumes: []corev1.Volume{{Name: "workspace", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: objectName(k.sess.ID)}}}},
	}}
	pods := k.cs.CoreV1().Pods(k.namespace)
	k.dropIO(name) // a leftover of a run that was dropped
	var err error
	for try := 0; try < 100; try++ {
		_, err = pods.Create(ctx, pod, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the leftover is still going
	}
	if err != nil {
		return nil, k.denied(err, "create", "pods")
	}
	seen := map[string]bool{}
	created := time.Now()
	for {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			k.dropIO(name)
			return nil, k.denied(err, "get", "pods")
		}
		if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
			return p, nil
		}
		if why := cannotRun(p); why != "" || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			k.dropIO(name)
			if why == "" {
				why = fmt.Sprintf("it ended (%s): the image %s needs sh and tar", p.Status.Phase, k.sess.Image)
			}
			return nil, &cannotStart{fmt.Sprintf("the pod that copies the session's files (%s) could not run: %s", name, why)}
		}
		if c := unscheduled(p, created, seen); c != nil && k.note != nil {
			k.note("kubernetes: pod %s is not scheduled yet: %s", name, c.Message)
		}
		select {
		case <-ctx.Done():
			k.dropIO(name)
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// cannotStart is a pod that can never run here (its image cannot be
// pulled, its command is not in it): the run ends as one whose sandbox
// could not start, not as the harness's own failure.
type cannotStart struct{ msg string }

func (e *cannotStart) Error() string { return e.msg }

// exec runs a command in a pod's container, with the streams given (nil:
// none), and says its exit code.
func (c *client) exec(ctx context.Context, pod, container string, command []string, stdin io.Reader, stdout, stderr io.Writer, tty bool) (int, error) {
	req := c.cs.CoreV1().RESTClient().Post().Resource("pods").Name(pod).Namespace(c.namespace).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command,
			Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil, TTY: tty}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(c.config, "GET", req.URL().String())
	if err != nil {
		return 0, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.config, "POST", req.URL())
	if err != nil {
		return 0, err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return 0, err
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty})
	var code interface{ ExitStatus() int }
	if errors.As(err, &code) {
		return code.ExitStatus(), nil
	}
	if err != nil {
		return 0, c.denied(err, "create", "pods/exec")
	}
	return 0, nil
}

// copyIn writes the project onto the volume in place of the last run's
// copy (and, on a new volume, the store's HOME, which a restored session
// brings), through a tar stream into the io pod.
func (k *session) copyIn(ctx context.Context, iop *corev1.Pod, spec *harness.Spec, newVolume bool) (*sent, error) {
	s := &sent{Project: k.sess.Project, Files: map[string]entry{}}
	home := spec.Store.Home(k.sess.ID)
	if newVolume {
		if entries, err := os.ReadDir(home); err == nil && len(entries) > 0 {
			s.Home = true
		}
	}
	hidden, hide := harness.HiddenStore(k.sess.Project, spec.Store.Root)
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		tw := tar.NewWriter(pw)
		err := writeTree(tw, k.sess.Project, volProject, spec, func(rel string, e entry) bool {
			if hide && (rel == hidden || strings.HasPrefix(rel, hidden+"/")) || recov.IsJournalPath(rel) {
				return false // the harness's store; the apply's journals
			}
			s.Files[rel] = e
			return true
		})
		if err == nil && s.Home {
			err = writeTree(tw, home, volHome, spec, func(string, entry) bool { return true })
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
		errc <- err
	}()
	var stderr bytes.Buffer
	script := "rm -rf " + ioRoot + "/" + volProject + " && mkdir -p " + ioRoot + "/" + volProject + " && tar -xf - -C " + ioRoot
	code, err := k.exec(ctx, iop.Name, "io", []string{"sh", "-c", script}, pr, io.Discard, &stderr, false)
	pr.Close()
	werr := <-errc
	switch {
	case werr != nil:
		return nil, fmt.Errorf("copying the project in: %w", werr)
	case err != nil:
		return nil, fmt.Errorf("copying the project in: %w", err)
	case code != 0:
		return nil, fmt.Errorf("copying the project in: tar in the image %s exited %d: %s", k.sess.Image, code, strings.TrimSpace(stderr.String()))
	}
	return s, nil
}

// writeTree writes dir's files to tw under prefix: folders, regular files
// and links (anything else is left out), owned by the run's uid and gid.
// keep sees each and may leave it out.
func writeTree(tw *tar.Writer, dir, prefix string, spec *harness.Spec, keep func(rel string, e entry) bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: prefix + "/" + rel, Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(), Uid: spec.UID, Gid: spec.GID, Format: tar.FormatPAX}
		e := entry{Mode: fi.Mode().Perm()}
		var data []byte
		switch {
		case fi.IsDir():
			hdr.Typeflag, e.Type = tar.TypeDir, "dir"
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname, e.Type, e.Link = tar.TypeSymlink, link, "link", link
		case fi.Mode().IsRegular():
			if data, err = os.ReadFile(p); err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			hdr.Typeflag, hdr.Size, e.Type, e.SHA256, e.Size = tar.TypeReg, int64(len(data)), "file", hex.EncodeToString(sum[:]), int64(len(data))
		default:
			return nil // a socket, a FIFO, a device: not a file to copy
		}
		if !keep(rel, e) {
			if fi.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
}

// saveSent records what a run copied in, in the session's folder.
func saveSent(st *harness.Store, id string, s *sent) error {
	f, err := st.OpenSessionFile(id, sentName, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	err = json.NewEncoder(f).Encode(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func loadSent(st *harness.Store, id string) (*sent, error) {
	f, err := st.OpenSessionFile(id, sentName, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &sent{}
	if err := json.NewDecoder(f).Decode(s); err != nil {
		return nil, fmt.Errorf("%s: %w", sentName, err)
	}
	return s, nil
}

// copyOut reads the volume back through the io pod: HOME replaces the
// store's home/ (so recover --session, snapshot and the vault read the
// agent's own), and, with a record of what was copied in, the project's
// changes are returned as manifest entries to apply.
func (k *session) copyOut(ctx context.Context, iop string, st *harness.Store, was *sent) ([]manifest.File, error) {
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	what := volHome
	if was != nil {
		what += " " + volProject
	}
	errc := make(chan error, 1)
	go func() {
		code, err := k.exec(ctx, iop, "io", []string{"sh", "-c", "cd " + ioRoot + " && tar -cf - " + what}, nil, pw, &stderr, false)
		if err == nil && code != 0 {
			err = fmt.Errorf("tar in the image %s exited %d: %s", k.sess.Image, code, strings.TrimSpace(stderr.String()))
		}
		pw.CloseWithError(err)
		errc <- err
	}()
	var files []manifest.File
	var skipped []string
	err := st.ReplaceHome(k.sess.ID, func(root *os.Root) error {
		var err error
		files, skipped, err = volume.ReadBack(pr, root, was)
		return err
	})
	pr.CloseWithError(errors.New("read no further"))
	if xerr := <-errc; err == nil && xerr != nil {
		err = xerr
	}
	if err != nil {
		return nil, fmt.Errorf("copying the session's files out: %w", err)
	}
	if len(skipped) > 0 {
		k.say("kubernetes: %d entries of HOME were not copied back: %s", len(skipped), strings.Join(skipped[:min(len(skipped), 5)], "; "))
	}
	return files, nil
}

// Finish copies a run's work back before its pod goes: HOME into the
// store, and the project's changes onto the project through the tool's
// journaled apply (sandbox undo reverses it). The io pod started for the
// run does it, and is deleted.
func (r *Runtime) Finish(ctx context.Context, spec *harness.Spec, res harness.Result) error {
	k, err := r.open(spec.Session)
	if err != nil {
		return err
	}
	k.note = spec.Note
	k.record(ctx, endFields(res))
	name := ioPodName(k.sess)
	defer k.dropIO(name)
	if p, err := k.cs.CoreV1().Pods(k.namespace).Get(ctx, name, metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodRunning {
		// Lost during the run (its node, or someone): start another.
		if _, err := k.startIO(ctx, spec, name); err != nil {
			return err
		}
	}
	return k.bringBack(ctx, spec, name)
}

// bringBack copies the last run's work back through the io pod iop: HOME
// into the store and, unless that was done, the project's changes onto
// the project through the journaled apply.
func (k *session) bringBack(ctx context.Context, spec *harness.Spec, iop string) error {
	was, err := loadSent(spec.Store, k.sess.ID)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the record of what was copied in: %w", err)
	}
	project := was
	if was != nil && was.Returned {
		project = nil
	}
	began := time.Now()
	files, err := k.copyOut(ctx, iop, spec.Store, project)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		k.say("kubernetes: copied HOME back in %s; the project is unchanged", time.Since(began).Round(10*time.Millisecond))
	} else {
		if spec.ApplyProject == nil {
			return errors.New("the project's changes were read, but this program cannot apply them")
		}
		volume.PinStarts(files, was.Project)
		mf, err := spec.Store.OpenSessionFile(k.sess.ID, harness.KubePrefix+"project.json", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return err
		}
		w := manifest.NewWriter(mf)
		err = w.Close([]manifest.Session{{ID: k.sess.ID, Agent: "sandbox", Cwd: harness.GuestWorkspace}}, files, nil)
		if cerr := mf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		said, err := spec.ApplyProject(ctx, mf.Name(), was.Project)
		if err != nil {
			return fmt.Errorf("applying the project's changes (kept in %s): %w", mf.Name(), err)
		}
		k.say("kubernetes: copied HOME back, and the project's %s: %s", plural.Count(len(files), "changed file"), said)
	}
	if project != nil {
		project.Returned = true
		return saveSent(spec.Store, k.sess.ID, project)
	}
	return nil
}

// Pull brings a session's HOME from its volume into the store, through a
// short-lived io pod.
func (r *Runtime) Pull(ctx context.Context, st *harness.Store, sess *harness.Session) error {
	k, err := r.open(sess)
	if err != nil {
		return err
	}
	if _, err := k.cs.CoreV1().PersistentVolumeClaims(k.namespace).Get(ctx, objectName(sess.ID), metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("kubernetes context %q, namespace %q: session %s has no volume %s", k.context, k.namespace, sess.ID, objectName(sess.ID))
		}
		return k.denied(err, "get", "persistentvolumeclaims")
	}
	spec := &harness.Spec{Session: sess, Store: st, UID: os.Getuid(), GID: os.Getgid()}
	if err := k.findOwner(ctx); err != nil {
		return err
	}
	name := fmt.Sprintf("%s-pull-%d", objectName(sess.ID), time.Now().UnixNano()%1e6)
	if _, err := k.startIO(ctx, spec, name); err != nil {
		return err
	}
	defer k.dropIO(name)
	_, err = k.copyOut(ctx, name, st, nil)
	return err
}

// findOwner finds the session's ConfigMap, which owns what is made for it.
func (k *session) findOwner(ctx context.Context) error {
	cm, err := k.cs.CoreV1().ConfigMaps(k.namespace).Get(ctx, objectName(k.sess.ID), metav1.GetOptions{})
	if err != nil {
		return k.denied(err, "get", "configmaps")
	}
	k.owner = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
	return nil
}

func (k *session) say(format string, args ...any) {
	if k.note != nil {
		k.note(format, args...)
	}
}
