// Package vault keeps every version of every agent transcript, append-only,
// in a local directory or under an S3 prefix: sync copies what changed at
// the sources (the agents' homes and the harness's sessions), and the
// vault is read back as a source of transcripts like any other.
//
// The layout (docs/vault.md):
//
//	vault.json                                  what this is, and its id
//	chunks/<aa>/<sha256>.zst                    content, by its SHA-256
//	versions/<source>/<size>-<sha256>.json      one version of a source file
//	versions/<source>/gone-<unix nanoseconds>   the source was deleted
//
// A source is <host>/<agent>/<path in the agent's home> (or
// <host>/sandbox/<path in the harness's state>). A version lists the chunks
// its content is made of, or the version it extends and the chunks of what
// was appended: storage grows with new bytes, not with copies. Every key is
// written once and never changed; a version's key is its content, so
// storing the same version twice (two syncs, a sync killed and run again)
// writes nothing new.
package vault

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/objstore"
)

// Format is the marker vault.json carries.
const (
	Format        = "sandbox-vault"
	FormatVersion = 1
	markerKey     = "vault.json"
	chunkSize     = 1 << 20
	// maxDepth bounds the chain of versions that extend others: a version
	// past it lists all its chunks itself.
	maxDepth = 32
)

// Marker is the content of vault.json.
type Marker struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
}

// Record is one version of a source file.
type Record struct {
	// Source names the file in the vault: host/agent/path.
	Source string `json:"source"`
	Agent  string `json:"agent,omitempty"`
	Host   string `json:"host"`
	// Origin is the file's path on its host.
	Origin string `json:"origin"`
	// Kind is "file", or "sqlite" for a database copied consistently.
	Kind    string    `json:"kind"`
	Size    int64     `json:"size"`
	SHA256  string    `json:"sha256"`
	ModTime time.Time `json:"mtime"`
	Seen    time.Time `json:"seen"`
	// Base is the key of the version whose content is this one's first
	// BaseSize bytes; Chunks then hold only what follows.
	Base     string  `json:"base,omitempty"`
	BaseSize int64   `json:"base_size,omitempty"`
	Depth    int     `json:"depth,omitempty"`
	Chunks   []Chunk `json:"chunks"`
}

// Chunk is a piece of content, stored once under its SHA-256.
type Chunk struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Options say how to reach a vault.
type Options struct {
	// S3 configures the client of an s3:// vault.
	S3 objstore.Options
}

// Vault is an open vault.
type Vault struct {
	b      backend
	where  string
	marker Marker

	decOnce sync.Once
	dec     *zstd.Decoder
	encOnce sync.Once
	enc     *zstd.Encoder
}

// DefaultDir is the default vault: $SANDBOX_VAULT, else
// $XDG_DATA_HOME/sandbox/vault, else ~/.local/share/sandbox/vault.
func DefaultDir(env osenv.Env) string {
	if v := env.Get("SANDBOX_VAULT"); v != "" {
		return v
	}
	if x := env.Get("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "sandbox", "vault")
	}
	if home, err := env.Home(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "sandbox", "vault")
	}
	return ""
}

// Resolve turns what a flag says ("vault" or "" for the default vault, a
// folder, or s3://bucket/prefix) into the vault's location.
func Resolve(env osenv.Env, where string) (string, error) {
	if where == "" || where == "vault" {
		d := DefaultDir(env)
		if d == "" {
			return "", errors.New("no default vault: set SANDBOX_VAULT or XDG_DATA_HOME, or name one with --to")
		}
		return d, nil
	}
	if objstore.IsURL(where) {
		return where, nil
	}
	return filepath.Abs(where)
}

func newBackend(ctx context.Context, where string, o Options) (backend, error) {
	if !objstore.IsURL(where) {
		return dirBackend{root: where, opened: &openRoot{}}, nil
	}
	loc, err := objstore.ParseURL(where)
	if err != nil {
		return nil, err
	}
	if loc.Key != "" && !strings.HasSuffix(loc.Key, "/") {
		loc.Key += "/"
	}
	client, err := objstore.New(ctx, o.S3)
	if err != nil {
		return nil, err
	}
	return s3Backend{client: client, at: loc}, nil
}

// ErrNotVault says a location holds no vault.
var ErrNotVault = errors.New("not a vault (no vault.json)")

// Open opens the vault at where (a folder or an s3:// URL), which must
// exist.
func Open(ctx context.Context, where string, o Options) (*Vault, error) {
	b, err := newBackend(ctx, where, o)
	if err != nil {
		return nil, err
	}
	v := &Vault{b: b, where: where}
	data, err := b.get(ctx, markerKey)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", where, ErrNotVault)
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &v.marker); err != nil || v.marker.Format != Format {
		return nil, fmt.Errorf("%s/%s: not a sandbox vault's marker", where, markerKey)
	}
	if v.marker.Version > FormatVersion {
		return nil, fmt.Errorf("%s: a vault of format %d, newer than this sandbox reads (%d): update sandbox", where, v.marker.Version, FormatVersion)
	}
	return v, nil
}

