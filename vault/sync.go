package vault

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/agentsandbox/sandbox/internal/fskind"
	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// SyncOptions say what a sync copies.
type SyncOptions struct {
	// Env is the environment whose homes are synced.
	Env osenv.Env
	// Homes, when not nil, replaces the homes Env names.
	Homes *discover.Homes
	// Agents, when not empty, limits the sync to these agents' homes (the
	// harness's sessions are synced with any).
	Agents []string
	// Host names this machine in the vault (default: its host name).
	Host string
	// Cache is the file that remembers what the last sync saw of each
	// source, so that a file whose size, time and inode are unchanged is
	// not read (default: CachePath).
	Cache string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Tree, when not nil, syncs one harness session instead of the homes
	// (sandbox run --mirror).
	Tree *Tree
}

// Tree is a harness session to mirror: the transcripts of the agents'
// homes in its workspace, and its own files (record, logs), each named by
// its path under Root (the harness's state directory), as a sync of the
// whole host names them.
type Tree struct {
	Root string
	// Workspace is the session's workspace, the agents' HOME.
	Workspace string
	// Files are the session's own files to keep (absolute paths).
	Files []string
}

// SyncStats say what a sync did.
type SyncStats struct {
	// Files is how many source files were looked at.
	Files int `json:"files"`
	// Unchanged were passed over by their metadata alone.
	Unchanged int `json:"unchanged"`
	// Read were read, and ReadBytes is how much of them.
	Read      int   `json:"read"`
	ReadBytes int64 `json:"read_bytes"`
	// Versions is how many new versions the vault now holds.
	Versions int `json:"versions"`
	// Stored is how many bytes of new chunks (compressed) were written.
	Stored int64 `json:"stored_bytes"`
	// Gone is how many sources were found deleted since the last sync.
	Gone int `json:"gone"`
	// Problems are the files that could not be synced (the rest were).
	Problems []string `json:"problems,omitempty"`
	// Skipped are the files left out on purpose, and why.
	Skipped []string `json:"skipped,omitempty"`
	// dirs are the folders the sources lie in, and those above them up to
	// their home: what a watch looks at.
	dirs []string
}

// source is a file to sync.
type source struct {
	name   string // host/agent/path
	agent  string
	origin string
	kind   string // "file" or "sqlite"
}

// cacheEntry is what a sync saw of a source and stored of it.
type cacheEntry struct {
	Stat   string `json:"stat"`
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Depth  int    `json:"depth,omitempty"`
	Source string `json:"source"`
	// State is the SHA-256 state after the version's last byte, and Ends
	// the SHA-256 of its first and last (up to) 64 KiB: a file that grew
	// in place (same inode) whose ends are unchanged is taken as appended
	// to, and only what follows is read.
	State []byte `json:"state,omitempty"`
	Ends  string `json:"ends,omitempty"`
}

// endsWindow is how much of each end of a file tells it was appended to.
const endsWindow = 64 << 10

// ends is the SHA-256 of the first and last (up to) endsWindow bytes of
// the first size bytes of r.
func ends(r io.ReaderAt, size int64) (string, error) {
	h := sha256.New()
	head := min(size, endsWindow)
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, head)); err != nil {
		return "", err
	}
	tail := max(size-endsWindow, head)
	if _, err := io.Copy(h, io.NewSectionReader(r, tail, size-tail)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// inodeOf is the inode part of a signature.
func inodeOf(sig string) string {
	first, _, _ := strings.Cut(sig, ";")
	parts := strings.Split(first, ":")
	return parts[len(parts)-1]
}

type cacheFile struct {
	Vault   string                 `json:"vault"`
	Host    string                 `json:"host"`
	Entries map[string]*cacheEntry `json:"entries"`
}

// CachePath is where a sync of the vault v from this environment keeps its
// cache: $XDG_CACHE_HOME/sandbox/vault/<vault id>-<host>.json (or under
// ~/.cache).
func CachePath(env osenv.Env, v *Vault, host string) string {
	dir := env.Get("XDG_CACHE_HOME")
	if dir == "" {
		home, _ := env.Home()
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "sandbox", "vault", v.ID()+"-"+safeSegment(host)+".json")
}

// HostName is this machine's name as a vault keeps it.
func HostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return safeSegment(h)
}

// safeSegment makes s one path segment: no slash, no dot-only name.
func safeSegment(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, s)
	if s == "" || s == "." || s == ".." {
		return "_"
	}
	return s
}

