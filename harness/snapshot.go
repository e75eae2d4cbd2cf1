package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"
)

// Skipped is a file a snapshot leaves out, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SnapshotResult is what a snapshot holds.
type SnapshotResult struct {
	Members int   // directories, files and links; SHA256SUMS aside
	Files   int   // regular files
	Bytes   int64 // of the files
	Skipped []Skipped
}

// Snapshot writes a session as a gzipped tarball: its record, workspace,
// logs and manifest, then SHA256SUMS, which lists every member (see
// sumsLine). It reads the session through an os.Root and follows no link:
// a link is kept as a link when restore would restore it (in home/, leading
// somewhere inside home/); any other link, and fifos, sockets, devices and
// files that are not part of a session, are left out and reported in
// Skipped. keep, if not nil, chooses the files (slash paths relative to the
// session directory), their directories implied.
func (s *Store) Snapshot(id string, w io.Writer, keep func(rel string) bool) (*SnapshotResult, error) {
	root, err := s.openSession(id, false)
	if err != nil {
		return nil, fmt.Errorf("no session %q: %w", id, err)
	}
	defer root.Close()
	if fi, err := root.Lstat(recordName); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("no session %q: its %s is missing or not a regular file", id, recordName)
	}
	zw := gzip.NewWriter(w)
	sw := &snapWriter{tw: tar.NewWriter(zw), keep: keep, res: &SnapshotResult{}}
	if err := sw.walk(root, ""); err != nil {
		return nil, err
	}
	if err := sw.writeLinks(); err != nil {
		return nil, err
	}
	body := sw.sums.Bytes()
	if err := sw.tw.WriteHeader(&tar.Header{Name: sumsName, Mode: 0o644, Size: int64(len(body)), ModTime: time.Now(), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := sw.tw.Write(body); err != nil {
		return nil, err
	}
	if err := sw.tw.Close(); err != nil {
		return nil, err
	}
	return sw.res, zw.Close()
}

type snapWriter struct {
	tw    *tar.Writer
	keep  func(string) bool
	res   *SnapshotResult
	sums  bytes.Buffer
	links []pendingLink
}

// pendingLink is a link found by the walk, written once every link is
// known: whether it stays inside home/ may depend on the others.
type pendingLink struct {
	name, target string
	info         fs.FileInfo
}

func (sw *snapWriter) skip(name, why string) {
	sw.res.Skipped = append(sw.res.Skipped, Skipped{Path: name, Reason: why})
}

// walk writes the members under dir (rel inside the session directory),
// each directory opened as a root after checking that it is one.
func (sw *snapWriter) walk(dir *os.Root, rel string) error {
	f, err := dir.Open(".")
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, n := range names {
		full := n
		if rel != "" {
			full = rel + "/" + n
		} else if n == lockName || strings.HasPrefix(n, ".") || strings.HasPrefix(n, KubePrefix) {
			continue // the run lock; temporary files of atomic writes; the kubernetes runtime's own
		}
		fi, err := dir.Lstat(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return err
		}
		kind := kindFile
		switch {
		case fi.IsDir():
			kind = kindDir
		case fi.Mode()&fs.ModeSymlink != 0:
			kind = kindLink
		case !fi.Mode().IsRegular():
			if sw.keep == nil || sw.keep(full) {
				sw.skip(full, kindOf(fi)+", which is not state")
			}
			continue
		}
		if kind != kindDir && sw.keep != nil && !sw.keep(full) {
			continue
		}
		why := checkName(full)
		if why == "" {
			why = placement(full, kind)
		}
		if why != "" {
			sw.skip(full, why)
			continue
		}
		switch kind {
		case kindDir:
			if sw.keep == nil {
				if err := sw.header(fi, full+"/", ""); err != nil {
					return err
				}
				sw.sums.WriteString(sumsLine(kindDir, nil, full))
			}
			sub, err := openStep(dir, n, false, full)
			if err != nil {
				return err
			}
			err = sw.walk(sub, full)
			sub.Close()
			if err != nil {
				return err
			}
		case kindLink:
			target, err := dir.Readlink(n)
			if err != nil {
				return err
			}
			sw.links = append(sw.links, pendingLink{full, target, fi})
		case kindFile:
			if err := sw.file(dir, n, full); err != nil {
				return err
			}
		}
	}
	return nil
}

func (sw *snapWriter) header(fi fs.FileInfo, name, link string) error {
	h, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return err
	}
	h.Name, h.Uname, h.Gname = name, "", ""
	sw.res.Members++
	return sw.tw.WriteHeader(h)
}

