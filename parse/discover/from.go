package discover

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/objstore"
)

// StdinName is the name standard input's transcripts go by ("-" on the
// command line).
const StdinName = "<stdin>"

// Skipped is something a source held that is not read, and why.
type Skipped struct {
	Name, Why string
}

// From finds the transcripts in what --from names: a directory tree, a
// zip, a tar (plain or gzip), a single transcript (plain, gzip or zstd),
// "-" for standard input (any of those), or an s3:// URL (a prefix, or one
// object of any of those kinds, read through f.S3). Archives are recognised by their
// content and read in place, one member at a time as a stream: a member is
// never held whole in memory (a compressed tar, which has no index, is
// decompressed once into an unlinked temporary file: tarMembers). Standard input is copied once into a private
// temporary file that is unlinked at once (so nothing remains, even after a
// kill), because it must be read more than once.
func (f *Finder) From(name string, stdin io.Reader) ([]Candidate, []Skipped, error) {
	f.Looked = append(f.Looked, name)
	if f.Vaults != nil {
		if cands, skipped, ok, err := f.Vaults(f, name); ok {
			return cands, skipped, err
		}
	}
	if objstore.IsURL(name) {
		return f.s3(name)
	}
	if name == "-" {
		spool, size, err := spoolStdin(stdin)
		if err != nil {
			return nil, nil, err
		}
		// The spool lives as long as the candidates: it is never closed
		// here, and the process's exit releases it.
		return f.readerAt(StdinName, spool, size, time.Time{}, func() (io.ReaderAt, func(), error) { return spool, func() {}, nil })
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

// spoolStdin copies standard input into an unlinked temporary file.
func spoolStdin(stdin io.Reader) (*os.File, int64, error) {
	tmp, err := os.CreateTemp("", "sandbox-stdin-*")
	if err != nil {
		return nil, 0, fmt.Errorf("reading standard input: %w", err)
	}
	_ = os.Remove(tmp.Name()) // unlinked: it goes away with the last descriptor
	n, err := io.Copy(tmp, stdin)
	if err != nil {
		tmp.Close()
		return nil, 0, fmt.Errorf("reading standard input: %w", err)
	}
	return tmp, n, nil
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
	defer fh.Close()
	magic := make([]byte, len(sqliteMagic))
	if n, _ := fh.ReadAt(magic, 0); isSQLite(magic[:n]) {
		// An agent's database on the host: SQLite reads it in place.
		cands, err := f.storeDB(name, name, time.Time{}, "")
		return cands, nil, err
	}
	reopen := func() (io.ReaderAt, func(), error) {
		g, err := f.fs().Open(name)
		if err != nil {
			return nil, nil, err
		}
		return g, func() { g.Close() }, nil
	}
	cands, skipped, err := f.readerAt(name, fh, info.Size(), info.ModTime(), reopen)
	if cands == nil && skipped == nil && err == nil {
		return []Candidate{f.fileCandidate(name, info, "", "")}, nil, nil
	}
	return cands, skipped, err
}

// readerAt reads content that can be read at any offset (a file, or the
// spool of standard input): the members of an archive, or for a plain
// transcript nothing from a file (the caller makes its candidate) and one
// candidate for standard input. reopen gives a fresh reader for each later
// open of a member.
func (f *Finder) readerAt(name string, ra io.ReaderAt, size int64, mod time.Time, reopen func() (io.ReaderAt, func(), error)) ([]Candidate, []Skipped, error) {
	head := make([]byte, 512)
	n, _ := io.ReadFull(io.NewSectionReader(ra, 0, size), head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, zipMagic) || bytes.HasPrefix(head, zipEmpty):
		zr, err := zip.NewReader(ra, size)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return f.zipMembers(name, zr, func() (*zip.Reader, func(), error) {
			g, done, err := reopen()
			if err != nil {
				return nil, nil, err
			}
			r, err := zip.NewReader(g, size)
			if err != nil {
				done()
				return nil, nil, err
			}
			return r, done, nil
		})
	case isTar(head):
		return f.tarMembers(name, func() (io.Reader, func(), error) {
			g, done, err := reopen()
			if err != nil {
				return nil, nil, err
			}
			return io.NewSectionReader(g, 0, size), done, nil
		}, reopen)
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(io.NewSectionReader(ra, 0, size))
		if err == nil {
			inner := make([]byte, 512)
			k, _ := io.ReadFull(zr, inner)
			zr.Close()
			if isTar(inner[:k]) {
				return f.tarMembers(name, func() (io.Reader, func(), error) {
					g, done, err := reopen()
					if err != nil {
						return nil, nil, err
					}
					gz, err := gzip.NewReader(io.NewSectionReader(g, 0, size))
					if err != nil {
						done()
						return nil, nil, fmt.Errorf("%s: %w", name, err)
					}
					return gz, func() { gz.Close(); done() }, nil
				}, nil)
			}
		}
	}
	// Content that is no file on the host (standard input, an object in
	// object storage) holds a database SQLite cannot open in place.
	if isSQLite(head) && (name == StdinName || objstore.IsURL(name)) {
		cands, err := f.spoolDB(name, io.NewSectionReader(ra, 0, size), nil)
		return cands, nil, err
	}
	if name != StdinName {
		return nil, nil, nil // a plain file or object: the caller's candidate
	}
	c := Candidate{Name: name, Size: size, ModTime: mod, ID: iDFromName(name)}
	c.open = func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(ra, 0, size)), nil }
	c.readAt = func() (io.ReaderAt, int64, func(), error) { return ra, size, func() {}, nil }
	return []Candidate{c}, nil, nil
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
	dbs := &dbSpools{spools: f.spools()}
	for i, m := range zr.File {
		ok, why := memberOK(m.Name, m.Mode())
		if !ok {
			if why != "" {
				skipped = append(skipped, Skipped{name + "!" + m.Name, why})
			}
			continue
		}
		if rc, err := m.Open(); err == nil {
			if done, err := dbs.offer(name+"!"+m.Name, rc); done || err != nil {
				rc.Close()
				if err != nil {
					skipped = append(skipped, Skipped{name + "!" + m.Name, err.Error()})
				}
				continue
			}
			rc.Close()
		}
		idx := i
		c := Candidate{Name: name + "!" + m.Name, ModTime: m.Modified, Size: int64(m.UncompressedSize64), ID: iDFromName(m.Name)}
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
	out = append(out, dbs.open(f, &skipped)...)
	sortCandidates(out)
	if out == nil {
		// An archive with no member worth reading holds no transcript; nil
		// would make its caller read the archive itself as one.
		out = []Candidate{}
	}
	return out, skipped, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// tarMembers lists the members of a tar stream (plain or inside gzip)
// without holding their content, and notes where each member's bytes
// start. A plain tar (seekable is not nil) is listed by seeking past the
// members, and a member is read in place at its offset. A compressed one
// has no index to jump by: what its listing decompresses is copied once
// into a private unlinked temporary file (at most MaxTarSpool bytes), and a
// member is read there at its offset. Reading each member by starting the
// stream again and reading through to it made a salvage of a .tar.gz of
// N transcripts decompress it about N²/2 times: 28 s for 200 transcripts
// of 29 MB, 108 s for 400. That remains the way only when the copy could
// not be made (no space, no temporary directory) or would be too large (an
// archive bomb), or for a member the copy does not hold whole.
func (f *Finder) tarMembers(name string, stream func() (io.Reader, func(), error), seekable func() (io.ReaderAt, func(), error)) ([]Candidate, []Skipped, error) {
	var out []Candidate
	var skipped []Skipped
	r, done, err := stream()
	if err != nil {
		return nil, nil, err
	}
	defer done()
	var (
		pos interface{ at() int64 }
		sp  *tarSpool
		tr  *tar.Reader
	)
	if s, ok := r.(io.ReadSeeker); ok && seekable != nil {
		cs := &tarSeekPos{tarPos: tarPos{r: s}, s: s}
		pos, tr = cs, tar.NewReader(cs)
	} else {
		if sp = newTarSpool(); sp != nil {
			r = io.TeeReader(r, sp)
		}
		cr := &tarPos{r: bufio.NewReaderSize(r, 1<<20)}
		pos, tr = cr, tar.NewReader(cr)
	}
	dbs := &dbSpools{spools: f.spools()}
	for idx := 0; ; idx++ {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, skipped, fmt.Errorf("%s: %w", name, err)
		}
		mode := h.FileInfo().Mode()
		switch {
		case h.Typeflag == tar.TypeLink:
			skipped = append(skipped, Skipped{name + "!" + h.Name, "hard link: not followed"})
			continue
		case h.Typeflag == tar.TypeGNUSparse || (h.Typeflag == tar.TypeReg && len(h.PAXRecords) > 0 && h.PAXRecords["GNU.sparse.major"] != ""):
			skipped = append(skipped, Skipped{name + "!" + h.Name, "sparse file: not read"})
			continue
		}
		ok, why := memberOK(h.Name, mode)
		if !ok {
			if why != "" {
				skipped = append(skipped, Skipped{name + "!" + h.Name, why})
			}
			continue
		}
		at, off, size := idx, pos.at(), h.Size
		if done, err := dbs.offer(name+"!"+h.Name, tr); done || err != nil {
			if err != nil {
				skipped = append(skipped, Skipped{name + "!" + h.Name, err.Error()})
			}
			continue
		}
		c := Candidate{Name: name + "!" + h.Name, ID: iDFromName(h.Name), ModTime: h.ModTime, Size: h.Size}
		c.open = func() (io.ReadCloser, error) {
			switch {
			case seekable != nil && sp == nil:
				g, done, err := seekable()
				if err != nil {
					return nil, err
				}
				return readCloser{io.NewSectionReader(g, off, size), func() error { done(); return nil }}, nil
			case sp.holds(off + size):
				return io.NopCloser(io.NewSectionReader(sp.f, off, size)), nil
			}
			return openTarMember(name, stream, at)
		}
		out = append(out, c)
	}
	out = append(out, dbs.open(f, &skipped)...)
	sortCandidates(out)
	if out == nil {
		// An archive with no member worth reading holds no transcript; nil
		// would make its caller read the archive itself as one.
		out = []Candidate{}
	}
	return out, skipped, nil
}

