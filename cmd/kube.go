package cmd

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentsandbox/sandbox/harness"
	// The kubernetes runtime: importing it offers --runtime kubernetes.
	_ "github.com/agentsandbox/sandbox/harness/kube"
	recov "github.com/agentsandbox/sandbox/recover"
)

// registerKube adds the kubernetes runtime's flags to run.
func registerKube(f *pflag.FlagSet, k *harness.KubeTarget) {
	f.StringVar(&k.Context, "kube-context", "", "with --runtime kubernetes, the kubeconfig `CONTEXT` (default the current one; kubeconfig from $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&k.Namespace, "namespace", "", "with --runtime kubernetes, the `NAMESPACE` (default the context's)")
	f.StringVar(&k.Storage, "kube-storage", "", "with --runtime kubernetes, the `SIZE` of a new session's volume, which holds its HOME and project (default 1Gi)")
	f.StringVar(&k.StorageClass, "storage-class", "", "with --runtime kubernetes, the `CLASS` of a new session's volume (default the cluster's)")
}

// applyProject applies the manifest of a project's changes a runtime
// copied back (kubernetes) onto the project, as sandbox apply does: the
// agent's version where the host still has what was copied in, and
// PATH.recovered beside a file the host changed meanwhile; journaled, so
// sandbox undo reverses it.
//
// Another sandbox writing to the project (a session on the same project
// ending at the same moment, a recover) is waited for: the agent's work
// is not left on the volume because of a lock held for a second.
func (a *app) applyProject(ctx context.Context, path, project string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fsys := recov.NewOSFS()
	defer fsys.Close()
	opts := recov.Options{JournalKey: a.journalKey, Dest: project, OnConflict: recov.OnConflictBackup, LockDir: a.stateRoot(),
		LockWait: func(busy *recov.BusyError) {
			fmt.Fprintf(a.stderr, "sandbox: %s is being written by another sandbox (%s); the project's changes wait for it\n", busy.Root, busy.Holder)
		}}
	res, err := recov.ApplyManifest(ctx, f, fsys, opts, nil)
	if err != nil {
		return "", err
	}
	count := map[string]int{}
	var beside []string
	for _, fr := range res.Report.Files {
		count[string(fr.Action)]++
		if fr.Backup != "" {
			beside = append(beside, fr.Backup)
		}
	}
	var parts []string
	for act, n := range count {
		parts = append(parts, fmt.Sprintf("%d %s", n, act))
	}
	sort.Strings(parts)
	said := strings.Join(parts, ", ")
	if len(res.Report.Journals) > 0 {
		said += " (sandbox undo --dest " + project + " reverses it)"
	}
	if len(beside) > 0 {
		said += fmt.Sprintf("; changed on the host meanwhile, so the agent's version is beside it: %s", strings.Join(beside, ", "))
	}
	return said, nil
}

// pullSessions brings the HOME of the harness sessions a selection names
// (--session NAME) from where their runtime keeps it (a cluster's volume),
// so that what is read is the agent's own. A pull that fails is said, and
// the store's last copy is read.
func (a *app) pullSessions(ctx context.Context, names []string) {
	st := a.store()
	for _, n := range names {
		if harness.ValidName(n) != nil {
			continue
		}
		sess, err := st.Load(n)
		if err != nil || sess.Kube == nil {
			continue
		}
		if err := st.Pull(ctx, sess); err != nil {
			a.log.Warn().Msgf("session %s: its HOME was not read from its volume (%v); reading the copy its last run brought back", sess.ID, err)
			continue
		}
		a.note("session %s: HOME read from its volume", sess.ID)
	}
}
