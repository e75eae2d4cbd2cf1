package vault

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/parse/discover"
)

// damagedVault syncs a transcript twice (it grows in between) and returns
// the vault, the chunk only its second version names, and both contents.
func damagedVault(t *testing.T) (v *Vault, root, newChunk string, first, second []byte) {
	t.Helper()
	env, home := hermetic(t)
	v = newVault(t, env)
	p, data := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e70", 40)
	write(t, p, data[:len(data)/2])
	sync1(t, v, env)
	write(t, p, data)
	sync1(t, v, env)
	srcs := check(t, v)
	if len(srcs) != 1 || len(srcs[0].Versions) != 2 {
		t.Fatalf("vault holds %+v", srcs)
	}
	rec, err := v.Record(context.Background(), srcs[0].Versions[1].Key)
	if err != nil || len(rec.Chunks) != 1 || rec.Base == "" {
		t.Fatalf("the second version is not an append of one chunk: %+v %v", rec, err)
	}
	return v, v.Where(), filepath.Join(v.Where(), filepath.FromSlash(chunkKey(rec.Chunks[0].SHA256))), data[:len(data)/2], data
}

// read takes what a reader of the vault takes: its candidates, read whole,
// and what it skipped.
func read(t *testing.T, v *Vault, sel Selector) (map[string][]byte, []discover.Skipped) {
	t.Helper()
	f := &discover.Finder{}
	defer f.RemoveSpools()
	cands, skipped, err := v.Candidates(context.Background(), f, sel)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for i := range cands {
		rc, err := cands[i].Open()
		if err != nil {
			skipped = append(skipped, discover.Skipped{Name: cands[i].Name, Why: err.Error()})
			continue
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			skipped = append(skipped, discover.Skipped{Name: cands[i].Name, Why: err.Error()})
			continue
		}
		got[cands[i].Name] = data
	}
	return got, skipped
}

// TestDamagedVersionPassedOver: a version whose chunk is missing, or is a
// symbolic link, or whose record is damaged, is passed over for the next
// longest that reads, and said; a version none can stand in for (named by
// --version) is said, never silently left out. Verify names each.
func TestDamagedVersionPassedOver(t *testing.T) {
	for _, how := range []string{"missing", "symlink", "record"} {
		t.Run(how, func(t *testing.T) {
			v, root, chunk, first, second := damagedVault(t)
			if got, skipped := read(t, v, Selector{}); len(got) != 1 || len(skipped) != 0 || string(one(got)) != string(second) {
				t.Fatalf("whole vault: %d read, skipped %v", len(got), skipped)
			}
			switch how {
			case "missing":
				if err := os.Remove(chunk); err != nil {
					t.Fatal(err)
				}
			case "symlink":
				outside := filepath.Join(t.TempDir(), "outside")
				data, _ := os.ReadFile(chunk)
				write(t, outside, data)
				os.Remove(chunk)
				if err := os.Symlink(outside, chunk); err != nil {
					t.Fatal(err)
				}
			case "record":
				srcs, _ := v.Sources(context.Background())
				rec := filepath.Join(root, filepath.FromSlash(srcs[0].Versions[1].Key))
				os.Chmod(rec, 0o644)
				write(t, rec, []byte(`{"source":`))
			}
			got, skipped := read(t, v, Selector{})
			if len(got) != 1 || string(one(got)) != string(first) {
				t.Fatalf("the reader did not fall back to the first version: %d read, skipped %v", len(got), skipped)
			}
			// A planted link is said too, as what it is.
			if how == "symlink" && (len(skipped) != 2 || !strings.Contains(skipped[0].Why, "a symbolic link")) {
				t.Fatalf("the planted link is not said: %+v", skipped)
			}
			if last := skipped[len(skipped)-1]; !strings.HasSuffix(last.Name, "@v2") || !strings.Contains(last.Why, "read version 1") {
				t.Fatalf("the damaged version is not said: %+v", skipped)
			}
			got, skipped = read(t, v, Selector{N: 2})
			if last := skipped[len(skipped)-1]; len(got) != 0 || strings.Contains(last.Why, "instead") || !strings.Contains(last.Why, "not read") {
				t.Fatalf("--version 2: %d read, skipped %+v", len(got), skipped)
			}
			st, err := v.Verify(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if last := st.Damaged[len(st.Damaged)-1]; st.Sources != 1 || st.Versions != 2 || last.N != 2 {
				t.Fatalf("verify: %+v", st)
			}
		})
	}
}

// TestDamagedChunkContent: a chunk whose bytes were changed fails its read
// with an error naming it (the reader says so, never "no transcript"), and
// verify finds it without a reader.
func TestDamagedChunkContent(t *testing.T) {
	v, _, chunk, _, _ := damagedVault(t)
	os.Chmod(chunk, 0o644)
	write(t, chunk, []byte("garbage"))
	got, skipped := read(t, v, Selector{})
	if len(got) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Why, "is damaged") {
		t.Fatalf("%d read, skipped %+v", len(got), skipped)
	}
	st, err := v.Verify(context.Background(), nil)
	if err != nil || len(st.Damaged) != 1 || !strings.Contains(st.Damaged[0].Why, "is damaged") {
		t.Fatalf("verify: %+v %v", st, err)
	}
}