// maxTarSpool bounds the copy of a compressed tar's content that its
// members are read from (tarMembers): past it, an archive is read again
// for each member instead.
var maxTarSpool int64 = 4 << 30

// tarSpool is the copy of a compressed tar's content: an unlinked
// temporary file, so nothing remains after the process, even killed. A
// write that fails (no space left) or would pass MaxTarSpool stops the
// copy without failing the listing; the copy then holds what was written
// before.
type tarSpool struct {
	f    *os.File
	size int64
	stop bool
}

func newTarSpool() *tarSpool {
	f, err := os.CreateTemp("", "sandbox-tar-*")
	if err != nil {
		return nil
	}
	_ = os.Remove(f.Name())
	return &tarSpool{f: f}
}

func (s *tarSpool) Write(p []byte) (int, error) {
	if !s.stop {
		if s.size+int64(len(p)) > maxTarSpool {
			s.stop = true
		} else if n, err := s.f.Write(p); err != nil {
			s.size += int64(n)
			s.stop = true
		} else {
			s.size += int64(n)
		}
	}
	return len(p), nil
}

// holds reports whether the copy holds the content's first end bytes.
func (s *tarSpool) holds(end int64) bool { return s != nil && end <= s.size }

// tarPos and tarSeekPos tell how far a tar.Reader has read: after Next,
// where the member's content starts. tarSeekPos lets it seek past content.
type tarPos struct {
	r io.Reader
	n int64
}

