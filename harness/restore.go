package harness

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// RestoreLimits bound what restore unpacks, so that a decompression bomb
// (a small snapshot that claims, or holds, terabytes or millions of
// members) is refused at the first member beyond them, before its bytes
// are read.
type RestoreLimits struct {
	MaxBytes   int64 // the total size of the files
	MaxMembers int   // members of every kind
}

// DefaultRestoreLimits are far beyond a working session (transcripts,
// settings, caches), and below what fills a disk by surprise.
var DefaultRestoreLimits = RestoreLimits{MaxBytes: 16 << 30, MaxMembers: 1_000_000}

// maxNameBytes bounds the names and link targets restore keeps in memory
// while it checks a snapshot.
const maxNameBytes = 256 << 20

// RestoreOptions are the options of sandbox restore.
type RestoreOptions struct {
	Name   string        // the session's name; empty: the snapshot's own
	Limits RestoreLimits // zero fields: DefaultRestoreLimits'
	// Ctx, when done, stops the restore before the session is placed:
	// nothing is left (the reader should fail its reads too, so that a
	// long snapshot stops at once).
	Ctx context.Context
}

// SnapshotError is a snapshot that restore refuses: the member at fault
// (empty when the fault is the snapshot's as a whole) and what is wrong.
type SnapshotError struct {
	Member  string
	Problem string
	// Limit is set when a size or count limit was reached, which the user
	// may raise for a snapshot they trust.
	Limit bool
}

func (e *SnapshotError) Error() string {
	if e.Member == "" {
		return e.Problem
	}
	return fmt.Sprintf("member %q: %s", e.Member, e.Problem)
}

func refuse(member, format string, args ...any) *SnapshotError {
	return &SnapshotError{Member: member, Problem: fmt.Sprintf(format, args...)}
}

// Restore brings a snapshot back as a session: o.Name, or the snapshot's
// own name. It reads the snapshot twice. The first pass checks it whole
// and writes nothing: every member's name, kind and place in a session,
// its checksum against SHA256SUMS (links by their target), that every
// member is listed and every listed member present, that no link leads
// out of home/, and the limits. The second unpacks it into a temporary
// directory in the store (through an os.Root, no link ever followed),
// checking every byte again against the first pass, and renames it into
// place only when all is well. A refused or interrupted restore leaves no
// session: the temporary directory is removed, or, after a crash, by the
// next restore or gc. A refusal is a *SnapshotError.
func (s *Store) Restore(r io.ReadSeeker, o RestoreOptions) (*Session, error) {
	lim := o.Limits
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultRestoreLimits.MaxBytes
	}
	if lim.MaxMembers <= 0 {
		lim.MaxMembers = DefaultRestoreLimits.MaxMembers
	}
	start, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	p, err := verify(r, lim)
	if err != nil {
		return nil, err
	}
	var sess Session
	if err := json.Unmarshal(p.record, &sess); err != nil {
		return nil, refuse(recordName, "not a session record: %v", err)
	}
	old := sess.ID
	name := o.Name
	if name == "" {
		name = sess.ID
	}
	if err := ValidName(name); err != nil {
		if o.Name == "" {
			return nil, fmt.Errorf("the snapshot's own name: %w; give --name", err)
		}
		return nil, err
	}
	if _, err := os.Lstat(s.Dir(name)); err == nil {
		return nil, fmt.Errorf("session %s exists already; restore it under another --name", name)
	}

	// Only now is anything created.
	sessions := filepath.Join(s.Root, "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		return nil, err
	}
	s.removeStaleRestores()
	tmp, err := os.MkdirTemp(sessions, restorePrefix)
	if err != nil {
		return nil, err
	}
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(tmp)
		}
	}()
	// The lock tells a later restore or gc that this directory is in use:
	// one left by a restore that was killed has no holder, and is removed.
	lock, err := os.Open(tmp)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if _, err := r.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	if err := extract(r, root, p); err != nil {
		return nil, err
	}

	sess.ID, sess.Name = name, name
	sess.HarnessPID, sess.ChildPID, sess.Container = 0, 0, ""
	if sess.State == StateRunning {
		sess.State = StateDropped
	}
	if err := saveIn(root, &sess); err != nil {
		return nil, err
	}
	// The event goes into the new session's own log, in the temporary
	// directory, through no link: it is there when the session appears.
	if err := eventIn(root, name, "session_restored", map[string]any{"from_session": old, "files": p.files, "bytes": p.total,
		"agent_session_id": sess.AgentSessionID}); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(s.Dir(name)); err == nil {
		return nil, fmt.Errorf("session %s exists already; restore it under another --name", name)
	}
	if o.Ctx != nil && o.Ctx.Err() != nil {
		return nil, o.Ctx.Err() // interrupted: the session is never placed
	}
	if err := os.Rename(tmp, s.Dir(name)); err != nil {
		return nil, err
	}
	placed = true
	if sess.AgentSessionID == "" {
		// A session whose record never learnt the agent's id (its
		// workspace was deleted before the run's end looked for it, as a
		// mirror keeps it) finds it in the transcripts it brought.
		s.FindAgentSession(&sess)
		if sess.AgentSessionID != "" {
			_ = s.Save(&sess) // placed already: without it, resume asks for the id
		}
	}
	return &sess, nil
}