// Sync copies every transcript that changed since the last sync into the
// vault, one sync at a time per vault. A file is read only when its size,
// modification time or inode moved; it is stored as a new version only
// when its content differs from the last one stored, and then only its new
// bytes when it grew. Nothing in the vault is overwritten or removed. A
// file that cannot be read is a problem of the stats; the others are still
// synced.
func (v *Vault) Sync(ctx context.Context, o SyncOptions) (SyncStats, error) {
	var st SyncStats
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Host == "" {
		o.Host = HostName()
	}
	o.Host = safeSegment(o.Host)
	if o.Cache == "" {
		o.Cache = CachePath(o.Env, v, o.Host)
	}
	unlock, err := v.b.lock(ctx)
	if err != nil {
		return st, err
	}
	defer unlock()

	cache := readCache(o.Cache, v.ID(), o.Host)
	dirty := false
	srcs, dirs, unread := o.sources()
	st.dirs = dirs
	st.Skipped = append(st.Skipped, unread...)
	seen := map[string]bool{}
	var known map[string]Version // the vault's longest version of each source, when the cache lacks one
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			break
		}
		seen[s.origin] = true
		st.Files++
		stat, err := statSig(s)
		if err != nil {
			if errors.Is(err, errNotRegular) {
				st.Skipped = append(st.Skipped, s.origin+": "+err.Error())
				continue
			}
			if !errors.Is(err, fs.ErrNotExist) {
				st.Problems = append(st.Problems, fmt.Sprintf("%s: %v", s.origin, err))
			}
			continue
		}
		prev := cache.Entries[s.origin]
		if prev != nil && prev.Stat == stat && prev.Source == s.name {
			st.Unchanged++
			continue
		}
		if prev == nil || prev.Source != s.name {
			if known == nil {
				known = v.longest(ctx, o.Host)
			}
			prev = nil
			if k, ok := known[s.name]; ok {
				prev = &cacheEntry{Key: k.Key, Size: k.Size, SHA256: k.SHA256, Source: s.name, Depth: -1}
			}
		}
		e, err := v.store(ctx, s, prev, o.Now(), &st)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			st.Problems = append(st.Problems, fmt.Sprintf("%s: %v", s.origin, err))
			continue
		}
		e.Stat = stat
		cache.Entries[s.origin] = e
		dirty = true
	}
	// A source the last sync stored that is no longer there was deleted.
	if ctx.Err() == nil {
		for origin, e := range cache.Entries {
			if seen[origin] {
				continue
			}
			if _, err := os.Lstat(origin); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err := v.b.create(ctx, goneKey(e.Source, o.Now()), nil); err != nil && !errors.Is(err, errExists) {
				st.Problems = append(st.Problems, fmt.Sprintf("%s: %v", origin, err))
				continue
			}
			st.Gone++
			delete(cache.Entries, origin)
			dirty = true
		}
	}
	// A sync that changed nothing leaves the cache as it is, but for its
	// time: the time is when the last sync ended (Synced).
	if !dirty {
		now := time.Now()
		if err := os.Chtimes(o.Cache, now, now); err == nil {
			return st, ctx.Err()
		}
	}
	if err := writeCache(o.Cache, cache); err != nil {
		st.Problems = append(st.Problems, fmt.Sprintf("%s: %v", o.Cache, err))
	}
	return st, ctx.Err()
}

// longest maps each source of host the vault holds to its longest version.
func (v *Vault) longest(ctx context.Context, host string) map[string]Version {
	out := map[string]Version{}
	entries, err := v.b.list(ctx, "versions/"+host+"/")
	if err != nil {
		return out
	}
	var srcs []Source
	by := map[string]int{}
	for _, e := range entries {
		dir, name, ok := cutLast(strings.TrimPrefix(e.key, "versions/"))
		if !ok || !strings.HasSuffix(name, ".json") || e.odd != "" {
			continue
		}
		sizeText, sum, _ := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
		var size int64
		if _, err := fmt.Sscan(sizeText, &size); err != nil || len(sum) != 64 {
			continue
		}
		i, ok := by[dir]
		if !ok {
			i = len(srcs)
			by[dir] = i
			srcs = append(srcs, Source{Name: dir})
		}
		srcs[i].Versions = append(srcs[i].Versions, Version{Key: e.key, Size: size, SHA256: sum, Seen: e.mod})
	}
	for _, s := range srcs {
		out[s.Name] = s.Longest()
	}
	return out
}

