package discover

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// onlyFS is the real filesystem limited to one file: a source is read in
// place, and nothing it names (a member "../x", a link) is ever opened.
type onlyFS struct {
	t    *testing.T
	name string
}

func (o onlyFS) check(name string) {
	if name != o.name {
		o.t.Fatalf("reading %s touched %s", o.name, name)
	}
}

func (o onlyFS) ReadDir(dir string) ([]fs.DirEntry, error) { o.check(dir); return os.ReadDir(dir) }
func (o onlyFS) Stat(name string) (fs.FileInfo, error)     { o.check(name); return os.Stat(name) }
func (o onlyFS) Open(name string) (File, error)            { o.check(name); return os.Open(name) }

// members reads an archive the way the standard library does, apart from
// discover: each member's name and content, or ok false when data is not
// an archive that can be read to its end.
func members(data []byte) (names []string, content map[string][][]byte, archive, ok bool) {
	content = map[string][][]byte{}
	var tr *tar.Reader
	switch {
	case bytes.HasPrefix(data, zipMagic) || bytes.HasPrefix(data, zipEmpty):
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, nil, true, false
		}
		for _, m := range zr.File {
			names = append(names, m.Name)
			if rc, err := m.Open(); err == nil {
				b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
				rc.Close()
				content[m.Name] = append(content[m.Name], b)
			}
		}
		return names, content, true, true
	case isTar(data):
		tr = tar.NewReader(bytes.NewReader(data))
	case bytes.HasPrefix(data, gzipMagic):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, nil, false, true
		}
		inner, err := io.ReadAll(io.LimitReader(zr, 8<<20))
		if !isTar(inner) {
			return nil, nil, false, true
		}
		if err != nil {
			return nil, nil, true, false
		}
		tr = tar.NewReader(bytes.NewReader(inner))
	default:
		return nil, nil, false, true
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, content, true, true
		}
		if err != nil {
			return nil, nil, true, false
		}
		names = append(names, h.Name)
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, nil, true, false
		}
		content[h.Name] = append(content[h.Name], b)
	}
}

// FuzzFrom reads any bytes as what --from names, from a file and from
// standard input:
//   - nothing but the source itself is opened, and nothing is written
//     beside it (members are never extracted; "../x" is only a name);
//   - members found plus members skipped are at most the members present;
//   - every candidate is the source, or SOURCE!MEMBER with the member's
//     exact content;
//   - a file and standard input holding the same bytes give the same
//     members.
func FuzzFrom(f *testing.F) {
	for _, seed := range archiveSeeds(f) {
		f.Add(seed)
	}
	f.Add([]byte("{\"type\":\"session_meta\"}\n"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		name := filepath.Join(dir, "source")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fromFile, skipped, err := (&Finder{FS: onlyFS{t, name}}).From(name, nil)
		fromStdin, skippedStdin, errStdin := (&Finder{FS: onlyFS{t, "-"}}).From("-", bytes.NewReader(data))
		names, content, archive, whole := members(data)
		for _, run := range []struct {
			src     string
			cands   []Candidate
			skipped []Skipped
			err     error
		}{{name, fromFile, skipped, err}, {"<stdin>", fromStdin, skippedStdin, errStdin}} {
			if run.err != nil {
				continue
			}
			if !archive {
				if len(run.cands) != 1 || run.cands[0].Name != run.src || len(run.skipped) != 0 {
					t.Fatalf("%s: not an archive, yet %d candidates, %d skipped", run.src, len(run.cands), len(run.skipped))
				}
				continue
			}
			if whole && len(run.cands)+len(run.skipped) > len(names) {
				t.Fatalf("%s: %d found and %d skipped of %d members", run.src, len(run.cands), len(run.skipped), len(names))
			}
			for _, c := range run.cands {
				member, ok := strings.CutPrefix(c.Name, run.src+"!")
				if !ok || c.Path != "" {
					t.Fatalf("%s: candidate %q (path %q) is not one of its members", run.src, c.Name, c.Path)
				}
				rc, err := c.Open()
				if err != nil {
					continue // a member that does not decompress: the parser reports it
				}
				got, rerr := io.ReadAll(io.LimitReader(rc, 1<<20))
				rc.Close()
				if whole && rerr == nil && !oneOf(got, content[member]) {
					t.Fatalf("%s: member %q reads %d bytes that the archive does not hold there", run.src, member, len(got))
				}
			}
		}
		if err == nil && errStdin == nil && archive {
			if a, b := memberNames(fromFile, name), memberNames(fromStdin, "<stdin>"); a != b {
				t.Fatalf("a file and standard input differ:\n%s\n%s", a, b)
			}
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("reading wrote beside the source: %v", ents)
		}
	})
}