// restorePrefix names the temporary directories of restores in progress
// (List skips names that start with a dot).
const restorePrefix = ".restore-"

// removeStaleRestores removes the temporary directories of restores that
// were killed: those whose lock no process holds.
func (s *Store) removeStaleRestores() {
	sessions := filepath.Join(s.Root, "sessions")
	entries, err := os.ReadDir(sessions)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), restorePrefix) {
			continue
		}
		p := filepath.Join(sessions, e.Name())
		if !e.IsDir() {
			os.Remove(p) // not ours
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(p) // RemoveAll removes links, never what they point to
		}
		f.Close()
	}
}

// member is what the first pass learnt of one member.
type member struct {
	kind   memberKind
	size   int64
	sum    [32]byte // of the bytes of a file, of the target of a link
	target string   // of a link
	listed bool     // in SHA256SUMS
	seen   bool     // by the second pass
}

// plan is a snapshot checked by the first pass.
type plan struct {
	members map[string]*member
	files   int
	total   int64
	sums    [32]byte // of SHA256SUMS itself
	record  []byte   // session.json
}

// verify is the first pass: it reads the snapshot through, writing
// nothing, holding no member whole, and returns it checked.
func verify(r io.Reader, lim RestoreLimits) (*plan, error) {
	zr, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, refuse("", "not a gzipped snapshot: %v", err)
	}
	tr := tar.NewReader(zr)
	p := &plan{members: map[string]*member{}}
	count, nameBytes := 0, 0
	sumsSeen := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, refuse("", "the snapshot is damaged: %v", err)
		}
		if sumsSeen {
			return nil, refuse(h.Name, "comes after %s, which must be the last member", sumsName)
		}
		name, kind, serr := memberOf(h)
		if serr != nil {
			return nil, serr
		}
		if count++; count > lim.MaxMembers {
			return nil, &SnapshotError{Member: name, Problem: fmt.Sprintf("more than %d members in the snapshot, the limit", lim.MaxMembers), Limit: true}
		}
		if h.Size > lim.MaxBytes-p.total {
			return nil, &SnapshotError{Member: name, Problem: fmt.Sprintf("%d bytes, which would bring the snapshot beyond the limit of %d bytes in all", h.Size, lim.MaxBytes), Limit: true}
		}
		if name == sumsName {
			if kind != kindFile {
				return nil, refuse(name, "a %s, not the checksum list", kind)
			}
			sum := sha256.New()
			if err := p.checkSums(io.TeeReader(tr, sum), lim); err != nil {
				return nil, err
			}
			copy(p.sums[:], sum.Sum(nil))
			sumsSeen = true
			continue
		}
		if why := placement(name, kind); why != "" {
			return nil, refuse(name, "%s", why)
		}
		if _, dup := p.members[name]; dup {
			return nil, refuse(name, "appears twice in the snapshot")
		}
		if nameBytes += len(name) + len(h.Linkname); nameBytes > maxNameBytes {
			return nil, &SnapshotError{Member: name, Problem: fmt.Sprintf("names and link targets beyond %d bytes in all", maxNameBytes), Limit: true}
		}
		m := &member{kind: kind}
		switch kind {
		case kindFile:
			sum := sha256.New()
			var w io.Writer = sum
			var rec bytes.Buffer
			if name == recordName {
				if h.Size > maxRecord {
					return nil, refuse(name, "%d bytes, larger than a session record can be (%d)", h.Size, maxRecord)
				}
				w = io.MultiWriter(sum, &rec)
			}
			if _, err := io.Copy(w, tr); err != nil {
				return nil, refuse(name, "the snapshot is damaged: %v", err)
			}
			copy(m.sum[:], sum.Sum(nil))
			m.size = h.Size
			p.files++
			p.total += h.Size
			if name == recordName {
				p.record = rec.Bytes()
			}
		case kindLink:
			m.target = h.Linkname
			m.sum = sha256.Sum256([]byte(h.Linkname))
		}
		p.members[name] = m
	}
	if !sumsSeen {
		return nil, refuse("", "no %s member: not a sandbox snapshot, or a truncated one", sumsName)
	}
	names := make([]string, 0, len(p.members))
	for n := range p.members {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !p.members[n].listed {
			return nil, refuse(n, "is not listed in %s", sumsName)
		}
	}
	if err := p.checkTree(names); err != nil {
		return nil, err
	}
	if p.record == nil {
		return nil, refuse(recordName, "missing: a snapshot holds the session's record")
	}
	return p, nil
}