// sources lists the files to sync: every transcript the agents' homes
// (and the harness's sessions) hold, the files beside them in their
// session folders (subagent transcripts), and the databases and file
// stores that hold sessions. Only what discovery reads as sessions is
// taken: an agent's home also holds its credentials, which stay home.
func (o SyncOptions) sources() ([]source, []string, []string) {
	homes := discover.DefaultHomes(o.Env)
	if o.Homes != nil {
		homes = *o.Homes
	}
	if o.Tree != nil {
		homes = discover.HomesIn(o.Tree.Workspace)
	}
	if len(o.Agents) > 0 {
		keep := map[string]bool{}
		for _, a := range o.Agents {
			keep[a] = true
		}
		for a := range homes.Agents {
			if !keep[string(a)] {
				delete(homes.Agents, a)
			}
		}
	}
	type root struct{ dir, name string }
	var roots []root
	for a, d := range homes.Agents {
		if d != "" {
			roots = append(roots, root{filepath.Clean(d), string(a)})
		}
	}
	if homes.Sandbox != "" {
		roots = append(roots, root{filepath.Clean(homes.Sandbox), "sandbox"})
	}
	if o.Tree != nil {
		roots = []root{{filepath.Clean(o.Tree.Root), "sandbox"}}
	}
	// The deepest root first: a harness session's agent home lies in the
	// harness's state, and is named by it.
	sort.Slice(roots, func(i, j int) bool { return len(roots[i].dir) > len(roots[j].dir) })
	nameOf := func(p, agent string) string {
		for _, r := range roots {
			if rel, err := filepath.Rel(r.dir, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				return o.Host + "/" + r.name + "/" + filepath.ToSlash(rel)
			}
		}
		return o.Host + "/" + agent + "/abs/" + strings.TrimLeft(filepath.ToSlash(p), "/")
	}
	f := &discover.Finder{}
	defer f.RemoveSpools()
	cands := f.Homes(homes, discover.Window{})
	var out []source
	added := map[string]bool{}
	var secrets []string
	add := func(p, agent, kind string) {
		if added[p] {
			return
		}
		added[p] = true
		if secretName(filepath.Base(p)) {
			secrets = append(secrets, p+": named like a credential: not copied")
			return
		}
		out = append(out, source{name: nameOf(p, agent), agent: agent, origin: p, kind: kind})
	}
	walked := map[string]bool{}
	var walk func(dir, agent string, depth int)
	walk = func(dir, agent string, depth int) {
		if walked[dir] || depth > 3 {
			return
		}
		walked[dir] = true
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				walk(p, agent, depth+1)
			case e.Type().IsRegular() && discover.IsTranscriptName(e.Name()):
				add(p, agent, "file")
			}
		}
	}
	for _, c := range cands {
		agent := string(c.Agent)
		switch {
		case c.Path != "":
			add(c.Path, agent, "file")
			walk(filepath.Dir(c.Path), agent, 0)
		case c.Store != "":
			if info, err := os.Stat(c.Store); err == nil && info.IsDir() {
				walk(c.Store, agent, 0)
			} else if err == nil {
				add(c.Store, agent, "sqlite")
			}
		}
	}
	if o.Tree != nil {
		for _, p := range o.Tree.Files {
			add(p, "sandbox", "file")
			walked[filepath.Dir(p)] = true
		}
		// A session's workspace is small: every folder of the agents'
		// homes in it is watched, so a transcript's first line is seen
		// as soon as it is written, not at the next rescan.
		walked[o.Tree.Workspace] = true
		for _, d := range homes.Agents {
			watchTree(d, 3, walked)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].origin < out[j].origin })
	// The folders to watch: each walked one, and those above it up to its
	// root (where a new session's folder appears), and the roots.
	watch := map[string]bool{}
	for _, r := range roots {
		watch[r.dir] = true
	}
	for d := range walked {
		for _, r := range roots {
			if rel, err := filepath.Rel(r.dir, d); err == nil && !strings.HasPrefix(rel, "..") {
				for p := d; len(p) >= len(r.dir); p = filepath.Dir(p) {
					watch[p] = true
					if p == r.dir {
						break
					}
				}
				break
			}
		}
		watch[d] = true
	}
	dirs := make([]string, 0, len(watch))
	for d := range watch {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	unread := secrets
	for _, p := range f.Problems {
		unread = append(unread, p.Name+": "+p.Why)
	}
	return out, dirs, unread
}