// file writes one regular file: opened without following a link, and as
// many bytes as it had when opened (a log that grows meanwhile is caught
// at that size).
func (sw *snapWriter) file(dir *os.Root, n, full string) error {
	f, err := openFile(dir, n, os.O_RDONLY, 0)
	var le *LinkError
	if errors.As(err, &le) {
		sw.skip(full, "it changed while the snapshot was taken")
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := sw.header(st, full, ""); err != nil {
		return err
	}
	sum := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(sw.tw, sum), f, st.Size()); err != nil {
		return fmt.Errorf("%s: %w (it shrank while the snapshot was taken?)", full, err)
	}
	sw.res.Files++
	sw.res.Bytes += st.Size()
	sw.sums.WriteString(sumsLine(kindFile, sum.Sum(nil), full))
	return nil
}

// writeLinks writes the links that restore would restore: those that lead
// inside home/ through the links kept. Leaving one out may change where
// another leads, so the check is repeated until none is left out.
func (sw *snapWriter) writeLinks() error {
	ls := &linkSet{links: map[string]string{}}
	for _, l := range sw.links {
		ls.links[l.name] = l.target
	}
	for changed := true; changed; {
		changed = false
		for _, l := range sw.links {
			if _, ok := ls.links[l.name]; !ok {
				continue
			}
			ls.steps = 0
			if err := ls.check(l.name); err != nil {
				sw.skip(l.name, fmt.Sprintf("a symbolic link to %q: %v; restore keeps only links that stay inside home/", l.target, err))
				delete(ls.links, l.name)
				changed = true
			}
		}
	}
	for _, l := range sw.links {
		if _, ok := ls.links[l.name]; !ok {
			continue
		}
		if err := sw.header(l.info, l.name, l.target); err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(l.target))
		sw.sums.WriteString(sumsLine(kindLink, sum[:], l.name))
	}
	return nil
}

// SnapFile is a file of a session kept elsewhere (a mirror), for
// SnapshotFiles: its slash path in the session directory, its size, and how
// to read it.
type SnapFile struct {
	Rel     string
	Size    int64
	ModTime time.Time
	Open    func() (io.ReadCloser, error)
}

// SnapshotFiles writes files as a snapshot in Snapshot's format, so that a
// session rebuilt from elsewhere restores (and is checked) like any
// snapshot. A file that has no place in a session is left out and
// reported in Skipped; the folders are implied.
func SnapshotFiles(w io.Writer, files []SnapFile) (*SnapshotResult, error) {
	zw := gzip.NewWriter(w)
	sw := &snapWriter{tw: tar.NewWriter(zw), res: &SnapshotResult{}}
	sort.Slice(files, func(i, j int) bool { return files[i].Rel < files[j].Rel })
	for _, f := range files {
		why := checkName(f.Rel)
		if why == "" {
			why = placement(f.Rel, kindFile)
		}
		if why != "" {
			sw.skip(f.Rel, why)
			continue
		}
		r, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Rel, err)
		}
		h := &tar.Header{Name: f.Rel, Mode: 0o600, Size: f.Size, ModTime: f.ModTime, Typeflag: tar.TypeReg}
		sw.res.Members++
		if err := sw.tw.WriteHeader(h); err != nil {
			r.Close()
			return nil, err
		}
		sum := sha256.New()
		_, err = io.CopyN(io.MultiWriter(sw.tw, sum), r, f.Size)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Rel, err)
		}
		sw.res.Files++
		sw.res.Bytes += f.Size
		sw.sums.WriteString(sumsLine(kindFile, sum.Sum(nil), f.Rel))
	}
	body := sw.sums.Bytes()
	if err := sw.tw.WriteHeader(&tar.Header{Name: sumsName, Mode: 0o644, Size: int64(len(body)), ModTime: time.Now(), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := sw.tw.Write(body); err != nil {
		return nil, err
	}
	if err := sw.tw.Close(); err != nil {
		return nil, err
	}
	return sw.res, zw.Close()
}
