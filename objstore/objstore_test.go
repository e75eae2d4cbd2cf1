package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/internal/s3test"
	"github.com/agentsandbox/sandbox/objstore"
)

// setup starts a server with a bucket and returns a client of it through a
// request counter, in a hermetic AWS environment.
func setup(t *testing.T) (*s3test.Server, *objstore.Client, *s3test.Counter) {
	t.Helper()
	srv := s3test.Start(t)
	srv.Setenv(t)
	if err := srv.MakeBucket(context.Background(), "bkt"); err != nil {
		t.Fatal(err)
	}
	cnt := s3test.NewCounter()
	c, err := objstore.New(context.Background(), objstore.Options{HTTPClient: cnt.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, cnt
}

func put(t *testing.T, srv *s3test.Server, key string, data []byte) {
	t.Helper()
	if _, err := srv.Put(context.Background(), "bkt", key, data); err != nil {
		t.Fatal(err)
	}
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

func TestS3ReadsInRanges(t *testing.T) {
	srv, c, cnt := setup(t)
	ctx := context.Background()
	data := random(3<<20 + 17)
	put(t, srv, "dir/big.bin", data)
	put(t, srv, "dir/small.txt", []byte("hello"))
	put(t, srv, "dir/sub/", nil) // a folder marker is no object

	objs, err := c.List(ctx, objstore.Loc{Bucket: "bkt", Key: "dir/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Key != "dir/big.bin" || objs[0].Size != int64(len(data)) || objs[0].ETag == "" || objs[0].LastModified.IsZero() {
		t.Fatalf("listing: %+v", objs)
	}

	// The tail alone: one GET of just those bytes.
	obj := c.Object(ctx, objs[0])
	tail := make([]byte, 1000)
	if n, err := obj.ReadAt(tail, int64(len(data))-1000); err != nil || n != 1000 || !bytes.Equal(tail, data[len(data)-1000:]) {
		t.Fatalf("tail: %d %v", n, err)
	}
	obj.Close()
	if g, b := cnt.Gets("big.bin"), cnt.Bytes(); g != 1 || b > 2000 {
		t.Fatalf("the tail took %d GETs and %d bytes, want 1 and about 1000", g, b)
	}

	// The whole object in order: a few GETs of growing ranges, every byte right.
	got, err := io.ReadAll(c.Object(ctx, objs[0]).Stream())
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stream: %d bytes, %v", len(got), err)
	}
	if g := cnt.Gets("big.bin") - 1; g < 2 || g > 8 {
		t.Fatalf("streaming 3 MiB took %d GETs, want a few growing ranges", g)
	}

	// Reading past the end says io.EOF with what there was.
	buf := make([]byte, 10)
	n, err := c.Object(ctx, objs[1]).ReadAt(buf, 2)
	if n != 3 || !errors.Is(err, io.EOF) || string(buf[:n]) != "llo" {
		t.Fatalf("past the end: %d %q %v", n, buf[:n], err)
	}
}

func TestS3ObjectReplacedMidRead(t *testing.T) {
	srv, c, _ := setup(t)
	ctx := context.Background()
	put(t, srv, "k.jsonl", random(1<<20))
	info, err := c.Head(ctx, objstore.Loc{Bucket: "bkt", Key: "k.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	obj := c.Object(ctx, info)
	buf := make([]byte, 100)
	if _, err := obj.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	put(t, srv, "k.jsonl", random(1<<20+1)) // another version, between two reads
	_, err = obj.ReadAt(buf, 900<<10)
	t.Logf("replaced: %v", err)
	if !errors.Is(err, objstore.ErrChanged) || !strings.Contains(err.Error(), "s3://bkt/k.jsonl") {
		t.Fatalf("read of a replaced object: %v, want ErrChanged naming s3://bkt/k.jsonl", err)
	}
}

func TestS3Faults(t *testing.T) {
	srv, c, _ := setup(t)
	ctx := context.Background()
	put(t, srv, "there", []byte("x"))

	if _, err := c.Head(ctx, objstore.Loc{Bucket: "bkt", Key: "nothere"}); !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), "s3://bkt/nothere") {
		t.Errorf("missing key: %v", err)
	}
	if _, err := c.List(ctx, objstore.Loc{Bucket: "nobucket", Key: "p/"}); !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), "s3://nobucket/p/") {
		t.Errorf("missing bucket: %v", err)
	}

	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
	wrong, err := objstore.New(ctx, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.List(ctx, objstore.Loc{Bucket: "bkt"})
	t.Logf("wrong credentials: %v", err)
	if !errors.Is(err, objstore.ErrDenied) || !strings.Contains(err.Error(), "s3://bkt/") {
		t.Errorf("wrong credentials: %v", err)
	}
	if _, err := wrong.Head(ctx, objstore.Loc{Bucket: "bkt", Key: "there"}); !errors.Is(err, objstore.ErrDenied) {
		t.Errorf("wrong credentials on HEAD: %v", err)
	}

	srv.Stop()
	_, err = c.List(ctx, objstore.Loc{Bucket: "bkt"})
	t.Logf("server down: %v", err)
	if !errors.Is(err, objstore.ErrUnreachable) || !strings.Contains(err.Error(), "s3://bkt/") || !strings.Contains(err.Error(), srv.Endpoint) {
		t.Errorf("server down: %v", err)
	}
}

// throughProxy is a client of srv through a proxy that can cut connections.
func throughProxy(t *testing.T, srv *s3test.Server) (*objstore.Client, *s3test.Proxy) {
	t.Helper()
	p, err := s3test.NewProxy(strings.TrimPrefix(srv.Endpoint, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	c, err := objstore.New(context.Background(), objstore.Options{Endpoint: p.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return c, p
}

// bigThroughProxy puts a 4 MiB object and pins it through a proxy.
func bigThroughProxy(t *testing.T) (*objstore.Client, *s3test.Proxy, objstore.Info, []byte) {
	t.Helper()
	srv, _, _ := setup(t)
	data := random(4 << 20)
	put(t, srv, "big", data)
	c, p := throughProxy(t, srv)
	info, err := c.Head(context.Background(), objstore.Loc{Bucket: "bkt", Key: "big"})
	if err != nil {
		t.Fatal(err)
	}
	return c, p, info, data
}

func TestS3ResumesAfterCut(t *testing.T) {
	c, p, info, data := bigThroughProxy(t)
	ctx := context.Background()
	p.CutOnce(1<<20, false)
	got, err := io.ReadAll(c.Object(ctx, info).Stream())
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read across a cut: %d bytes, %v", len(got), err)
	}
	if p.Cuts() != 1 {
		t.Fatalf("%d cuts, want 1", p.Cuts())
	}
}

func TestS3ConnectionCutMidStream(t *testing.T) {
	c, p, info, data := bigThroughProxy(t)
	ctx := context.Background()
	// The cut comes, and the store cannot be reached again.
	p.CutOnce(1<<20, true)
	r := c.Object(ctx, info).Stream()
	defer r.Close()
	head := make([]byte, 512<<10)
	if _, err := io.ReadFull(r, head); err != nil || !bytes.Equal(head, data[:len(head)]) {
		t.Fatalf("first 512 KiB: %v", err)
	}
	n, err := io.Copy(io.Discard, r)
	t.Logf("cut: %v", err)
	if !errors.Is(err, objstore.ErrUnreachable) || !strings.Contains(err.Error(), "s3://bkt/big") || !strings.Contains(err.Error(), "connection was cut at byte") {
		t.Fatalf("read on after a cut with the server gone: %d more bytes, %v; want an error naming s3://bkt/big and the cut", n, err)
	}
	if int64(len(head))+n >= int64(len(data)) {
		t.Fatalf("all %d bytes read from a stopped server", len(data))
	}
}
