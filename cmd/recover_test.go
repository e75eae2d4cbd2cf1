package cmd

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

// dirContents maps every file below root to its content.
func dirContents(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return out
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".sandbox" {
			return filepath.SkipDir // sandbox's own journal
		}
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecoverGenerated recovers a generated rollout (thousands of lines,
// hundreds of patches, one 2 MiB output line) into an empty directory and
// compares the whole tree with the content the generator says each file
// ended with.
func TestRecoverGenerated(t *testing.T) {
	t.Parallel()
	for agent, write := range map[string]func(io.Writer, gen.Options) (gen.Stats, error){"codex": gen.Rollout, "claude": gen.Claude, "crush": gen.Crush, "qwen": gen.Qwen, "goose": gen.Goose, "droid": gen.Droid} {
		for _, host := range []bool{false, true} {
			if host && agent != "codex" && agent != "claude" {
				continue // their generators write no host copies to start from
			}
			t.Run(agent+"/"+map[bool]string{false: "from-evidence", true: "onto-host-copies"}[host], func(t *testing.T) { recoverGenerated(t, write, host) })
		}
	}
}

func recoverGenerated(t *testing.T, write func(io.Writer, gen.Options) (gen.Stats, error), hostFiles bool) {
	env := hermetic(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "rollout.jsonl")
	st := writeSession(t, name, write, gen.Options{Size: 4 << 20, Seed: 11, Files: 30, PatchEvery: 5, LongLine: 2 << 20, HostFiles: hostFiles})
	dest := filepath.Join(dir, "dest")
	for name, content := range st.Initial {
		p := filepath.Join(dest, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	a := newAppIn(env, nil, &out, &errb)
	a.setupLog()
	if err := a.runRecover(context.Background(), recoverOptions{selectOptions: selectOptions{Transcripts: []string{name}}, Dest: dest, OnConflict: "skip"}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	got := dirContents(t, dest)
	if hostFiles && !bytes.Contains(out.Bytes(), []byte("update\t")) {
		t.Errorf("no host-based update in:\n%s", out.String())
	}
	if len(got) != len(st.Final) {
		t.Errorf("recovered %d files, the session wrote %d", len(got), len(st.Final))
	}
	for name, want := range st.Final {
		if got[name] != want {
			t.Errorf("%s differs from what the session wrote", name)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
