package vault

import (
	"context"
	"strings"
)

// Damage is a version of a source that cannot be read whole.
type Damage struct {
	// Source is host/agent/path; N the version's number, from 1.
	Source string `json:"source"`
	N      int    `json:"version"`
	Key    string `json:"key"`
	Why    string `json:"why"`
}

// VerifyStats say what Verify read and what it found.
type VerifyStats struct {
	Sources  int      `json:"sources"`
	Versions int      `json:"versions"`
	Chunks   int      `json:"chunks"`
	Bytes    int64    `json:"bytes"`
	Damaged  []Damage `json:"damaged"`
}

// Planted lists what a folder vault holds that no sync writes there: a
// symbolic link, a named pipe or a device where objects are kept, each as
// "key: what it is". A reader passes over them (they may lead anywhere);
// prune refuses to run while they are there, since what a planted link
// hides would look unused. An S3 vault holds objects only: none.
func (v *Vault) Planted(ctx context.Context) ([]string, error) {
	var out []string
	for _, prefix := range []string{"versions/", "chunks/"} {
		entries, err := v.b.list(ctx, prefix)
		if err != nil {
			return nil, err
		}
		out = append(out, planted(entries)...)
	}
	return out, nil
}

// planted is what of a listing is no object of the vault's.
func planted(entries []entry) []string {
	var out []string
	for _, e := range entries {
		if e.odd != "" {
			out = append(out, e.key+": "+e.odd+" where the vault keeps only its own files")
		}
	}
	return out
}

// Verify reads every version of every source whole: each record, each
// version it extends, and each chunk (once, however many versions name
// it), decompressed and checked against its SHA-256. What cannot be read
// is listed in Damaged; progress, when not nil, is told the bytes of each
// chunk read. It changes nothing.
func (v *Vault) Verify(ctx context.Context, progress func(int64)) (VerifyStats, error) {
	var st VerifyStats
	// One listing of versions/ gives both the sources and what was
	// planted among them.
	versions, err := v.b.list(ctx, "versions/")
	if err != nil {
		return st, err
	}
	chunks, err := v.b.list(ctx, "chunks/")
	if err != nil {
		return st, err
	}
	for _, p := range append(planted(versions), planted(chunks)...) {
		key, why, _ := strings.Cut(p, ": ")
		st.Damaged = append(st.Damaged, Damage{Key: key, Why: why})
	}
	srcs := sourcesOf(versions)
	checked := map[string]error{}
	for _, s := range srcs {
		st.Sources++
		for i, ver := range s.Versions {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			st.Versions++
			if err := v.verifyOne(ctx, ver.Key, checked, &st, progress); err != nil {
				st.Damaged = append(st.Damaged, Damage{Source: s.Name, N: i + 1, Key: ver.Key, Why: err.Error()})
			}
		}
	}
	return st, nil
}

func (v *Vault) verifyOne(ctx context.Context, key string, checked map[string]error, st *VerifyStats, progress func(int64)) error {
	f, err := v.OpenVersion(ctx, key)
	if err != nil {
		return err
	}
	for _, c := range f.chunks {
		err, done := checked[c.SHA256]
		if !done {
			_, err = v.chunk(ctx, c)
			if err := ctx.Err(); err != nil {
				return err
			}
			checked[c.SHA256] = err
			st.Chunks++
			st.Bytes += c.Size
			if progress != nil {
				progress(c.Size)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