// Create opens the vault at where, making it when there is none.
func Create(ctx context.Context, where string, o Options) (*Vault, error) {
	v, err := Open(ctx, where, o)
	if !errors.Is(err, ErrNotVault) {
		return v, err
	}
	b, err := newBackend(ctx, where, o)
	if err != nil {
		return nil, err
	}
	if d, ok := b.(dirBackend); ok {
		// A vault is made in a new or empty folder: a folder of other
		// things named by mistake (a home, a project) is not filled.
		if entries, err := os.ReadDir(d.root); err == nil && len(entries) > 0 && !onlyVaultEntries(entries) {
			return nil, fmt.Errorf("%s holds files but no vault (no %s): name a new or empty folder for a vault", where, markerKey)
		}
	}
	// The marker is written under the vault's lock, like every other
	// object: a sync taking the lock clears the temporary files it finds
	// as a killed sync's, and would clear this one's mid-write.
	unlock, err := b.lock(ctx)
	if err != nil {
		return nil, err
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	m := Marker{Format: Format, Version: FormatVersion, ID: hex.EncodeToString(id[:]), Created: time.Now().UTC()}
	data, _ := json.MarshalIndent(m, "", "  ")
	err = b.create(ctx, markerKey, append(data, '\n'))
	unlock()
	if err != nil && !errors.Is(err, errExists) {
		return nil, fmt.Errorf("creating the vault at %s: %w", where, err)
	}
	// Another sync may have made it at the same moment: its marker wins.
	return Open(ctx, where, o)
}

// onlyVaultEntries says whether a folder holds nothing but what a vault's
// first sync leaves before its marker is written (a sync killed then, or
// one racing this one), or the marker itself: a Create racing this one
// wrote it after this one's Open looked (the Open after the lock reads it).
func onlyVaultEntries(entries []os.DirEntry) bool {
	for _, e := range entries {
		switch e.Name() {
		case "lock", "tmp", "chunks", "versions", markerKey:
		default:
			return false
		}
	}
	return true
}

// Where is the vault's location.
func (v *Vault) Where() string { return v.where }

// ID is the vault's id, made when it was created.
func (v *Vault) ID() string { return v.marker.ID }

func chunkKey(sum string) string { return "chunks/" + sum[:2] + "/" + sum + ".zst" }

func versionKey(source string, size int64, sum string) string {
	return "versions/" + source + "/" + fmt.Sprintf("%016d-%s.json", size, sum)
}

func goneKey(source string, at time.Time) string {
	return "versions/" + source + "/" + fmt.Sprintf("gone-%020d", at.UnixNano())
}

func (v *Vault) encoder() *zstd.Encoder {
	v.encOnce.Do(func() { v.enc, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1)) })
	return v.enc
}

func (v *Vault) decoder() *zstd.Decoder {
	v.decOnce.Do(func() {
		v.dec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(4*chunkSize))
	})
	return v.dec
}

// putChunk stores a chunk unless the vault holds it.
func (v *Vault) putChunk(ctx context.Context, data []byte) (Chunk, int64, error) {
	s := sha256.Sum256(data)
	c := Chunk{SHA256: hex.EncodeToString(s[:]), Size: int64(len(data))}
	key := chunkKey(c.SHA256)
	if ok, err := v.b.has(ctx, key); err != nil {
		return c, 0, err
	} else if ok {
		return c, 0, nil
	}
	z := v.encoder().EncodeAll(data, nil)
	if err := v.b.create(ctx, key, z); err != nil && !errors.Is(err, errExists) {
		return c, 0, err
	}
	return c, int64(len(z)), nil
}

// chunk reads a chunk back, checking its content against its name.
func (v *Vault) chunk(ctx context.Context, c Chunk) ([]byte, error) {
	z, err := v.b.get(ctx, chunkKey(c.SHA256))
	if err != nil {
		return nil, fmt.Errorf("vault %s: chunk %s: %w", v.where, c.SHA256, err)
	}
	data, err := v.decoder().DecodeAll(z, make([]byte, 0, c.Size))
	if err != nil {
		return nil, fmt.Errorf("vault %s: chunk %s is damaged: %w", v.where, c.SHA256, err)
	}
	if s := sha256.Sum256(data); hex.EncodeToString(s[:]) != c.SHA256 || int64(len(data)) != c.Size {
		return nil, fmt.Errorf("vault %s: chunk %s is damaged: its content does not match its name", v.where, c.SHA256)
	}
	return data, nil
}

