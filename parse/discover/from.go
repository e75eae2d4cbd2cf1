package discover

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// Skipped is something a source held that is not read, and why.
type Skipped struct {
	Name, Why string
}

// From finds the transcripts in what --from names: a directory tree, a
// zip, a tar (plain or gzip), a single transcript (plain, gzip or zstd), or
// "-" for standard input (any of those). Archives are recognised by their
// content and read in place; tar members are held in memory while they are
// read, and nothing is ever written to disk.
func (f *Finder) From(name string, stdin io.Reader) ([]Candidate, []Skipped, error) {
	f.Looked = append(f.Looked, name)
	if name == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, nil, fmt.Errorf("reading standard input: %w", err)
		}
		return f.blob("<stdin>", data)
	}
	info, err := f.fs().Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if info.IsDir() {
		return f.dir(name)
	}
	return f.file(name, info)
}

var (
	zipMagic  = []byte("PK\x03\x04")
	zipEmpty  = []byte("PK\x05\x06")
	gzipMagic = []byte{0x1f, 0x8b}
)

func isTar(head []byte) bool {
	return len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar"))
}

// file reads one file: an archive, or a transcript.
func (f *Finder) file(name string, info fs.FileInfo) ([]Candidate, []Skipped, error) {
	fh, err := f.fs().Open(name)
	if err != nil {
		return nil, nil, err
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(io.NewSectionReader(fh, 0, 512), head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, zipMagic) || bytes.HasPrefix(head, zipEmpty):
		defer fh.Close()
		zr, err := zip.NewReader(fh, info.Size())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		// Members are opened on demand, so the file stays open: reopen it per member.
		return f.zipMembers(name, zr, func() (*zip.Reader, func(), error) {
			g, err := f.fs().Open(name)
			if err != nil {
				return nil, nil, err
			}
			r, err := zip.NewReader(g, info.Size())
			if err != nil {
				g.Close()
				return nil, nil, err
			}
			return r, func() { g.Close() }, nil
		})
	case isTar(head):
		defer fh.Close()
		return f.tarMembers(name, io.NewSectionReader(fh, 0, info.Size()))
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(io.NewSectionReader(fh, 0, info.Size()))
		if err == nil {
			inner := make([]byte, 512)
			k, _ := io.ReadFull(zr, inner)
			zr.Close()
			if isTar(inner[:k]) {
				defer fh.Close()
				gz, err := gzip.NewReader(io.NewSectionReader(fh, 0, info.Size()))
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", name, err)
				}
				return f.tarMembers(name, gz)
			}
		}
	}
	fh.Close()
	return []Candidate{f.fileCandidate(name, info, "", "")}, nil, nil
}

// blob reads standard input's content the same way as a file's.
func (f *Finder) blob(name string, data []byte) ([]Candidate, []Skipped, error) {
	switch {
	case bytes.HasPrefix(data, zipMagic) || bytes.HasPrefix(data, zipEmpty):
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return f.zipMembers(name, zr, func() (*zip.Reader, func(), error) { return zr, func() {}, nil })
	case isTar(data):
		return f.tarMembers(name, bytes.NewReader(data))
	case bytes.HasPrefix(data, gzipMagic):
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			inner := make([]byte, 512)
			k, _ := io.ReadFull(zr, inner)
			if isTar(inner[:k]) {
				gz, _ := gzip.NewReader(bytes.NewReader(data))
				return f.tarMembers(name, gz)
			}
		}
	}
	return []Candidate{memCandidate(name, data)}, nil, nil
}

func memCandidate(name string, data []byte) Candidate {
	c := Candidate{Name: name, Size: int64(len(data)), ID: IDFromName(name)}
	c.open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	c.readAt = func() (io.ReaderAt, int64, func(), error) {
		return bytes.NewReader(data), int64(len(data)), func() {}, nil
	}
	return c
}

// memberOK says whether an archive member is a file worth reading.
func memberOK(name string, mode fs.FileMode) (bool, string) {
	switch {
	case mode&fs.ModeSymlink != 0:
		return false, "symbolic link: not followed"
	case mode.IsDir():
		return false, ""
	case !mode.IsRegular():
		return false, "not a regular file"
	case strings.HasPrefix(path.Base(name), "._"):
		return false, "" // macOS resource forks
	}
	return true, ""
}

func (f *Finder) zipMembers(name string, zr *zip.Reader, reopen func() (*zip.Reader, func(), error)) ([]Candidate, []Skipped, error) {
	var out []Candidate
	var skipped []Skipped
	for i, m := range zr.File {
		ok, why := memberOK(m.Name, m.Mode())
		if !ok {
			if why != "" {
				skipped = append(skipped, Skipped{name + "!" + m.Name, why})
			}
			continue
		}
		idx := i
		c := Candidate{Name: name + "!" + m.Name, ModTime: m.Modified, Size: int64(m.UncompressedSize64), ID: IDFromName(m.Name)}
		c.open = func() (io.ReadCloser, error) {
			r, done, err := reopen()
			if err != nil {
				return nil, err
			}
			rc, err := r.File[idx].Open()
			if err != nil {
				done()
				return nil, err
			}
			return readCloser{rc, func() error { err := rc.Close(); done(); return err }}, nil
		}
		out = append(out, c)
	}
	sortCandidates(out)
	return out, skipped, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

func (f *Finder) tarMembers(name string, r io.Reader) ([]Candidate, []Skipped, error) {
	var out []Candidate
	var skipped []Skipped
	tr := tar.NewReader(bufio.NewReaderSize(r, 1<<20))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, skipped, fmt.Errorf("%s: %w", name, err)
		}
		mode := h.FileInfo().Mode()
		if h.Typeflag == tar.TypeLink {
			skipped = append(skipped, Skipped{name + "!" + h.Name, "hard link: not followed"})
			continue
		}
		ok, why := memberOK(h.Name, mode)
		if !ok {
			if why != "" {
				skipped = append(skipped, Skipped{name + "!" + h.Name, why})
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return out, skipped, fmt.Errorf("%s!%s: %w", name, h.Name, err)
		}
		c := memCandidate(name+"!"+h.Name, data)
		c.ID = IDFromName(h.Name)
		c.ModTime = h.ModTime
		out = append(out, c)
	}
	sortCandidates(out)
	return out, skipped, nil
}

// dir walks a directory tree. Symbolic links are not followed; archives in
// it are read like --from archives.
func (f *Finder) dir(root string) ([]Candidate, []Skipped, error) {
	var out []Candidate
	var skipped []Skipped
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := f.fs().ReadDir(dir)
		if err != nil {
			skipped = append(skipped, Skipped{dir, err.Error()})
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				skipped = append(skipped, Skipped{p, "symbolic link: not followed"})
			case e.IsDir():
				walk(p)
			case e.Type().IsRegular():
				info, err := e.Info()
				if err != nil {
					continue
				}
				cands, sk, err := f.file(p, info)
				if err != nil {
					skipped = append(skipped, Skipped{p, err.Error()})
				}
				out = append(out, cands...)
				skipped = append(skipped, sk...)
			}
		}
	}
	walk(root)
	return out, skipped, nil
}