// Refuses says why a sync would not copy the transcript at path (it is a
// symbolic link or a special file, or is named like a credential), or ""
// when it would.
func Refuses(path string) string {
	if secretName(filepath.Base(path)) {
		return "named like a credential"
	}
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		return fskind.Of(info.Mode())
	}
	return ""
}

// secretName says whether a file found beside transcripts is named like
// a credential (an agent's auth.json, oauth_creds.json, .credentials.json):
// a vault, perhaps in a shared bucket, is no place for it.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"credential", "oauth", "secret", "token", "apikey", "api_key", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return n == "auth.json" || strings.HasPrefix(n, ".env")
}

// errNotRegular is a source that is a symbolic link or a special file: a
// link in an agent's folder could name any file of the user's, which is no
// transcript to copy out, and a named pipe would never end.
var errNotRegular = errors.New("not a regular file")

// notRegular says what a source that is not a regular file is instead.
func notRegular(m fs.FileMode) error {
	what := fskind.Of(m) + ", not read"
	if m&fs.ModeSymlink != 0 {
		what = "a symbolic link, not followed (a link could name any file of the user's)"
	}
	return fmt.Errorf("%w: %s", errNotRegular, what)
}

// watchTree marks dir and its folders down to depth as folders to watch.
func watchTree(dir string, depth int, marks map[string]bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	marks[dir] = true
	if depth == 0 {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			watchTree(filepath.Join(dir, e.Name()), depth-1, marks)
		}
	}
}

// statSig is what tells a source changed without reading it: size,
// modification time and inode (and its log's, for a database).
func statSig(s source) (string, error) {
	info, err := os.Lstat(s.origin)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", notRegular(info.Mode())
	}
	sig := fileSig(info)
	if s.kind == "sqlite" {
		if wal, err := os.Stat(s.origin + "-wal"); err == nil {
			sig += ";" + fileSig(wal)
		}
	}
	return sig, nil
}

func fileSig(info fs.FileInfo) string {
	return fmt.Sprintf("%d:%d:%d", info.Size(), info.ModTime().UnixNano(), inode(info))
}

// store reads a source and stores it as a new version unless the vault
// holds that content as its last one; prev is what was last stored of it.
func (v *Vault) store(ctx context.Context, s source, prev *cacheEntry, now time.Time, st *SyncStats) (*cacheEntry, error) {
	path := s.origin
	if s.kind == "sqlite" {
		snap, done, err := snapshotDB(ctx, s.origin)
		if err != nil {
			return nil, err
		}
		defer done()
		path = snap
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, notRegular(info.Mode())
	}
	size := info.Size()
	st.Read++
	whole := sha256.New()
	rec := &Record{Source: s.name, Agent: s.agent, Host: part(s.name, 0), Origin: s.origin, Kind: s.kind,
		ModTime: info.ModTime().UTC(), Seen: now.UTC()}
	if s.kind == "sqlite" {
		if oi, err := os.Stat(s.origin); err == nil {
			rec.ModTime = oi.ModTime().UTC()
		}
	}
	buf := make([]byte, chunkSize)
	var read int64
	// A file that grew from the last version is stored as that version and
	// the chunks of what follows it, once its first bytes are checked to be
	// that version's.
	extend := prev != nil && prev.Size > 0 && prev.Size <= size
	appended := false
	if extend && s.kind == "file" && prev.State != nil && prev.Ends != "" && inodeOf(prev.Stat) == inodeOf(fileSig(info)) {
		// The same file, grown, with its old ends in place: what was
		// stored is its start; only the rest is read.
		if e, err := ends(f, prev.Size); err == nil && e == prev.Ends {
			if u, ok := whole.(encoding.BinaryUnmarshaler); ok && u.UnmarshalBinary(prev.State) == nil {
				if _, err := f.Seek(prev.Size, io.SeekStart); err != nil {
					return nil, err
				}
				appended = true
			} else {
				whole.Reset()
			}
		}
	}
	if extend && !appended {
		if err := hashN(f, whole, prev.Size, buf); err != nil {
			return nil, err
		}
	}
	if extend {
		read = prev.Size
		if appended || hex.EncodeToString(whole.Sum(nil)) == prev.SHA256 {
			rec.Base, rec.BaseSize = prev.Key, prev.Size
			if prev.Depth < 0 {
				if r, err := v.Record(ctx, prev.Key); err == nil {
					prev.Depth = r.Depth
				}
			}
			rec.Depth = prev.Depth + 1
		} else {
			whole.Reset()
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			read = 0
		}
	}
	for read < size {
		n, err := io.ReadFull(f, buf[:min(int64(len(buf)), size-read)])
		if n > 0 {
			whole.Write(buf[:n])
			c, stored, err := v.putChunk(ctx, buf[:n])
			if err != nil {
				return nil, err
			}
			rec.Chunks = append(rec.Chunks, c)
			st.Stored += stored
			read += int64(n)
		}
		if err != nil {
			// The file was cut short while it was read: what was read is
			// this version.
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			return nil, err
		}
	}
	st.ReadBytes += read
	if appended {
		st.ReadBytes -= prev.Size
	}
	rec.Size = read
	rec.SHA256 = hex.EncodeToString(whole.Sum(nil))
	var state []byte
	if m, ok := whole.(encoding.BinaryMarshaler); ok && s.kind == "file" {
		state, _ = m.MarshalBinary()
	}
	fileEnds, _ := ends(f, rec.Size)
	if prev != nil && rec.SHA256 == prev.SHA256 && rec.Size == prev.Size {
		return &cacheEntry{Key: prev.Key, Size: prev.Size, SHA256: prev.SHA256, Depth: max(prev.Depth, 0), Source: s.name, State: state, Ends: fileEnds}, nil
	}
	if rec.Base != "" && rec.Depth > maxDepth {
		// A long chain of appends is flattened: this version lists every
		// chunk itself (the chunks are shared, not copied).
		base, err := v.Record(ctx, rec.Base)
		if err != nil {
			return nil, err
		}
		all, err := v.chunks(ctx, base)
		if err != nil {
			return nil, err
		}
		rec.Chunks = append(all, rec.Chunks...)
		rec.Base, rec.BaseSize, rec.Depth = "", 0, 0
	}
	key, created, err := v.putRecord(ctx, rec)
	if err != nil {
		return nil, err
	}
	if created {
		st.Versions++
	}
	return &cacheEntry{Key: key, Size: rec.Size, SHA256: rec.SHA256, Depth: rec.Depth, Source: s.name, State: state, Ends: fileEnds}, nil
}

