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
func (v *Vault) Candidates(ctx context.Context, f *discover.Finder, sel Selector) ([]discover.Candidate, []discover.Skipped, error) {
	srcs, err := v.Sources(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []discover.Candidate
	var skipped []discover.Skipped
	// The files of a file store are read together, as the store.
	stores := map[string]map[string]func() (io.ReadCloser, error){}
	for _, s := range srcs {
		ver, ok := s.Pick(sel)
		if !ok {
			continue
		}
		if root, ok := discover.StoreOf(s.Path()); ok {
			name := s.Host() + "/" + s.Agent() + "/" + root
			if stores[name] == nil {
				stores[name] = map[string]func() (io.ReadCloser, error){}
			}
			key := ver.Key
			stores[name][strings.TrimPrefix(s.Path(), root+"/")] = func() (io.ReadCloser, error) {
				file, err := v.OpenVersion(ctx, key)
				if err != nil {
					return nil, err
				}
				return io.NopCloser(io.NewSectionReader(file, 0, file.Size())), nil
			}
			continue
		}
		n := 0
		for i, x := range s.Versions {
			if x.Key == ver.Key {
				n = i + 1
			}
		}
		name := fmt.Sprintf("%s@v%d", s.Name, n)
		key := ver.Key
		reopen := func() (io.ReaderAt, func(), error) {
			file, err := v.OpenVersion(ctx, key)
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
