package vault

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// ParseSelector reads --version: a number (the Nth version, from 1) or a
// time as --since takes it (the longest version held then); "" is the
// longest of all.
func ParseSelector(s string, now time.Time) (Selector, error) {
	if s == "" {
		return Selector{}, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return Selector{}, fmt.Errorf("--version %s: versions count from 1", s)
		}
		return Selector{N: n}, nil
	}
	t, err := parse.ParseTime(s, now)
	if err != nil {
		return Selector{}, fmt.Errorf("--version %s: a version number or a time: %w", s, err)
	}
	return Selector{At: t}, nil
}

// IsVault says whether name may be a vault a reader should open: "vault"
// (the default one), a folder holding vault.json, or an s3:// URL that does
// not name a file (Reader asks it for its vault.json).
func IsVault(name string) bool {
	if name == "vault" {
		return true
	}
	if objstore.IsURL(name) {
		base := path.Base(name)
		return !strings.Contains(base, ".") || strings.HasSuffix(name, "/")
	}
	_, err := os.Stat(filepath.Join(name, markerKey))
	return err == nil
}

// Reader returns what discover.Finder.Vaults needs: it reads a --from that
// names a vault as the version sel picks of each file the vault keeps (by
// default its longest), and passes anything else on.
func Reader(ctx context.Context, env osenv.Env, o Options, sel Selector) func(*discover.Finder, string) ([]discover.Candidate, []discover.Skipped, bool, error) {
	return func(f *discover.Finder, name string) ([]discover.Candidate, []discover.Skipped, bool, error) {
		if !IsVault(name) {
			return nil, nil, false, nil
		}
		where := name
		if name == "vault" {
			d, err := Resolve(env, "")
			if err != nil {
				return nil, nil, true, err
			}
			where = d
			if _, err := os.Stat(filepath.Join(d, markerKey)); err != nil {
				return nil, nil, true, fmt.Errorf("the default vault %s holds nothing yet: sandbox vault sync fills it", d)
			}
		}
		v, err := Open(ctx, where, o)
		if err != nil && objstore.IsURL(name) {
			// A prefix of transcripts, not a vault; or a store that fails,
			// which reading the prefix reports in its own terms.
			return nil, nil, false, nil
		}
		if err != nil {
			return nil, nil, true, err
		}
		cands, skipped, err := v.Candidates(ctx, f, sel)
		return cands, skipped, true, err
	}
}

// Candidates lists the transcripts the vault keeps, one version of each.
// A version that cannot be read whole (its record or one of its chunks is
// missing or damaged) is passed over for the next one the selector would
// take, and said in skipped; a source none of whose versions reads is
// said there too, so nothing the vault holds goes missing unsaid.
func (v *Vault) Candidates(ctx context.Context, f *discover.Finder, sel Selector) ([]discover.Candidate, []discover.Skipped, error) {
	versions, err := v.b.list(ctx, "versions/")
	if err != nil {
		return nil, nil, err
	}
	chunks, err := v.b.list(ctx, "chunks/")
	if err != nil {
		return nil, nil, err
	}
	srcs := sourcesOf(versions)
	have := chunkSet(chunks)
	picks := v.pickReadable(ctx, srcs, sel, have, f.Window)
	var out []discover.Candidate
	var skipped []discover.Skipped
	for _, p := range append(planted(versions), planted(chunks)...) {
		key, why, _ := strings.Cut(p, ": ")
		skipped = append(skipped, discover.Skipped{Name: v.where + "/" + key, Why: why + ": not read"})
	}
	// The files of a file store are read together, as the store.
	stores := map[string]map[string]func() (io.ReadCloser, error){}
	none, most := 0, 0
	for i, s := range srcs {
		p := picks[i]
		if p.none {
			none++
			most = max(most, len(s.Versions))
			continue
		}
		for j, d := range p.damaged {
			why := d.err.Error()
			switch {
			case p.err == nil:
				why += fmt.Sprintf("; read version %d (%s) instead", p.n, sizeText(p.ver.Size))
			case j < len(p.damaged)-1:
				why += "; not read"
			case sel.N > 0:
				why += "; not read (--version names it: no other version stands in)"
			default:
				why += "; not read, and no other version of the file reads: it is left out"
			}
			skipped = append(skipped, discover.Skipped{Name: fmt.Sprintf("%s@v%d", s.Name, d.n), Why: why})
		}
		if p.err != nil {
			continue
		}
		ver := p.ver
		// The check read the version's records: each open starts from
		// them, not from the vault again.
		checked, key := p.file, ver.Key
		open := func() (*File, error) {
			if checked != nil {
				return checked.again(), nil
			}
			return v.OpenVersion(ctx, key)
		}
		if root, ok := discover.StoreOf(s.Path()); ok {
			name := s.Host() + "/" + s.Agent() + "/" + root
			if stores[name] == nil {
				stores[name] = map[string]func() (io.ReadCloser, error){}
			}
			stores[name][strings.TrimPrefix(s.Path(), root+"/")] = func() (io.ReadCloser, error) {
				file, err := open()
				if err != nil {
					return nil, err
				}
				return io.NopCloser(io.NewSectionReader(file, 0, file.Size())), nil
			}
			continue
		}
		name := fmt.Sprintf("%s@v%d", s.Name, p.n)
		reopen := func() (io.ReaderAt, func(), error) {
			file, err := open()
			if err != nil {
				return nil, nil, err
			}
			return file, func() {}, nil
		}
		c, err := f.Kept(name, ver.Size, ver.Seen, strings.HasSuffix(s.Name, ".db"), reopen)
		if err != nil {
			skipped = append(skipped, discover.Skipped{Name: name, Why: err.Error()})
			continue
		}
		out = append(out, c...)
	}
	if none > 0 {
		// Never silent: a file the selector takes nothing of is said, once
		// for all of them.
		why := fmt.Sprintf("--version %d: %s no version %d (the most any holds is %d): not read", sel.N, filesText(none, "holds", "hold"), sel.N, most)
		if sel.N == 0 {
			why = fmt.Sprintf("--version %s: %s first kept after that time: not read", sel.At.UTC().Format(time.RFC3339), filesText(none, "was", "were"))
		}
		skipped = append(skipped, discover.Skipped{Name: v.where, Why: why})
	}
	names := make([]string, 0, len(stores))
	for n := range stores {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c, err := f.KeptStore(n, stores[n])
		if err != nil {
			skipped = append(skipped, discover.Skipped{Name: n, Why: err.Error()})
			continue
		}
		out = append(out, c...)
	}
	return out, skipped, nil
}