// memberOf checks a member's name and type, and returns its name (a
// directory's without its slash) and kind.
func memberOf(h *tar.Header) (string, memberKind, error) {
	name := h.Name
	var kind memberKind
	switch h.Typeflag {
	case tar.TypeReg:
		kind = kindFile
	case tar.TypeDir:
		kind, name = kindDir, strings.TrimSuffix(name, "/")
	case tar.TypeSymlink:
		kind = kindLink
	case tar.TypeLink:
		return "", 0, refuse(h.Name, "a hard link (to %q), which sandbox snapshot never writes", h.Linkname)
	case tar.TypeChar, tar.TypeBlock:
		return "", 0, refuse(h.Name, "a device, which sandbox snapshot never writes")
	case tar.TypeFifo:
		return "", 0, refuse(h.Name, "a fifo, which sandbox snapshot never writes")
	case tar.TypeGNUSparse:
		return "", 0, refuse(h.Name, "a sparse file, which sandbox snapshot never writes")
	default:
		return "", 0, refuse(h.Name, "of type %q, which sandbox snapshot never writes", h.Typeflag)
	}
	if why := checkName(name); why != "" {
		return "", 0, refuse(h.Name, "%s", why)
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return "", 0, refuse(name, "a sparse file, which sandbox snapshot never writes")
		}
	}
	if kind == kindLink {
		if h.Linkname == "" || len(h.Linkname) > maxName || strings.ContainsRune(h.Linkname, 0) {
			return "", 0, refuse(name, "a symbolic link with an empty, overlong or NUL-holding target")
		}
	}
	return name, kind, nil
}

// checkSums reads SHA256SUMS, the last member, and checks every line
// against the members read before it.
func (p *plan) checkSums(r io.Reader, lim RestoreLimits) error {
	br := bufio.NewReaderSize(r, 2*maxName+128)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return refuse(sumsName, "line %d is longer than any entry can be", n)
		}
		if err != nil && err != io.EOF {
			return refuse(sumsName, "the snapshot is damaged: %v", err)
		}
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if n > lim.MaxMembers {
			return &SnapshotError{Member: sumsName, Problem: fmt.Sprintf("more than %d lines, the limit on members", lim.MaxMembers), Limit: true}
		}
		kind, sum, name, perr := parseSumsLine(strings.TrimSuffix(string(line), "\n"))
		if perr != nil {
			return refuse(sumsName, "line %d: %v", n, perr)
		}
		m := p.members[name]
		switch {
		case m == nil:
			return refuse(name, "is listed in %s but missing from the snapshot", sumsName)
		case m.listed:
			return refuse(name, "is listed twice in %s", sumsName)
		case m.kind != kind:
			return refuse(name, "a %s, but %s lists a %s", m.kind, sumsName, kind)
		case kind == kindFile && !bytes.Equal(m.sum[:], sum):
			return refuse(name, "has sha256 %x, but %s says %x: the snapshot is corrupt, or was altered", m.sum, sumsName, sum)
		case kind == kindLink && !bytes.Equal(m.sum[:], sum):
			return refuse(name, "a symbolic link to %q, but %s lists another target: the snapshot was altered", m.target, sumsName)
		}
		m.listed = true
		if err == io.EOF {
			return nil
		}
	}
}

