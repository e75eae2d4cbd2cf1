package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/parse/discover"
)

// FuzzVaultRead: a vault whose version record, chunk and keys are damaged
// (edited, cut, planted) reads as errors naming what is wrong, never a
// panic, a hang or content that does not match its record.
func FuzzVaultRead(f *testing.F) {
	env, home := hermetic(f)
	v := newVault(f, env)
	p, data := rollout(f, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e70", 50)
	write(f, p, data[:len(data)/2])
	sync1(f, v, env)
	write(f, p, data)
	sync1(f, v, env)
	srcs, err := v.Sources(context.Background())
	if err != nil || len(srcs) != 1 || len(srcs[0].Versions) != 2 {
		f.Fatalf("seed vault: %v %v", srcs, err)
	}
	key := srcs[0].Versions[1].Key
	rec, _ := os.ReadFile(filepath.Join(v.Where(), key))
	r, _ := v.Record(context.Background(), key)
	chunk, _ := os.ReadFile(filepath.Join(v.Where(), chunkKey(r.Chunks[0].SHA256)))
	f.Add(rec, chunk, key)
	f.Add([]byte(`{"size":5,"chunks":[{"sha256":"00","size":-1}]}`), chunk, "versions/h/a/x/0000000000000005-"+strings.Repeat("0", 64)+".json")
	f.Add([]byte(`{"size":1,"base":"versions/h/a/x/0000000000000001-`+strings.Repeat("1", 64)+`.json"}`), []byte{}, "versions/h/a/x/0000000000000001-"+strings.Repeat("1", 64)+".json")
	f.Fuzz(func(t *testing.T, record, chunkData []byte, plant string) {
		// A read that never ends is a defect like a panic: it fails with the input.
		tm := time.AfterFunc(time.Minute, func() { panic(fmt.Sprintf("no answer in a minute: %q %q %q", record, chunkData, plant)) })
		defer tm.Stop()
		dir := t.TempDir()
		copyTree(t, v.Where(), dir)
		write(t, filepath.Join(dir, key), record)
		write(t, filepath.Join(dir, chunkKey(r.Chunks[0].SHA256)), chunkData)
		if k := filepath.Clean("/" + plant)[1:]; strings.HasPrefix(k, "versions/") && !strings.Contains(k, "\x00") {
			p := filepath.Join(dir, filepath.FromSlash(k))
			if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
				os.WriteFile(p, record, 0o644)
			}
		}
		fv, err := Open(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		srcs, err := fv.Sources(context.Background())
		if err != nil {
			return
		}
		for _, s := range srcs {
			for _, ver := range s.Versions {
				file, err := fv.OpenVersion(context.Background(), ver.Key)
				if err != nil {
					if !strings.Contains(err.Error(), dir) {
						t.Fatalf("the error does not name the vault: %v", err)
					}
					continue
				}
				got, err := file.Bytes()
				if err == nil && int64(len(got)) != file.Size() {
					t.Fatalf("%s: read %d bytes of a %d-byte version", ver.Key, len(got), file.Size())
				}
			}
		}
		// A reader leaves nothing out unsaid: each source is read, or
		// said as skipped; and verify names what the reader could not read.
		got, skipped := read(t, fv, Selector{})
		// A candidate is named <source>@v<N>; a source's name may hold
		// an @ of its own.
		said := map[string]bool{}
		for _, k := range skipped {
			said[versionSuffix.ReplaceAllString(k.Name, "")] = true
		}
		for n := range got {
			said[versionSuffix.ReplaceAllString(n, "")] = true
		}
		for _, s := range srcs {
			// A store (a database, a folder of files) is read under its
			// own name.
			if _, store := discover.StoreOf(s.Path()); !store && !strings.HasSuffix(s.Name, ".db") && !said[s.Name] {
				t.Fatalf("%s is neither read nor said (read %d, skipped: %v)", s.Name, len(got), skipped)
			}
		}
		st, err := fv.Verify(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(skipped) > 0 && len(st.Damaged) == 0 {
			t.Fatalf("the reader skipped %v, verify found nothing", skipped)
		}
	})
}

var versionSuffix = regexp.MustCompile(`@v[0-9]+$`)

// copyTree copies the files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