// putRecord stores a version; storing one the vault holds does nothing.
func (v *Vault) putRecord(ctx context.Context, r *Record) (string, bool, error) {
	key := versionKey(r.Source, r.Size, r.SHA256)
	data, err := json.Marshal(r)
	if err != nil {
		return "", false, err
	}
	err = v.b.create(ctx, key, append(data, '\n'))
	if errors.Is(err, errExists) {
		return key, false, nil
	}
	return key, err == nil, err
}

// Record reads the version at key.
func (v *Vault) Record(ctx context.Context, key string) (*Record, error) {
	data, err := v.b.get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("vault %s: %s: %w", v.where, key, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("vault %s: %s: a damaged version record: %w", v.where, key, err)
	}
	switch {
	case r.Size < 0:
		return nil, fmt.Errorf("vault %s: %s: a damaged version record: a size of %d", v.where, key, r.Size)
	case r.Base != "" && (!strings.HasPrefix(r.Base, "versions/") || strings.Contains(r.Base, "..")):
		return nil, fmt.Errorf("vault %s: %s: a damaged version record: it extends %q, which is no version's key", v.where, key, r.Base)
	case v.keyOf(&r) != key:
		// A version's key is its source, size and SHA-256: a record that
		// says otherwise was changed, or put where it does not belong.
		return nil, fmt.Errorf("vault %s: %s: a damaged version record: it describes %s", v.where, key, v.keyOf(&r))
	}
	return &r, nil
}

// chunks resolves a version into the chunks of its whole content.
func (v *Vault) chunks(ctx context.Context, r *Record) ([]Chunk, error) {
	var tail [][]Chunk
	seen := map[string]bool{}
	for r.Base != "" {
		tail = append(tail, r.Chunks)
		if seen[r.Base] || len(seen) > 4*maxDepth {
			return nil, fmt.Errorf("vault %s: %s: a loop of versions", v.where, r.Source)
		}
		seen[r.Base] = true
		base, err := v.Record(ctx, r.Base)
		if err != nil {
			return nil, err
		}
		if base.Size != r.BaseSize {
			return nil, fmt.Errorf("vault %s: %s: a damaged version record: it extends the first %d bytes of a version of %d", v.where, v.keyOf(r), r.BaseSize, base.Size)
		}
		r = base
	}
	out := append([]Chunk(nil), r.Chunks...)
	for i := len(tail) - 1; i >= 0; i-- {
		out = append(out, tail[i]...)
	}
	for _, c := range out {
		if c.Size <= 0 || c.Size > chunkSize || !isSum(c.SHA256) {
			return nil, fmt.Errorf("vault %s: %s: a damaged version record (a chunk of %d bytes named %q)", v.where, r.Source, c.Size, c.SHA256)
		}
	}
	return out, nil
}

// isSum says whether s is a SHA-256 in lower-case hex, as chunks are named.
func isSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Version is one version of a source as a listing shows it.
type Version struct {
	Key    string
	Size   int64
	SHA256 string
	// Seen is when the vault first held it.
	Seen time.Time
}

// Source is a file the vault keeps, with its versions.
type Source struct {
	// Name is host/agent/path.
	Name string
	// Versions, in the order the vault first held them.
	Versions []Version
	// Gone lists when the source was found deleted.
	Gone []time.Time
}