// hashN feeds the first n bytes of r to h.
func hashN(r io.Reader, h hash.Hash, n int64, buf []byte) error {
	for n > 0 {
		k, err := io.ReadFull(r, buf[:min(int64(len(buf)), n)])
		h.Write(buf[:k])
		n -= int64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

// snapshotDB copies a SQLite database consistently, as of one read
// transaction (VACUUM INTO), so that a database being written is never
// copied torn; done removes the copy.
func snapshotDB(ctx context.Context, path string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "sandbox-vault-db-*")
	if err != nil {
		return "", nil, err
	}
	done := func() { os.RemoveAll(dir) }
	out := filepath.Join(dir, "snapshot.db")
	u := url.URL{Scheme: "file", Path: path}
	db, err := sql.Open("sqlite", u.String()+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		done()
		return "", nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", out); err != nil {
		done()
		return "", nil, fmt.Errorf("copying the database: %w", err)
	}
	return out, done, nil
}

func readCache(path, vaultID, host string) *cacheFile {
	c := &cacheFile{Vault: vaultID, Host: host, Entries: map[string]*cacheEntry{}}
	if path == "" {
		return c
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c
	}
	var got cacheFile
	if json.Unmarshal(data, &got) != nil || got.Vault != vaultID || got.Host != host || got.Entries == nil {
		return c
	}
	return &got
}

// writeCache replaces the cache whole (a temporary file renamed over it):
// a sync killed while writing it leaves the old one.
func writeCache(path string, c *cacheFile) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cache-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Synced says what the last sync from this environment and host stored: in
// tells whether a file's current content (by its size, time and inode) is
// in the vault, and last is when that sync ended (zero when none did).
func (v *Vault) Synced(env osenv.Env, host string) (in func(path string) bool, last time.Time) {
	host = safeSegment(host)
	p := CachePath(env, v, host)
	c := readCache(p, v.ID(), host)
	if info, err := os.Stat(p); err == nil && len(c.Entries) > 0 {
		last = info.ModTime()
	}
	return func(path string) bool {
		e := c.Entries[path]
		if e == nil {
			return false
		}
		info, err := os.Lstat(path)
		return err == nil && fileSig(info) == strings.SplitN(e.Stat, ";", 2)[0]
	}, last
}
