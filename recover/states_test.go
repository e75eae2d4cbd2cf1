package recover

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// statesOps writes a.txt three times, and writes then deletes b.txt.
func statesOps() []manifest.Op {
	upd := func(seq int, path, from, to string) manifest.Op {
		return patchOp(seq, "/w", fmt.Sprint("u", seq), []manifest.Hunk{{Kind: manifest.HunkUpdate, Path: path,
			Chunks: []manifest.Chunk{{OldLines: []string{from}, NewLines: []string{to}}}}})
	}
	return []manifest.Op{
		patchOp(0, "/w", "add-a", []manifest.Hunk{{Kind: manifest.HunkAdd, Path: "a.txt", Contents: "v1\n"}}),
		upd(1, "a.txt", "v1", "v2"),
		upd(2, "a.txt", "v2", "v3"),
		patchOp(3, "/w", "add-b", []manifest.Hunk{{Kind: manifest.HunkAdd, Path: "b.txt", Contents: "b1\n"}}),
		upd(4, "b.txt", "b1", "b2"),
		patchOp(5, "/w", "del-b", []manifest.Hunk{{Kind: manifest.HunkDelete, Path: "b.txt"}}),
	}
}

// planStates plans files onto a host holding a.txt and b.txt as given.
func planStates(t *testing.T, files []*FileResult, a, b string) map[string]*FilePlan {
	t.Helper()
	root := t.TempDir()
	for name, text := range map[string]string{"a.txt": a, "b.txt": b} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plans := planRollback(t, root, files, NewOSFS())
	byPath := map[string]*FilePlan{}
	for _, p := range plans {
		byPath[p.File.Path] = p
	}
	return byPath
}

// A host copy that holds a state the session went through is only behind:
// it is moved forward (or deleted, when the session deleted the file), not
// called a conflict; one that holds anything else is a conflict. The same
// whether the states are keyed hashes (recover) or sha256 read back from a
// manifest (export, then recover --from).
func TestHostBehindTheSession(t *testing.T) {
	fast, _ := reconstruct(statesOps(), noBase, ReconstructOptions{})
	exported, _ := reconstruct(statesOps(), noBase, ReconstructOptions{SHA256States: true})
	var fromManifest []*FileResult
	for _, f := range exported {
		m := manifestFile(f)
		// The manifest lists the sha256 of every state, sorted.
		var want []string
		for _, s := range map[string][]string{"/w/a.txt": {"v1\n", "v2\n", "v3\n"}, "/w/b.txt": {"b1\n", "b2\n"}}[f.Path] {
			want = append(want, fmt.Sprintf("%x", sha256.Sum256([]byte(s))))
		}
		slices.Sort(want)
		if !slices.Equal(m.States, want) {
			t.Errorf("%s: manifest states %q, want the sha256 of each state %q", f.Path, m.States, want)
		}
		back, err := fileFromManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		fromManifest = append(fromManifest, back)
	}
	for _, f := range fast {
		if m := manifestFile(f); len(m.States) != 0 {
			t.Errorf("%s: keyed states written to a manifest: %q", f.Path, m.States)
		}
	}
	for how, files := range map[string][]*FileResult{"recover": fast, "export": exported, "manifest": fromManifest} {
		p := planStates(t, files, "v2\n", "b1\n")
		if a := p["/w/a.txt"]; a.Action != ActUpdate || !strings.Contains(a.Reason, "earlier state") {
			t.Errorf("%s: a.txt behind the session: %s (%s), want an update", how, a.Action, a.Reason)
		}
		if b := p["/w/b.txt"]; b.Action != ActDelete || !strings.Contains(b.Reason, "earlier state") {
			t.Errorf("%s: b.txt behind the session: %s (%s), want a delete", how, b.Action, b.Reason)
		}
		p = planStates(t, files, "v2 and mine\n", "b1\r\nmine\n")
		if a := p["/w/a.txt"]; a.Action != ActConflict {
			t.Errorf("%s: a.txt changed on the host: %s (%s), want a conflict", how, a.Action, a.Reason)
		}
		if b := p["/w/b.txt"]; b.Action != ActConflict {
			t.Errorf("%s: b.txt changed on the host: %s (%s), want a conflict", how, b.Action, b.Reason)
		}
	}
}
