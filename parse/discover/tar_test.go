package discover

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// readCounter is the OS, counting the bytes read from the files it opens.
type readCounter struct{ n atomic.Int64 }

func (c *readCounter) ReadDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }
func (c *readCounter) Stat(name string) (os.FileInfo, error)     { return os.Stat(name) }
func (c *readCounter) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return countedFile{f, &c.n}, nil
}

type countedFile struct {
	*os.File
	n *atomic.Int64
}

func (f countedFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.n.Add(int64(n))
	return n, err
}

func (f countedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

// TestTarMembersReadOnce reads every member of a tar and of a tar.gz of
// many transcripts and requires their exact content, having read the
// archive about once: not once more for each member opened (a .tar.gz of
// N members was decompressed about N²/2 times). With the copy of a
// compressed tar forbidden (MaxTarSpool 0: an archive bomb) the members
// are still read right, the old way.
func TestTarMembersReadOnce(t *testing.T) {
	const n = 60
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	want := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("sessions/rollout-%03d.jsonl", i)
		if i%7 == 0 {
			name = strings.Repeat("long-dir/", 20) + name // a PAX or GNU long name
		}
		body := strings.Repeat(fmt.Sprintf(`{"timestamp":"2026-11-20T09:12:03Z","type":"event_msg","payload":{"type":"token_count","n":%d}}`+"\n", i), 200+i)
		want[name] = body
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(tb.Bytes())
	gw.Close()
	for _, c := range []struct {
		name  string
		data  []byte
		spool int64
	}{{"plain.tar", tb.Bytes(), maxTarSpool}, {"archive.tar.gz", gz.Bytes(), maxTarSpool}, {"bomb.tar.gz", gz.Bytes(), 0}} {
		t.Run(c.name, func(t *testing.T) {
			defer func(old int64) { maxTarSpool = old }(maxTarSpool)
			maxTarSpool = c.spool
			path := filepath.Join(t.TempDir(), c.name)
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			fs := &readCounter{}
			cands, _, err := (&Finder{FS: fs}).From(path, nil)
			if err != nil || len(cands) != n {
				t.Fatalf("%d candidates, %v", len(cands), err)
			}
			for _, cand := range cands {
				rc, err := cand.Open()
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				member := strings.TrimPrefix(cand.Name, path+"!")
				if err != nil || string(got) != want[member] {
					t.Fatalf("%s: %d bytes (%v), want %d", member, len(got), err, len(want[member]))
				}
			}
			read := fs.n.Load()
			t.Logf("%s: %d bytes read for an archive of %d", c.name, read, len(c.data))
			if c.spool > 0 && read > 2*int64(len(c.data))+64<<10 {
				t.Errorf("%d bytes read from an archive of %d: it was read again for each member", read, len(c.data))
			}
			if c.spool == 0 && read < int64(n/4)*int64(len(c.data)) {
				t.Errorf("without the copy, only %d bytes read: the test no longer tells the two ways apart", read)
			}
		})
	}
}