// pick is the version of a source a reader takes, and those passed over.
type pick struct {
	ver Version
	n   int // its number, from 1
	// file is the version opened by its check (nil when unchecked).
	file *File
	// none: the selector takes no version of the source (--version 3 of
	// a source with two).
	none    bool
	damaged []damagedVersion
	// err: no version the selector would take reads.
	err error
}

type damagedVersion struct {
	n   int
	err error
}

// pickReadable chooses, for each source, the version sel takes, or when
// that one cannot be read whole, the next best that can: for the longest
// (or the longest at a time), the next longest; a version named by its
// number has no stand-in. Records are read by a few workers at once: in
// an S3 vault each is a request.
//
// A version last held before the window's start is taken unchecked: the
// reader leaves it out by its time without opening it, so checking it
// would only cost (a request each, in S3).
func (v *Vault) pickReadable(ctx context.Context, srcs []Source, sel Selector, have map[string]bool, w discover.Window) []pick {
	out := make([]pick, len(srcs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = v.pickOne(ctx, srcs[i], sel, have, w)
			}
		}()
	}
	for i := range srcs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func (v *Vault) pickOne(ctx context.Context, s Source, sel Selector, have map[string]bool, w discover.Window) pick {
	first, ok := s.Pick(sel)
	if !ok {
		return pick{none: true}
	}
	if !w.Since.IsZero() && first.Seen.Before(w.Since) {
		return pick{ver: first, n: s.number(first.Key)}
	}
	// The order a reader would take them in: the selector's choice, then
	// (unless it names one) the others it would take, longest and latest
	// first.
	order := []Version{first}
	if sel.N == 0 {
		var rest []Version
		for _, x := range s.Versions {
			if x.Key != first.Key && (sel.At.IsZero() || !x.Seen.After(sel.At)) {
				rest = append(rest, x)
			}
		}
		sort.SliceStable(rest, func(i, j int) bool {
			if rest[i].Size != rest[j].Size {
				return rest[i].Size > rest[j].Size
			}
			return rest[i].Seen.After(rest[j].Seen)
		})
		order = append(order, rest...)
	}
	var p pick
	for _, x := range order {
		file, err := v.readable(ctx, x.Key, have)
		if err == nil {
			p.ver, p.n, p.file = x, s.number(x.Key), file
			return p
		}
		p.damaged = append(p.damaged, damagedVersion{s.number(x.Key), err})
	}
	p.err = p.damaged[len(p.damaged)-1].err
	return p
}

// number is the number of the version at key, from 1.
func (s Source) number(key string) int {
	for i, x := range s.Versions {
		if x.Key == key {
			return i + 1
		}
	}
	return 0
}

// chunkSet is the chunks a listing of chunks/ holds (a listing, not a
// read of each): a version that names one not there cannot be read.
func chunkSet(entries []entry) map[string]bool {
	have := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e.odd == "" {
			have[e.key] = true // an empty one is damaged, and said so when read
		}
	}
	return have
}

// readable opens the version at key, or says why it cannot be read whole,
// by what is cheap to tell: its records (its own and those it
// extends) and whether every chunk it names is in the vault. A chunk whose
// content is damaged is found when it is read (Verify reads them all).
func (v *Vault) readable(ctx context.Context, key string, have map[string]bool) (*File, error) {
	f, err := v.OpenVersion(ctx, key)
	if err != nil {
		return nil, err
	}
	for _, c := range f.chunks {
		if !have[chunkKey(c.SHA256)] {
			return nil, fmt.Errorf("vault %s: %s: chunk %s is missing", v.where, key, c.SHA256)
		}
	}
	return f, nil
}

// sizeText says a size in bytes for messages.
func sizeText(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// filesText says how many files, as the subject of a sentence, with its
// verb in the singular or the plural.
func filesText(n int, one, many string) string {
	if n == 1 {
		return "1 file " + one
	}
	return fmt.Sprintf("%d files %s", n, many)
}
