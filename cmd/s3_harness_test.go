package cmd

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/s3test"
	"github.com/agentsandbox/sandbox/objstore"
)

// s3Env is the hermetic AWS environment of srv as KEY=VALUE lines, for
// commands that keep the HOME of their harnessEnv.
func s3Env(t *testing.T, srv *s3test.Server) []string {
	var env []string
	for k, v := range srv.Env(t.TempDir()) {
		if k != "HOME" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// TestS3SnapshotRestoreAcrossStores: a session snapshotted into a bucket
// from one store ($SANDBOX_HOME) is restored from it into another, keeps
// its agent session id, and its conversation resumes; the faults leave no
// session and no object behind.
func TestS3SnapshotRestoreAcrossStores(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "snaps"); err != nil {
		t.Fatal(err)
	}
	aws := s3Env(t, srv)
	one := newHarnessEnv(t, "--runtime", "local")
	one.env = append(one.env, aws...)
	out, errOut, code := one.run("s1", "-p", "remember AURORA-42", "--write", "src/hello.txt=hello")
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	s1 := one.session("s1")
	if s1.AgentSessionID == "" {
		t.Fatalf("no agent session id after the first run: %+v", s1)
	}
	const url = "s3://snaps/team/s1.tar.gz"
	if out, errOut, code = one.sandbox(nil, "snapshot", "s1", "-o", url); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s%s", code, out, errOut)
	}
	keys, err := srv.Keys(ctx, "snaps", "team/")
	if err != nil || len(keys) != 1 || keys[0] != "team/s1.tar.gz" {
		t.Fatalf("the bucket holds %v (%v), want team/s1.tar.gz", keys, err)
	}

	// Another machine: another store, the same bucket.
	two := newHarnessEnv(t, "--runtime", "local")
	two.env = append(two.env, aws...)
	two.restoreAndResume(t, url, "s1r", s1.AgentSessionID, "what did I ask you to remember?")

	// Faults: each names the URL, and leaves no session and no object.
	_, errOut, code = two.sandbox(nil, "restore", "s3://snaps/team/nothere.tar.gz", "--name", "gone")
	if code != 1 || !strings.Contains(errOut, "sandbox: error: s3://snaps/team/nothere.tar.gz: not found") {
		t.Errorf("restore of a missing key: exit %d\n%s", code, errOut)
	}
	_, errOut, code = one.sandbox(nil, "snapshot", "s1", "-o", "s3://nosuchbucket/s1.tar.gz")
	if code != 1 || !strings.Contains(errOut, "s3://nosuchbucket/s1.tar.gz: not found (no bucket nosuchbucket)") {
		t.Errorf("snapshot into a missing bucket: exit %d\n%s", code, errOut)
	}
	_, errOut, code = two.sandbox([]string{"AWS_SECRET_ACCESS_KEY=wrong"}, "restore", url, "--name", "denied")
	if code != 1 || !strings.Contains(errOut, "sandbox: error: "+url+": access denied") {
		t.Errorf("restore with wrong credentials: exit %d\n%s", code, errOut)
	}
	_, errOut, code = two.sandbox(nil, "snapshot", "s1r", "-o", "s3://snaps/team/")
	if code != 2 || !strings.Contains(errOut, "names a prefix") {
		t.Errorf("snapshot to a prefix: exit %d\n%s", code, errOut)
	}
	for _, n := range []string{"gone", "denied"} {
		if _, err := os.Stat(filepath.Join(two.root, "sessions", n)); !os.IsNotExist(err) {
			t.Errorf("a failed restore left session %s: %v", n, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(two.root, "sessions"))
	if len(entries) != 1 {
		t.Errorf("the second store holds %d entries, want only s1r", len(entries))
	}
	if keys, _ := srv.Keys(ctx, "snaps", ""); len(keys) != 1 {
		t.Errorf("the bucket holds %v after the faults, want only team/s1.tar.gz", keys)
	}

	// gc --archive into a bucket that is not there: the session is kept.
	out, errOut, code = one.sandbox([]string{"SANDBOX_NOW=2030-01-01T00:00:00Z"}, "gc", "--ttl", "24h", "--archive", "s3://nosuchbucket/archive/")
	if code != 3 || !strings.Contains(out, "s3://nosuchbucket/archive/s1-20300101T000000Z.tar.gz: not found (no bucket nosuchbucket)") {
		t.Errorf("gc --archive into a missing bucket: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(one.root, "sessions", "s1", "session.json")); err != nil {
		t.Fatalf("gc removed a session whose archive failed: %v", err)
	}

	// gc --archive: the archive of a removed session goes to the bucket.
	_, errOut, code = one.sandbox([]string{"SANDBOX_NOW=2030-01-01T00:00:00Z"}, "gc", "--ttl", "24h", "--archive", "s3://snaps/archive")
	if code != 0 {
		t.Fatalf("gc --archive: exit %d\n%s", code, errOut)
	}
	keys, err = srv.Keys(ctx, "snaps", "archive/")
	if err != nil || len(keys) != 1 || keys[0] != "archive/s1-20300101T000000Z.tar.gz" {
		t.Fatalf("the archive prefix holds %v (%v)", keys, err)
	}
	if _, err := os.Stat(filepath.Join(one.root, "sessions", "s1")); !os.IsNotExist(err) {
		t.Errorf("gc left the session it archived: %v", err)
	}
	if _, err := os.Stat(filepath.Join(one.root, "archive")); !os.IsNotExist(err) {
		t.Errorf("gc --archive wrote a local archive too: %v", err)
	}
}

// replaceOnRewind overwrites the object after the first reading of a
// restore, when the reader is sent back to the start for the second.
type replaceOnRewind struct {
	io.ReadSeeker
	replace func()
	reads   int64
	err     error
}

func (r *replaceOnRewind) Read(p []byte) (int, error) {
	n, err := r.ReadSeeker.Read(p)
	r.reads += int64(n)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

func (r *replaceOnRewind) Seek(off int64, whence int) (int64, error) {
	if r.reads > 0 && r.replace != nil {
		r.replace()
		r.replace = nil
	}
	return r.ReadSeeker.Seek(off, whence)
}

// TestS3RestoreObjectReplacedBetweenReadings: restore reads a snapshot
// twice (checked, then unpacked); an object replaced in between is refused
// through its ETag, and no session is created.
func TestS3RestoreObjectReplacedBetweenReadings(t *testing.T) {
	srv := s3test.Start(t)
	// The AWS environment for this process's client, but not its HOME:
	// the fake agent's build keeps the Go cache of the real one.
	for k, v := range srv.Env(t.TempDir()) {
		if k != "HOME" {
			t.Setenv(k, v)
		}
	}
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "snaps"); err != nil {
		t.Fatal(err)
	}
	one := newHarnessEnv(t, "--runtime", "local")
	one.env = append(one.env, s3Env(t, srv)...)
	if out, errOut, code := one.run("s1", "-p", "remember AURORA-42"); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	// Larger than one first range, so the second reading asks the store
	// again (a small object is read once, whole, and kept).
	home := filepath.Join(one.root, "sessions", "s1", "home")
	big := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{3}).Read(big)
	if err := os.WriteFile(filepath.Join(home, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := one.sandbox(nil, "snapshot", "s1", "-o", "s3://snaps/s1.tar.gz"); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s%s", code, out, errOut)
	}
	c, err := objstore.New(ctx, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := c.Open(ctx, objstore.Loc{Bucket: "snaps", Key: "s1.tar.gz"})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	r := &replaceOnRewind{ReadSeeker: io.NewSectionReader(obj, 0, obj.Size()), replace: func() {
		// Another snapshot of the session, changed, under the same key.
		// The response still open from the first reading is ended first:
		// MinIO holds back a write to an object while it is being read.
		obj.Close()
		if err := os.WriteFile(filepath.Join(home, "more.txt"), []byte("changed"), 0o644); err != nil {
			t.Error(err)
		}
		if out, errOut, code := one.sandbox(nil, "snapshot", "s1", "-o", "s3://snaps/s1.tar.gz"); code != 0 {
			t.Errorf("second snapshot: exit %d\n%s%s", code, out, errOut)
		}
	}}
	root := t.TempDir()
	_, err = (&harness.Store{Root: root}).Restore(r, harness.RestoreOptions{Name: "r1"})
	if err == nil || !errors.Is(r.err, objstore.ErrChanged) || !strings.Contains(r.err.Error(), "s3://snaps/s1.tar.gz") {
		t.Fatalf("restore across a replacement: %v (the read error: %v); want ErrChanged naming s3://snaps/s1.tar.gz", err, r.err)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "sessions")); len(entries) != 0 {
		t.Errorf("a refused restore left %d entries in the store", len(entries))
	}
}
