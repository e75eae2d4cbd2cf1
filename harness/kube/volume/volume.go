// Package volume is what a Kubernetes session's volume holds, as the tar
// streams that copy it in and out: what a run copied in (Sent), and what
// comes back (ReadBack): HOME written into the session's store, the
// project's changes as manifest entries. It needs no Kubernetes client,
// so it is fuzzed and tested on its own.
package volume

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/bytesize"
	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/manifest"
	recov "github.com/agentsandbox/sandbox/recover"
)

// The volume's two folders: the agent's HOME and the project.
const (
	Home    = "home"
	Project = "project"
)

// Entry is one file of the project as it was copied in.
type Entry struct {
	Type   string      `json:"type"` // file, dir, link
	SHA256 string      `json:"sha256,omitempty"`
	Mode   fs.FileMode `json:"mode"`
	Link   string      `json:"link,omitempty"`
	Size   int64       `json:"size,omitempty"`
}

// Sent is what a run copied onto the volume.
type Sent struct {
	Project string           `json:"project"`
	Files   map[string]Entry `json:"files"`
	Home    bool             `json:"home,omitempty"` // HOME was seeded from the store
	// Returned says the project's changes were brought back; a copy-in
	// that was not (its harness died) is brought back before the next.
	Returned bool `json:"returned,omitempty"`
}

// Summary says how much was copied.
func (s *Sent) Summary() string {
	n, size := 0, int64(0)
	for _, e := range s.Files {
		if e.Type == "file" {
			n++
			size += e.Size
		}
	}
	out := fmt.Sprintf("the project (%s, %s)", plural.Count(n, "file"), bytesize.Human(size))
	if s.Home {
		out += " and the session's HOME"
	}
	return out
}

// ReadBack reads the volume's tar stream (home/ and project/): HOME's
// entries are written into root (an entry that cannot be is skipped, and
// said), and, given what was copied in, the project's changes are returned
// as manifest entries. Only a stream that cannot be read is an error.
func ReadBack(r io.Reader, root *os.Root, was *Sent) ([]manifest.File, []string, error) {
	var files []manifest.File
	var skipped []string
	seen := map[string]bool{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, skipped, err
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		top, rel, _ := strings.Cut(name, "/")
		if rel == "" {
			continue
		}
		switch top {
		case Home:
			if err := extract(root, rel, hdr, tr); err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %v", rel, err))
			}
		case Project:
			if was == nil || recov.IsJournalPath(rel) {
				continue
			}
			seen[rel] = true
			f, err := changed(rel, hdr, tr, was)
			if err != nil {
				return nil, skipped, fmt.Errorf("project %s: %w", rel, err)
			}
			if f != nil {
				files = append(files, *f)
			}
		}
	}
	if was != nil {
		// What the agent deleted.
		for rel, e := range was.Files {
			if e.Type == "file" && !seen[rel] {
				files = append(files, manifest.File{Path: harness.GuestWorkspace + "/" + rel, Confidence: "exact", Ops: 1,
					Start: digestOnly(e.SHA256), Final: manifest.State{State: manifest.StateAbsent}})
			}
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, skipped, nil
}

// PinStarts gives each change whose start is known only by its digest
// the host's copy as its start, when the host still holds what was copied
// in: apply then writes (or deletes) it. A host copy that changed
// meanwhile keeps the unknown start, and apply keeps the host's.
func PinStarts(files []manifest.File, project string) {
	root, err := os.OpenRoot(project)
	if err != nil {
		return
	}
	defer root.Close()
	for i := range files {
		f := &files[i]
		if f.Start.State != manifest.StateContent || f.Start.Content != nil {
			continue
		}
		rel := strings.TrimPrefix(f.Path, harness.GuestWorkspace+"/")
		if fi, err := root.Lstat(rel); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b, err := root.ReadFile(rel)
		if err == nil && SHA(string(b)) == f.Start.SHA256 {
			f.Start = manifest.NewState(true, true, string(b), true, SHA)
		}
	}
}

// extract writes one entry of HOME into root.
func extract(root *os.Root, rel string, hdr *tar.Header, r io.Reader) error {
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := fs.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(rel, mode|0o700)
	case tar.TypeSymlink:
		return root.Symlink(hdr.Linkname, rel)
	case tar.TypeReg:
		// A later entry of one name wins, as with tar.
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return nil // a hard link, a FIFO: not kept
}

// changed is a project file's manifest entry when the agent changed it
// (its content differs from what was copied in), else nil. The start is
// what was copied in, said by its digest: apply writes the file when the
// host still holds that, and otherwise keeps the host's and writes the
// agent's beside it.
func changed(rel string, hdr *tar.Header, r io.Reader, was *Sent) (*manifest.File, error) {
	if hdr.Typeflag != tar.TypeReg {
		return nil, nil // folders come with their files; links are not copied back
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	now := hex.EncodeToString(sum[:])
	before, ok := was.Files[rel]
	if ok && before.Type == "file" && before.SHA256 == now {
		return nil, nil
	}
	f := &manifest.File{Path: harness.GuestWorkspace + "/" + rel, Confidence: "exact", Ops: 1,
		Start: manifest.State{State: manifest.StateAbsent},
		Final: manifest.NewState(true, true, string(data), true, SHA)}
	if ok && before.Type == "file" {
		f.Start = digestOnly(before.SHA256)
	}
	return f, nil
}

// SHA is the hex sha256 of s.
func SHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// digestOnly is a start known by its digest alone.
func digestOnly(sum string) manifest.State {
	return manifest.State{State: manifest.StateContent, SHA256: sum}
}
