package harness

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// SumsName is the checksum list, the last member of a snapshot.
const SumsName = "SHA256SUMS"

// Snapshot writes a session as a gzipped tarball: its record, workspace,
// logs and manifest, then the sha256 of every file. keep, if not nil,
// chooses the members (relative slash paths).
func (s *Store) Snapshot(id string, w io.Writer, keep func(rel string) bool) error {
	dir := s.Dir(id)
	if _, err := os.Stat(filepath.Join(dir, "session.json")); err != nil {
		return fmt.Errorf("no session %q: %w", id, err)
	}
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	var sums []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == "run.lock" || strings.HasPrefix(d.Name(), ".session.json.") {
			return nil
		}
		if keep != nil && !d.IsDir() && !keep(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			return nil // sockets, fifos: not state
		}
		if keep != nil && info.IsDir() {
			return nil // only the chosen files, their directories implied
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name, h.Uname, h.Gname = rel, "", ""
		if info.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sum := sha256.New()
		if _, err := io.Copy(io.MultiWriter(tw, sum), f); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		sums = append(sums, hex.EncodeToString(sum.Sum(nil))+"  "+rel)
		return nil
	})
	if err != nil {
		return err
	}
	body := strings.Join(sums, "\n") + "\n"
	if err := tw.WriteHeader(&tar.Header{Name: SumsName, Mode: 0o644, Size: int64(len(body)), ModTime: time.Now(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, body); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// Restore unpacks a snapshot as a session named name (its own name when
// empty), checking every file against the snapshot's checksums first. It
// never writes outside the new session's directory, and leaves nothing
// behind when it fails.
func (s *Store) Restore(r io.Reader, name string) (*Session, error) {
	if err := os.MkdirAll(filepath.Join(s.Root, "sessions"), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Join(s.Root, "sessions"), ".restore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	got, want, err := extract(r, tmp)
	if err != nil {
		return nil, err
	}
	if want == nil {
		return nil, fmt.Errorf("no %s in the archive: not a sandbox snapshot", SumsName)
	}
	for name, sum := range want {
		if g, ok := got[name]; !ok {
			return nil, fmt.Errorf("snapshot is incomplete: %s is listed in %s but missing", name, SumsName)
		} else if g != sum {
			return nil, fmt.Errorf("snapshot is corrupt: %s has sha256 %s, %s says %s", name, g, SumsName, sum)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			return nil, fmt.Errorf("snapshot holds %s, which %s does not list", name, SumsName)
		}
	}
	b, err := os.ReadFile(filepath.Join(tmp, "session.json"))
	if err != nil {
		return nil, errors.New("snapshot has no session.json")
	}
	var sess Session
	if err := json.Unmarshal(b, &sess); err != nil {
		return nil, fmt.Errorf("snapshot session.json: %w", err)
	}
	old := sess.ID
	if name == "" {
		name = sess.ID
	}
	if err := ValidName(name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.Dir(name)); err == nil {
		return nil, fmt.Errorf("session %s exists already; restore it under another --name", name)
	}
	sess.ID, sess.Name = name, name
	sess.HarnessPID, sess.ChildPID, sess.Container = 0, 0, ""
	if sess.State == StateRunning {
		sess.State = StateDropped
	}
	if err := os.Rename(tmp, s.Dir(name)); err != nil {
		return nil, err
	}
	if err := s.Save(&sess); err != nil {
		return nil, err
	}
	_ = s.Event(name, "session_restored", map[string]any{"from_session": old, "files": len(got), "agent_session_id": sess.AgentSessionID})
	return &sess, nil
}

// extract unpacks a gzipped tarball under dir through an os.Root, so no
// member can land outside it, and returns the sha256 of every regular file
// and the checksum list.
func extract(r io.Reader, dir string) (map[string]string, map[string]string, error) {
	zr, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, nil, fmt.Errorf("not a gzipped snapshot: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	tr := tar.NewReader(zr)
	got := map[string]string{}
	var want map[string]string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("snapshot: %w", err)
		}
		if sparse(h) {
			return nil, nil, fmt.Errorf("snapshot member %s: a sparse file, which sandbox snapshot never writes", h.Name)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !filepath.IsLocal(name) {
			return nil, nil, fmt.Errorf("snapshot member %q escapes the session directory", h.Name)
		}
		if name == SumsName {
			want, err = readSums(tr)
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil && filepath.Dir(name) != "." {
			return nil, nil, fmt.Errorf("snapshot member %s: %w", name, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return nil, nil, fmt.Errorf("snapshot member %s: %w", name, err)
			}
		case tar.TypeSymlink:
			if err := root.Symlink(h.Linkname, name); err != nil {
				return nil, nil, fmt.Errorf("snapshot member %s: %w", name, err)
			}
		case tar.TypeReg:
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(h.Mode)&0o777)
			if err != nil {
				return nil, nil, fmt.Errorf("snapshot member %s: %w", name, err)
			}
			sum := sha256.New()
			_, err = io.Copy(io.MultiWriter(f, sum), tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, nil, fmt.Errorf("snapshot member %s: %w", name, err)
			}
			got[name] = hex.EncodeToString(sum.Sum(nil))
			_ = root.Chtimes(name, h.ModTime, h.ModTime)
		default:
			return nil, nil, fmt.Errorf("snapshot member %s: unsupported type %q", name, h.Typeflag)
		}
	}
	return got, want, nil
}

// sparse reports a GNU sparse member, whose logical size can be far beyond
// the archive's.
func sparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

func readSums(r io.Reader) (map[string]string, error) {
	want := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			return nil, fmt.Errorf("%s line %d: want \"<sha256>  <path>\"", SumsName, n)
		}
		want[name] = sum
	}
	return want, sc.Err()
}

// GCOptions are the flags of sandbox gc.
type GCOptions struct {
	Idle   time.Duration // stop running sessions idle this long (0: never)
	TTL    time.Duration // remove ended sessions older than this (0: never)
	DryRun bool
	Now    time.Time
}

// GCAction is one thing gc did, or would do.
type GCAction struct {
	Session string `json:"session,omitempty"`
	Action  string `json:"action"` // stop, remove, remove-container
	Reason  string `json:"reason"`
	Archive string `json:"archive,omitempty"`
	Error   string `json:"error,omitempty"`
}

// GC stops idle sessions, removes expired ones (keeping their record,
// manifest and runtime log in archive/), and removes containers the
// harness left behind.
func (s *Store) GC(ctx context.Context, o GCOptions) ([]GCAction, error) {
	sessions, _, err := s.List() // a damaged record is left alone: ps reports it
	if err != nil {
		return nil, err
	}
	var acts []GCAction
	live := map[string]bool{}
	for _, sess := range sessions {
		s.Check(ctx, sess)
		idle := o.Now.Sub(s.LastActive(sess))
		if s.Running(sess) {
			live[sess.ID] = true
			if o.Idle > 0 && idle >= o.Idle {
				a := GCAction{Session: sess.ID, Action: "stop", Reason: fmt.Sprintf("idle for %s", idle.Round(time.Second))}
				if !o.DryRun {
					if _, err := s.Stop(ctx, sess, 10*time.Second); err != nil {
						a.Error = err.Error()
					}
				}
				acts = append(acts, a)
			}
			continue
		}
		if o.TTL <= 0 || idle < o.TTL {
			continue
		}
		a := GCAction{Session: sess.ID, Action: "remove", Reason: fmt.Sprintf("ended, inactive for %s", idle.Round(time.Second))}
		a.Archive = filepath.Join(s.Root, "archive", sess.ID+"-"+o.Now.UTC().Format("20060102T150405Z")+".tar.gz")
		if !o.DryRun {
			if err := s.archive(sess.ID, a.Archive); err != nil {
				a.Error = err.Error()
			} else if err := s.Remove(ctx, sess); err != nil {
				a.Error = err.Error()
			}
		}
		acts = append(acts, a)
	}
	for _, n := range []string{"docker", "podman"} {
		rt, _ := NewRuntime(n)
		if rt.Available(ctx) != nil {
			continue
		}
		names, err := Leftovers(ctx, rt, s.Root)
		if err != nil {
			continue
		}
		sort.Strings(names)
		for _, c := range names {
			id := sessionOfContainer(c)
			if live[id] {
				continue
			}
			a := GCAction{Session: id, Action: "remove-container", Reason: n + " container " + c + " left behind"}
			if !o.DryRun {
				if err := RemoveContainer(ctx, rt, c); err != nil {
					a.Error = err.Error()
				}
			}
			acts = append(acts, a)
		}
	}
	return acts, nil
}

// sessionOfContainer reads the session id out of sandbox-<id>-<run>.
func sessionOfContainer(name string) string {
	name = strings.TrimPrefix(name, "sandbox-")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

// archive keeps what a removed session leaves: its record, manifest and
// logs.
func (s *Store) archive(id, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	keep := func(rel string) bool {
		return rel == "session.json" || rel == "manifest.json" || strings.HasPrefix(rel, "logs/")
	}
	return WriteFileAtomic(path, func(w io.Writer) error { return s.Snapshot(id, w, keep) })
}