// checkTree checks the members as a tree: nothing lies beneath a file or a
// link (unpacking it would write through the link), and every link leads
// somewhere inside home/.
func (p *plan) checkTree(names []string) error {
	links := &linkSet{links: map[string]string{}}
	for _, n := range names {
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			if m := p.members[d]; m != nil && m.kind != kindDir {
				return refuse(n, "lies beneath %q, a %s", d, m.kind)
			}
		}
		if m := p.members[n]; m.kind == kindLink {
			links.links[n] = m.target
		}
	}
	for _, n := range names {
		if t, ok := links.links[n]; ok {
			if err := links.check(n); err != nil {
				if errors.Is(err, errLinkBudget) {
					return &SnapshotError{Member: n, Problem: err.Error(), Limit: true}
				}
				return refuse(n, "a symbolic link to %q: %v; only links that stay inside home/ are restored", t, err)
			}
		}
	}
	return nil
}

// errChanged is the second pass finding what the first did not see.
func errChanged(name string) error {
	return refuse(name, "differs from the first reading: the snapshot changed while it was restored")
}

// extract is the second pass: it unpacks the snapshot under root, checking
// every member against the plan the first pass made.
func extract(r io.Reader, root *os.Root, p *plan) error {
	zr, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return refuse("", "the snapshot changed while it was restored: %v", err)
	}
	tr := tar.NewReader(zr)
	dirs := &dirCache{root: root}
	defer dirs.close()
	sumsSeen := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return refuse("", "the snapshot changed while it was restored: %v", err)
		}
		name, kind, serr := memberOf(h)
		if serr != nil {
			return serr
		}
		if name == sumsName {
			sum := sha256.New()
			if _, err := io.Copy(sum, tr); err != nil || sumsSeen || !bytes.Equal(sum.Sum(nil), p.sums[:]) {
				return errChanged(name)
			}
			sumsSeen = true
			continue
		}
		m := p.members[name]
		if m == nil || m.seen || m.kind != kind || (kind == kindFile && h.Size != m.size) || (kind == kindLink && h.Linkname != m.target) {
			return errChanged(name)
		}
		m.seen = true
		dir, base := path.Split(name)
		d, err := dirs.open(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return fmt.Errorf("member %q: %w", name, err)
		}
		switch kind {
		case kindDir:
			// A directory may have been made already for a member in it.
			if err := d.Mkdir(base, fs.FileMode(h.Mode)&0o777|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("member %q: %w", name, err)
			}
			if fi, err := d.Lstat(base); err != nil || !fi.IsDir() {
				return refuse(name, "could not be made a directory")
			}
		case kindLink:
			if err := d.Symlink(h.Linkname, base); err != nil {
				return fmt.Errorf("member %q: %w", name, err)
			}
		case kindFile:
			// O_EXCL: never through a link, never over another member.
			f, err := d.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(h.Mode)&0o777|0o600)
			if err != nil {
				return fmt.Errorf("member %q: %w", name, err)
			}
			sum := sha256.New()
			_, err = io.Copy(io.MultiWriter(f, sum), tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("member %q: %w", name, err)
			}
			if !bytes.Equal(sum.Sum(nil), m.sum[:]) {
				return errChanged(name)
			}
			_ = d.Chtimes(base, h.ModTime, h.ModTime)
		}
	}
	if !sumsSeen {
		return errChanged(sumsName)
	}
	for n, m := range p.members {
		if !m.seen {
			return errChanged(n)
		}
	}
	return nil
}

// dirCache keeps the directory of the last member open: members come
// grouped by directory.
type dirCache struct {
	root *os.Root
	name string
	dir  *os.Root
}

// open returns dir under the root, made (each step a real directory, no
// link) if missing.
func (c *dirCache) open(dir string) (*os.Root, error) {
	if dir == "" {
		return c.root, nil
	}
	if c.dir != nil && c.name == dir {
		return c.dir, nil
	}
	c.close()
	d, err := openDir(c.root, dir, true)
	if err != nil {
		return nil, err
	}
	c.name, c.dir = dir, d
	return d, nil
}

func (c *dirCache) close() {
	if c.dir != nil {
		c.dir.Close()
		c.dir = nil
	}
}