func oneOf(b []byte, list [][]byte) bool {
	for _, x := range list {
		if bytes.Equal(b, x) || (len(x) > 1<<20 && bytes.Equal(b, x[:1<<20])) {
			return true
		}
	}
	return false
}

func memberNames(cands []Candidate, src string) string {
	var out []string
	for _, c := range cands {
		out = append(out, strings.TrimPrefix(c.Name, src))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// archiveSeeds are a zip, a tar and a tar.gz holding a transcript, a
// member that climbs out, one with an absolute name, a link, a directory
// and a macOS resource fork.
func archiveSeeds(f testing.TB) [][]byte {
	line := []byte("{\"timestamp\":\"2026-11-20T09:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019e0000-0000-7000-8000-000000000001\",\"cwd\":\"/w\"}}\n")
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	for _, n := range []string{"sessions/rollout-019e0000-0000-7000-8000-000000000001.jsonl", "../escape.jsonl", "/abs.jsonl", "dir/", "._x.jsonl"} {
		w, err := zw.Create(n)
		if err != nil {
			f.Fatal(err)
		}
		w.Write(line)
	}
	h := &zip.FileHeader{Name: "link.jsonl"}
	h.SetMode(fs.ModeSymlink | 0o777)
	w, _ := zw.CreateHeader(h)
	w.Write([]byte("/etc/passwd"))
	if err := zw.Close(); err != nil {
		f.Fatal(err)
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, n := range []string{"a.jsonl", "../escape.jsonl", "a.jsonl"} {
		tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(line)), ModTime: time.Unix(0, 0)})
		tw.Write(line)
	}
	tw.WriteHeader(&tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "../../x"})
	tw.WriteHeader(&tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "a.jsonl"})
	tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755})
	if err := tw.Close(); err != nil {
		f.Fatal(err)
	}
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(tb.Bytes())
	gw.Close()
	var plainGz bytes.Buffer
	gw = gzip.NewWriter(&plainGz)
	gw.Write(line)
	gw.Close()
	return [][]byte{z.Bytes(), tb.Bytes(), gz.Bytes(), plainGz.Bytes()}
}

// TestFromArchives reads the seeds as the design says: members found in
// place, links and hard links skipped with a reason, directories and
// resource forks left out, and a member named "../x" only a name.
func TestFromArchives(t *testing.T) {
	seeds := archiveSeeds(t)
	for i, want := range []struct {
		found   []string
		skipped []string
	}{
		{[]string{"!../escape.jsonl", "!/abs.jsonl", "!sessions/rollout-019e0000-0000-7000-8000-000000000001.jsonl"}, []string{"!link.jsonl: symbolic link: not followed"}},
		{[]string{"!../escape.jsonl", "!a.jsonl", "!a.jsonl"}, []string{"!h: hard link: not followed", "!l: symbolic link: not followed"}},
		{[]string{"!../escape.jsonl", "!a.jsonl", "!a.jsonl"}, []string{"!h: hard link: not followed", "!l: symbolic link: not followed"}},
		{[]string{""}, nil},
	} {
		dir := t.TempDir()
		name := filepath.Join(dir, "source")
		if err := os.WriteFile(name, seeds[i], 0o644); err != nil {
			t.Fatal(err)
		}
		cands, skipped, err := (&Finder{FS: onlyFS{t, name}}).From(name, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		var found, sk []string
		for _, c := range cands {
			found = append(found, strings.TrimPrefix(c.Name, name))
		}
		for _, s := range skipped {
			sk = append(sk, strings.TrimPrefix(s.Name, name)+": "+s.Why)
		}
		sort.Strings(found)
		sort.Strings(sk)
		if strings.Join(found, "|") != strings.Join(want.found, "|") || strings.Join(sk, "|") != strings.Join(want.skipped, "|") {
			t.Errorf("seed %d: found %q skipped %q; want %q %q", i, found, sk, want.found, want.skipped)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("seed %d: reading wrote beside the source", i)
		}
	}
	if _, _, err := (&Finder{}).From(filepath.Join(t.TempDir(), "missing"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing source: %v", err)
	}
}