func (c *tarPos) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *tarPos) at() int64 { return c.n }

type tarSeekPos struct {
	tarPos
	s io.Seeker
}

func (c *tarSeekPos) Seek(offset int64, whence int) (int64, error) {
	n, err := c.s.Seek(offset, whence)
	if err == nil {
		c.n = n
	}
	return n, err
}

// openTarMember streams the at-th member of a tar stream.
func openTarMember(name string, stream func() (io.Reader, func(), error), at int) (io.ReadCloser, error) {
	r, done, err := stream()
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(bufio.NewReaderSize(r, 1<<20))
	for i := 0; ; i++ {
		_, err := tr.Next()
		if err != nil {
			done()
			if err == io.EOF {
				err = errors.New("member not found again: the archive changed while it was read")
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if i == at {
			return readCloser{tr, func() error { done(); return nil }}, nil
		}
	}
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
				// An agent's file store: its sessions, not its files one by one.
				if cands, ok := f.storeDir(p); ok {
					out = append(out, cands...)
					continue
				}
				walk(p)
			case strings.HasSuffix(e.Name(), ".db-wal") || strings.HasSuffix(e.Name(), ".db-shm"):
				// SQLite's log and index: read with their database.
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

// Kept makes the candidates of a file a vault keeps (one version of it):
// the sessions of a database, spooled to a private file as SQLite needs, or
// one transcript read through reopen as it is asked for. name is how it is
// called in messages; mod is when the vault first held it; db says the file
// was kept as a database.
func (f *Finder) Kept(name string, size int64, mod time.Time, db bool, reopen func() (io.ReaderAt, func(), error)) ([]Candidate, error) {
	if db {
		ra, done, err := reopen()
		if err != nil {
			return nil, err
		}
		defer done()
		head := make([]byte, len(sqliteMagic))
		if n, _ := ra.ReadAt(head, 0); isSQLite(head[:n]) {
			return f.spoolDB(name, io.NewSectionReader(ra, 0, size), nil)
		}
	}
	c := Candidate{Name: name, Size: size, ModTime: mod, ID: iDFromName(name)}
	c.open = func() (io.ReadCloser, error) {
		ra, done, err := reopen()
		if err != nil {
			return nil, err
		}
		return readCloser{io.NewSectionReader(ra, 0, size), func() error { done(); return nil }}, nil
	}
	c.readAt = func() (io.ReaderAt, int64, func(), error) {
		ra, done, err := reopen()
		return ra, size, done, err
	}
	return []Candidate{c}, nil
}

// KeptStore makes the candidates of a file store a vault keeps file by
// file: the files (by their slash paths in the store folder) are spooled
// into a private folder, removed with the Finder's other spools, and read
// as the store they are. name is how the store is called in messages.
func (f *Finder) KeptStore(name string, files map[string]func() (io.ReadCloser, error)) ([]Candidate, error) {
	dir, err := os.MkdirTemp("", "sandbox-store-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.spools().add(dir)
	root := filepath.Join(dir, path.Base(name))
	for rel, open := range files {
		clean := path.Clean("/" + rel)[1:]
		if clean == "" || clean != rel {
			continue // a name that would leave the folder
		}
		p := filepath.Join(root, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r, err := open()
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", name, rel, err)
		}
		err = spoolFile(p, r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", name, rel, err)
		}
	}
	cands, ok := f.storeDir(root)
	if !ok {
		return nil, fmt.Errorf("%s: not a store any agent reads", name)
	}
	return cands, nil
}