// Host, Agent and Path split the source's name.
func (s Source) Host() string  { h, _, _ := strings.Cut(s.Name, "/"); return h }
func (s Source) Agent() string { return part(s.Name, 1) }
func (s Source) Path() string {
	parts := strings.SplitN(s.Name, "/", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}

func part(name string, i int) string {
	parts := strings.SplitN(name, "/", 3)
	if len(parts) <= i {
		return ""
	}
	return parts[i]
}

// GoneNow says whether the source was deleted after its last version.
func (s Source) GoneNow() bool {
	if len(s.Gone) == 0 {
		return false
	}
	last := s.Gone[len(s.Gone)-1]
	return len(s.Versions) == 0 || !last.Before(s.Versions[len(s.Versions)-1].Seen)
}

// Longest is the version a reader takes: the longest, and of those the
// latest (a transcript only grows; a shorter later one was cut short or
// rewritten, and loses nothing by being passed over: it stays readable by
// Pick).
func (s Source) Longest() Version {
	best := s.Versions[0]
	for _, v := range s.Versions[1:] {
		if v.Size >= best.Size {
			best = v
		}
	}
	return best
}

// Pick chooses the version --version names: a number (the Nth the vault
// held, from 1), or a time (the longest version held at that time); ok is
// false when there is none.
func (s Source) Pick(sel Selector) (Version, bool) {
	switch {
	case sel.N > 0:
		if sel.N > len(s.Versions) {
			return Version{}, false
		}
		return s.Versions[sel.N-1], true
	case !sel.At.IsZero():
		var held Source
		for _, v := range s.Versions {
			if !v.Seen.After(sel.At) {
				held.Versions = append(held.Versions, v)
			}
		}
		if len(held.Versions) == 0 {
			return Version{}, false
		}
		return held.Longest(), true
	}
	return s.Longest(), true
}

// Selector says which version of each source to read: zero for the
// longest.
type Selector struct {
	N  int
	At time.Time
}

// Sources lists what the vault holds, by source name.
func (v *Vault) Sources(ctx context.Context) ([]Source, error) {
	entries, err := v.b.list(ctx, "versions/")
	if err != nil {
		return nil, err
	}
	return sourcesOf(entries), nil
}

// sourcesOf groups a listing of versions/ by source.
func sourcesOf(entries []entry) []Source {
	by := map[string]*Source{}
	for _, e := range entries {
		dir, name, ok := cutLast(strings.TrimPrefix(e.key, "versions/"))
		if !ok || e.odd != "" {
			continue
		}
		s := by[dir]
		if s == nil {
			s = &Source{Name: dir}
			by[dir] = s
		}
		if rest, ok := strings.CutPrefix(name, "gone-"); ok {
			if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
				s.Gone = append(s.Gone, time.Unix(0, n))
			}
			continue
		}
		sizeText, sum, ok := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
		size, err := strconv.ParseInt(sizeText, 10, 64)
		if !ok || err != nil || len(sum) != 64 || !strings.HasSuffix(name, ".json") {
			continue
		}
		s.Versions = append(s.Versions, Version{Key: e.key, Size: size, SHA256: sum, Seen: e.mod})
	}
	out := make([]Source, 0, len(by))
	for _, s := range by {
		if len(s.Versions) == 0 {
			continue
		}
		sort.SliceStable(s.Versions, func(i, j int) bool {
			a, b := s.Versions[i], s.Versions[j]
			if !a.Seen.Equal(b.Seen) {
				return a.Seen.Before(b.Seen)
			}
			return a.Size < b.Size
		})
		sort.Slice(s.Gone, func(i, j int) bool { return s.Gone[i].Before(s.Gone[j]) })
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func cutLast(key string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(key, '/')
	if i <= 0 {
		return "", "", false
	}
	return key[:i], key[i+1:], true
}

// File is one version's content, read chunk by chunk as it is asked for.
type File struct {
	v      *Vault
	ctx    context.Context
	rec    *Record
	chunks []Chunk
	starts []int64

	mu   sync.Mutex
	at   int
	data []byte
}

// OpenVersion opens the version at key for reading.
func (v *Vault) OpenVersion(ctx context.Context, key string) (*File, error) {
	r, err := v.Record(ctx, key)
	if err != nil {
		return nil, err
	}
	cs, err := v.chunks(ctx, r)
	if err != nil {
		return nil, err
	}
	f := &File{v: v, ctx: ctx, rec: r, chunks: cs, at: -1}
	var off int64
	for _, c := range cs {
		f.starts = append(f.starts, off)
		off += c.Size
	}
	if off != r.Size {
		return nil, fmt.Errorf("vault %s: %s: its chunks hold %d bytes, not %d", v.where, key, off, r.Size)
	}
	return f, nil
}

// readError is a chunk that failed as a version was read: the vault
// failing, not bytes of the transcript that are damaged, so that a reader
// does not take what came before it for the whole (discover.IsSourceFailure).
type readError struct{ err error }

func (e readError) Error() string       { return e.err.Error() }
func (e readError) Unwrap() error       { return e.err }
func (e readError) SourceFailure() bool { return true }

// again is the version opened anew, from what f read of its records.
func (f *File) again() *File {
	return &File{v: f.v, ctx: f.ctx, rec: f.rec, chunks: f.chunks, starts: f.starts, at: -1}
}

// Record is the version's record.
func (f *File) Record() *Record { return f.rec }

// Size is the version's length.
func (f *File) Size() int64 { return f.rec.Size }

// ReadAt implements io.ReaderAt.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("vault: negative offset")
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= f.rec.Size {
			return n, io.EOF
		}
		i := sort.Search(len(f.starts), func(i int) bool { return f.starts[i] > at }) - 1
		data, err := f.load(i)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], data[at-f.starts[i]:])
	}
	return n, nil
}

func (f *File) load(i int) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.at == i {
		return f.data, nil
	}
	data, err := f.v.chunk(f.ctx, f.chunks[i])
	if err != nil {
		return nil, readError{err}
	}
	f.at, f.data = i, data
	return data, nil
}

// Bytes reads the whole version (small files only).
func (f *File) Bytes() ([]byte, error) {
	var b bytes.Buffer
	for i := range f.chunks {
		data, err := f.load(i)
		if err != nil {
			return nil, err
		}
		b.Write(data)
	}
	return b.Bytes(), nil
}

// Close releases nothing: chunks are read per call.
func (f *File) Close() error { return nil }
