package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/internal/s3test"
)

// TestS3CutMidTranscript: the connection to the store is cut while a
// transcript is being read and the store cannot be reached again. recover
// and export stop with an error naming the object, and write nothing: a
// transcript read up to a cut is not a damaged transcript to recover from.
func TestS3CutMidTranscript(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "runs"); err != nil {
		t.Fatal(err)
	}
	data, err := gen.Bytes(gen.Options{Size: 4 << 20, Seed: 7, Files: 5, PatchEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Put(ctx, "runs", "big/rollout.jsonl", data); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := os.Environ()
	for k, v := range srv.Env(home) {
		env = append(env, k+"="+v)
	}
	env = append(env, "CODEX_HOME="+filepath.Join(home, ".codex"), "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"SANDBOX_HOME="+filepath.Join(home, "state"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	sandbox := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command("sandbox", args...)
		cmd.Env, cmd.Dir = env, home
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		return errb.String(), exitCode(err)
	}
	dest := filepath.Join(home, "dest")

	// Whole, it recovers (the baseline the cut is measured against).
	if errOut, code := sandbox("recover", "--from", "s3://runs/big/", "--dest", dest); code != 0 {
		t.Fatalf("recover: exit %d\n%s", code, errOut)
	}
	os.RemoveAll(dest)

	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"recover", "--from", "s3://runs/big/", "--dest", dest}, dest},
		{[]string{"export", "--from", "s3://runs/big/", "-o", filepath.Join(home, "m.json")}, filepath.Join(home, "m.json")},
		{[]string{"sessions", "--from", "s3://runs/big/"}, ""},
	} {
		p, err := s3test.NewProxy(strings.TrimPrefix(srv.Endpoint, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		// Past the selection's probes (head and tail), inside the transcript.
		p.CutOnce(1<<20, true)
		errOut, code := sandbox(append(c.args, "--s3-endpoint", p.Endpoint)...)
		p.Close()
		if code != 1 || !strings.Contains(errOut, "sandbox: error: s3://runs/big/rollout.jsonl: cannot reach the object store (the connection was cut at byte") {
			t.Errorf("%s with the connection cut: exit %d\n%s", c.args[0], code, errOut)
		}
		if p.Cuts() != 1 {
			t.Errorf("%s: %d cuts, want 1", c.args[0], p.Cuts())
		}
		if c.out != "" {
			if _, err := os.Stat(c.out); !os.IsNotExist(err) {
				t.Errorf("%s with the connection cut wrote %s: %v", c.args[0], c.out, err)
			}
		}
	}
}
