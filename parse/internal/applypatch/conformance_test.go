package applypatch_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/applypatch"
	recov "github.com/agentsandbox/sandbox/recover"
)

// applyStandalone applies a patch to dir the way codex's standalone
// apply_patch does: hunk by hunk, not atomically, with the same applier the
// reconstruction uses.
func applyStandalone(dir, text string) error {
	p, err := applypatch.Parse(text)
	if err != nil {
		return err
	}
	if len(p.Hunks) == 0 {
		return errors.New("No files were modified.")
	}
	for _, h := range p.Hunks {
		target := filepath.Join(dir, h.Path)
		switch h.Kind {
		case manifest.HunkAdd:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(target, []byte(h.Contents), 0o644); err != nil {
				return err
			}
		case manifest.HunkDelete:
			st, err := os.Stat(target)
			if err != nil || st.IsDir() {
				return errors.New("Failed to delete file " + h.Path)
			}
			if err := os.Remove(target); err != nil {
				return err
			}
		case manifest.HunkUpdate:
			data, err := os.ReadFile(target)
			if err != nil {
				return errors.New("Failed to read file to update " + h.Path)
			}
			out, _, err := recov.ApplyChunks(string(data), h.Path, h.Chunks, recov.Faithful)
			if err != nil {
				return err
			}
			dest := target
			if h.MovePath != "" {
				dest = filepath.Join(dir, h.MovePath)
				if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
					return err
				}
			}
			if err := os.WriteFile(dest, []byte(out), 0o644); err != nil {
				return err
			}
			if dest != target {
				if err := os.Remove(target); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// snapshot maps every entry below root to "dir" or the file's bytes.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return out
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// mustFail lists the scenarios whose patch codex rejects (expected == input).
var mustFail = map[string]bool{
	"005_rejects_empty_patch": true, "006_rejects_missing_context": true, "007_rejects_missing_file_delete": true,
	"008_rejects_empty_update_hunk": true, "009_requires_existing_file_for_update": true,
	"012_delete_directory_fails": true, "013_rejects_invalid_hunk_header": true,
	"015_failure_after_partial_success_leaves_changes": true,
}

func TestCodexConformance(t *testing.T) {
	root := "../../../fixtures/conformance/codex-apply-patch/scenarios"
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "work")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			copyTree(t, filepath.Join(root, name, "input"), dir)
			patch, err := os.ReadFile(filepath.Join(root, name, "patch.txt"))
			if err != nil {
				t.Fatal(err)
			}
			err = applyStandalone(dir, string(patch))
			if mustFail[name] && err == nil {
				t.Errorf("patch applied; codex rejects it")
			}
			if !mustFail[name] && err != nil {
				t.Errorf("patch failed: %v", err)
			}
			got, want := snapshot(t, dir), snapshot(t, filepath.Join(root, name, "expected"))
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: got %q, want %q", k, got[k], w)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: present, codex leaves no such entry", k)
				}
			}
		})
	}
	if n != 23 {
		t.Errorf("found %d scenarios, want 23", n)
	}
}