// TestPlantedLinkStaysInside: a symbolic link planted in the vault's
// folders (a chunk folder, tmp, the lock) never sends a write outside the
// vault; the sync that meets it fails or writes inside, and nothing
// appears in the folder the link names.
func TestPlantedLinkStaysInside(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	root := v.Where()
	outside := t.TempDir()
	p, data := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e71", 10)
	write(t, p, data)
	// Every chunk folder a new chunk could go to, and tmp, link outside.
	for i := range 256 {
		d := filepath.Join(root, "chunks", strings.ToLower(hexByte(i)))
		if err := os.MkdirAll(filepath.Dir(d), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, d); err != nil {
			t.Fatal(err)
		}
	}
	st, err := v.Sync(context.Background(), SyncOptions{Env: env, Host: "box"})
	if err == nil && len(st.Problems) == 0 {
		t.Fatalf("a sync through planted links reported nothing: %+v", st)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Fatalf("the sync wrote outside the vault: %v", entries)
	}
	if err := os.RemoveAll(filepath.Join(root, "tmp")); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(outside, "precious")
	write(t, keep, []byte("mine\n"))
	if err := os.Symlink(outside, filepath.Join(root, "tmp")); err != nil {
		t.Fatal(err)
	}
	_, _ = v.Sync(context.Background(), SyncOptions{Env: env, Host: "box"})
	if got, err := os.ReadFile(keep); err != nil || string(got) != "mine\n" {
		t.Fatalf("a sync removed or changed a file outside the vault through tmp: %q %v", got, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("the sync wrote outside the vault: %v", entries)
	}
}

func hexByte(i int) string {
	return string("0123456789abcdef"[i>>4]) + string("0123456789abcdef"[i&15])
}

// TestVaultNotMadeInAFullFolder: a folder of other things is not made a
// vault; a new or empty one is, and so is one a killed first sync left.
func TestVaultNotMadeInAFullFolder(t *testing.T) {
	ctx := context.Background()
	full := t.TempDir()
	write(t, filepath.Join(full, "notes.txt"), []byte("mine\n"))
	if _, err := Create(ctx, full, Options{}); err == nil || !strings.Contains(err.Error(), "holds files but no vault") {
		t.Fatalf("a full folder made a vault: %v", err)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Fatalf("the refused folder was written to: %v", entries)
	}
	for _, d := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir()} {
		if _, err := Create(ctx, d, Options{}); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
	}
	left := t.TempDir()
	os.MkdirAll(filepath.Join(left, "tmp"), 0o700)
	write(t, filepath.Join(left, "lock"), nil)
	if _, err := Create(ctx, left, Options{}); err != nil {
		t.Fatalf("a folder a killed sync left: %v", err)
	}
}

func one(m map[string][]byte) []byte {
	for _, v := range m {
		return v
	}
	return nil
}

// TestCredentialsNotCopied: a file named like a credential beside the
// transcripts (walked as part of a session's folder) stays out of the
// vault, and the sync says so; a FIFO named like a transcript neither
// blocks the sync nor goes in.
func TestCredentialsNotCopied(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	p, data := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e72", 10)
	write(t, p, data)
	dir := filepath.Dir(p)
	write(t, filepath.Join(dir, "auth.json"), []byte(`{"token":"s3cr3t"}`))
	write(t, filepath.Join(dir, "oauth_creds.json"), []byte(`{"refresh":"s3cr3t"}`))
	if err := mkfifo(filepath.Join(dir, "rollout-2026-11-20T10-00-00-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e73.jsonl")); err != nil {
		t.Fatal(err)
	}
	done := make(chan SyncStats)
	go func() { done <- sync1(t, v, env) }()
	var st SyncStats
	select {
	case st = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the sync blocks on a named pipe")
	}
	said := strings.Join(st.Skipped, "\n")
	for _, want := range []string{"auth.json: named like a credential", "oauth_creds.json: named like a credential", "1e73.jsonl: a named pipe"} {
		if !strings.Contains(said, want) {
			t.Errorf("the sync does not say %q:\n%s", want, said)
		}
	}
	for _, s := range check(t, v) {
		if !strings.HasSuffix(s.Name, "1e72.jsonl") {
			t.Errorf("the vault holds %s", s.Name)
		}
	}
}

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }

// TestPlantedRecordNotPruned: a version record (or a source's folder of
// versions) moved out of the vault and linked back is not read through,
// is named by verify and by readers, and prune removes nothing while it is
// there: the chunks it names would otherwise look unused and go.
func TestPlantedRecordNotPruned(t *testing.T) {
	for _, what := range []string{"record", "folder"} {
		t.Run(what, func(t *testing.T) {
			v, root, chunk, _, _ := damagedVault(t)
			srcs, _ := v.Sources(context.Background())
			moved := filepath.Join(root, filepath.FromSlash(srcs[0].Versions[1].Key))
			if what == "folder" {
				moved = filepath.Dir(moved)
			}
			out := filepath.Join(t.TempDir(), "out")
			if err := os.Rename(moved, out); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, moved); err != nil {
				t.Fatal(err)
			}
			st, err := v.Verify(context.Background(), nil)
			if err != nil || len(st.Damaged) == 0 || !strings.Contains(st.Damaged[0].Why, "a symbolic link") {
				t.Fatalf("verify: %+v %v", st, err)
			}
			if _, skipped := read(t, v, Selector{}); len(skipped) == 0 || !strings.Contains(skipped[0].Why, "a symbolic link") {
				t.Fatalf("the reader does not say it: %+v", skipped)
			}
			for _, dry := range []bool{true, false} {
				if _, err := v.Prune(context.Background(), PruneOptions{Keep: 0, Now: time.Now().Add(time.Hour), DryRun: dry}); err == nil || !strings.Contains(err.Error(), "prune removes nothing") {
					t.Fatalf("prune (dry run %v) ran past a planted link: %v", dry, err)
				}
			}
			if _, err := os.Stat(chunk); err != nil {
				t.Fatalf("the chunk the linked record names is gone: %v", err)
			}
		})
	}
}
