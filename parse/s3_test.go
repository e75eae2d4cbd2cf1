package parse_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/internal/s3test"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/discover"
)

func rollout(t *testing.T, seed int64, start time.Time) []byte {
	t.Helper()
	b, err := gen.Bytes(gen.Options{Size: 6 << 10, Seed: seed, Start: start, Files: 2, PatchEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func zipOf(t *testing.T, members map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range members {
		// Members keep their times, as a CI's upload of its artifacts does.
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// s3Bucket starts a server with a bucket "runs" in a hermetic environment.
func s3Bucket(t *testing.T) *s3test.Server {
	t.Helper()
	srv := s3test.Start(t)
	srv.Setenv(t)
	if err := srv.MakeBucket(context.Background(), "runs"); err != nil {
		t.Fatal(err)
	}
	return srv
}

func put(t *testing.T, srv *s3test.Server, key string, data []byte) {
	t.Helper()
	if _, err := srv.Put(context.Background(), "runs", key, data); err != nil {
		t.Fatal(err)
	}
}

// TestS3SinceByLastModified proves that --since is decided from the
// listing: objects (and an archive) last modified before the window get no
// GET at all, and those in it are read by a ranged GET or two each.
func TestS3SinceByLastModified(t *testing.T) {
	srv := s3Bucket(t)
	ctx := context.Background()
	now := time.Now().UTC()
	for i := range 5 {
		put(t, srv, fmt.Sprintf("old/rollout-%d.jsonl", i), rollout(t, int64(i), now.Add(-48*time.Hour)))
	}
	put(t, srv, "old/artifacts.zip", zipOf(t, map[string][]byte{"ci/r.jsonl": rollout(t, 9, now.Add(-48*time.Hour))}))
	lister, err := objstore.New(ctx, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := lister.List(ctx, objstore.Loc{Bucket: "runs", Key: "old/"})
	if err != nil || len(old) != 6 {
		t.Fatalf("listing the old objects: %d, %v", len(old), err)
	}
	var last time.Time
	for _, o := range old {
		if o.LastModified.After(last) {
			last = o.LastModified
		}
	}
	// The window starts after the last old object was written, and the
	// new ones are written after it starts, in the next whole second (a
	// zip keeps its members' times to the second): a bounded wait of 1-2s.
	since := last.Add(time.Millisecond)
	time.Sleep(time.Until(since.Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
	for i := range 3 {
		put(t, srv, fmt.Sprintf("new/rollout-%d.jsonl", i), rollout(t, int64(10+i), time.Now()))
	}
	put(t, srv, "new/artifacts.zip", zipOf(t, map[string][]byte{"ci/r.jsonl": rollout(t, 20, time.Now())}))

	cnt := s3test.NewCounter()
	w := discover.Window{Since: since}
	f := &discover.Finder{Window: w, S3: &discover.S3{Options: objstore.Options{HTTPClient: cnt.Client()}}}
	cands, skipped, err := f.From("s3://runs/", nil)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("From: %v %v", err, skipped)
	}
	sel, errs, err := parse.Select(cands, parse.Filter{Window: w, Probe: true}, f.Looked)
	if err != nil || len(errs) > 0 {
		t.Fatalf("Select: %v %v", err, errs)
	}
	var names []string
	for _, s := range sel {
		names = append(names, s.Name)
	}
	if len(sel) != 4 {
		t.Fatalf("selected %d sessions, want the 4 new ones: %v", len(sel), names)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "s3://runs/new/") {
			t.Errorf("selected %s, which was written before the window", n)
		}
	}
	if g := cnt.Gets("/runs/old/"); g != 0 {
		t.Errorf("%d GETs of objects written before the window, want none", g)
	}
	// A small object is one GET each time it is opened: each transcript
	// once (its probe), the zip when it is listed and when its member is
	// probed.
	if g := cnt.Gets("/runs/new/rollout-"); g != 3 {
		t.Errorf("%d GETs of the 3 new transcripts, want 3", g)
	}
	if g := cnt.Gets("/runs/new/artifacts.zip"); g != 2 {
		t.Errorf("%d GETs of the new zip, want 2", g)
	}
	t.Logf("%d objects read, %d GETs, %d bytes", cnt.Objects(), cnt.Gets("/runs/"), cnt.Bytes())
}

// TestS3ObjectReplacedBetweenListAndRead: an object overwritten after it
// was listed is an error naming it, not the new version read as the old.
func TestS3ObjectReplacedBetweenListAndRead(t *testing.T) {
	srv := s3Bucket(t)
	put(t, srv, "a/rollout-1.jsonl", rollout(t, 1, time.Now()))
	put(t, srv, "a/rollout-2.jsonl", rollout(t, 2, time.Now()))
	failsBetweenListAndRead(t, 2, objstore.ErrChanged, "s3://runs/a/rollout-2.jsonl", func() {
		put(t, srv, "a/rollout-2.jsonl", rollout(t, 3, time.Now()))
	})
}

// TestS3ServerStopsMidRead: the server stops after the listing, before the
// objects are read: an error naming the object, not a silent empty answer.
func TestS3ServerStopsMidRead(t *testing.T) {
	srv := s3Bucket(t)
	put(t, srv, "a/rollout-1.jsonl", rollout(t, 1, time.Now()))
	failsBetweenListAndRead(t, 1, objstore.ErrUnreachable, "s3://runs/a/rollout-1.jsonl", srv.Stop)
}

// failsBetweenListAndRead lists s3://runs/a/ (want objects), causes fault,
// then reads what was listed: one error, of kind, naming url.
func failsBetweenListAndRead(t *testing.T, want int, kind error, url string, fault func()) {
	t.Helper()
	f := &discover.Finder{}
	cands, _, err := f.From("s3://runs/a/", nil)
	if err != nil || len(cands) != want {
		t.Fatalf("From: %d, %v", len(cands), err)
	}
	fault()
	_, errs, err := parse.Select(cands, parse.Filter{Probe: true}, f.Looked)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], kind) || !strings.Contains(errs[0].Error(), url) {
		t.Fatalf("errors: %v; want one saying %s: %v", errs, url, kind)
	}
}

// TestS3ZipMembersInPlace: a large zip's transcript member is found and
// probed through ranged GETs of its directory and that member, not by
// downloading the archive.
func TestS3ZipMembersInPlace(t *testing.T) {
	srv := s3Bucket(t)
	junk := make([]byte, 8<<20)
	for i := range junk {
		junk[i] = byte(i*7919 + i>>8) // incompressible enough, and fast to make
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "build/output.bin", Method: zip.Store, Modified: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(junk)
	w, err = zw.CreateHeader(&zip.FileHeader{Name: "ci/rollout.jsonl", Method: zip.Deflate, Modified: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(rollout(t, 1, time.Now()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	put(t, srv, "ci/artifacts.zip", buf.Bytes())

	cnt := s3test.NewCounter()
	f := &discover.Finder{S3: &discover.S3{Options: objstore.Options{HTTPClient: cnt.Client()}}}
	cands, _, err := f.From("s3://runs/ci/artifacts.zip", nil)
	if err != nil {
		t.Fatal(err)
	}
	sel, errs, err := parse.Select(cands, parse.Filter{Probe: true}, f.Looked)
	if err != nil || len(sel) != 1 || sel[0].Name != "s3://runs/ci/artifacts.zip!ci/rollout.jsonl" {
		t.Fatalf("Select: %v, %v, %v", sel, errs, err)
	}
	// build/output.bin is 8 MiB: its content is never asked for.
	if b := cnt.Bytes(); b > 2<<20 {
		t.Errorf("%d bytes read of a %d-byte zip to find one small member", b, buf.Len())
	}
	t.Logf("%d GETs, %d bytes of a %d-byte zip", cnt.Gets("/runs/"), cnt.Bytes(), buf.Len())
}
