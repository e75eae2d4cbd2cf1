package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
)

// PruneOptions say what Prune may remove.
type PruneOptions struct {
	// Keep: versions the vault first held within Keep of Now are kept
	// whatever else holds.
	Keep time.Duration
	Now  time.Time
	// DryRun says what would go, removing nothing.
	DryRun bool
}

// PruneStats say what a prune removed (or would).
type PruneStats struct {
	Versions int   `json:"versions"`
	Chunks   int   `json:"chunks"`
	Bytes    int64 `json:"bytes"`
	// Removed lists the versions removed, by key.
	Removed []string `json:"removed,omitempty"`
}

// Prune removes the versions the newest version of their file supersedes,
// and only those: a version is removed when it is older than Keep, is
// neither the newest nor the longest of its file, its content is the first
// bytes of the newest (the newest holds all it held), and no kept version
// is stored as an extension of it. Then the chunks no kept version uses are
// removed. A database's earlier copies are never the first bytes of a later
// one, so they are all kept. It runs under the vault's sync lock.
func (v *Vault) Prune(ctx context.Context, o PruneOptions) (PruneStats, error) {
	var st PruneStats
	unlock, err := v.b.lock(ctx)
	if err != nil {
		return st, err
	}
	defer unlock()
	// What a planted link hides would look unused: nothing is removed
	// until it is sorted out.
	if planted, err := v.Planted(ctx); err != nil {
		return st, err
	} else if len(planted) > 0 {
		return st, fmt.Errorf("vault %s holds what no sync writes there, so prune removes nothing: %s (move it out; sandbox vault verify lists all)", v.where, planted[0])
	}
	srcs, err := v.Sources(ctx)
	if err != nil {
		return st, err
	}
	cutoff := o.Now.Add(-o.Keep)
	var drop []Version
	kept := map[string]bool{}
	for _, s := range srcs {
		newest, longest := s.Versions[len(s.Versions)-1], s.Longest()
		var head *File
		for _, ver := range s.Versions {
			if ver.Key == newest.Key || ver.Key == longest.Key || !ver.Seen.Before(cutoff) || ver.Size > newest.Size {
				kept[ver.Key] = true
				continue
			}
			if head == nil {
				if head, err = v.OpenVersion(ctx, newest.Key); err != nil {
					return st, err
				}
			}
			h := sha256.New()
			if _, err := io.Copy(h, io.NewSectionReader(head, 0, ver.Size)); err != nil {
				return st, err
			}
			if hex.EncodeToString(h.Sum(nil)) != ver.SHA256 {
				kept[ver.Key] = true
				continue
			}
			drop = append(drop, ver)
		}
	}
	// What a kept version is stored as an extension of stays, and every
	// chunk a kept version's content is made of.
	used := map[string]bool{}
	for key := range kept {
		r, err := v.Record(ctx, key)
		if err != nil {
			return st, err
		}
		for r != nil {
			kept[v.keyOf(r)] = true
			for _, c := range r.Chunks {
				used[c.SHA256] = true
			}
			if r.Base == "" {
				break
			}
			if r, err = v.Record(ctx, r.Base); err != nil {
				return st, err
			}
		}
	}
	for _, ver := range drop {
		if kept[ver.Key] {
			continue
		}
		st.Versions++
		st.Removed = append(st.Removed, ver.Key)
		if !o.DryRun {
			if err := v.b.remove(ctx, ver.Key); err != nil {
				return st, err
			}
		}
	}
	chunks, err := v.b.list(ctx, "chunks/")
	if err != nil {
		return st, err
	}
	for _, c := range chunks {
		if c.odd != "" {
			continue
		}
		_, name, _ := cutLast(c.key)
		sum := strings.TrimSuffix(name, ".zst")
		if used[sum] {
			continue
		}
		st.Chunks++
		st.Bytes += c.size
		if !o.DryRun {
			if err := v.b.remove(ctx, c.key); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// keyOf is the key a record is stored under.
func (v *Vault) keyOf(r *Record) string { return versionKey(r.Source, r.Size, r.SHA256) }
