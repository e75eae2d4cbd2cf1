package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/internal/s3test"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// TestS3Vault: two machines sync into one S3 vault at once; the vault holds
// both, every version reads whole, and a conditional write never replaces
// what another writer put first.
func TestS3Vault(t *testing.T) {
	srv := s3test.Start(t)
	srv.Setenv(t)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "vault"); err != nil {
		t.Fatal(err)
	}
	where := "s3://vault/agents/"
	var envs []osenv.Env
	for i := range 2 {
		env, home := hermetic(t)
		for j := range 4 {
			p, data := rollout(t, home, fmt.Sprintf("019e5a1c-3b7d-7c21-9f4e-2a6b8d%d%05d", i, j), 2000+j*300)
			write(t, p, data)
		}
		envs = append(envs, env)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := Create(ctx, where, Options{})
			if err != nil {
				errs <- err
				return
			}
			for range 2 {
				st, err := v.Sync(ctx, SyncOptions{Env: env, Host: fmt.Sprintf("host%d", i)})
				if err == nil && len(st.Problems) > 0 {
					err = fmt.Errorf("%v", st.Problems)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, err := Open(ctx, where, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srcs := check(t, v)
	if len(srcs) != 8 {
		t.Fatalf("%d sources, want 8 (4 of each host)", len(srcs))
	}
	// Growth is stored as its new bytes, from a second machine's view too.
	p := filepath.Join(envs[0].Get("HOME"), ".codex", "sessions", "2026", "11", "20")
	entries, _ := os.ReadDir(p)
	fh, _ := os.OpenFile(filepath.Join(p, entries[0].Name()), os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"timestamp":"2026-11-20T10:09:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"more"}]}}` + "\n")
	fh.Close()
	st, err := v.Sync(ctx, SyncOptions{Env: envs[0], Host: "host0"})
	if err != nil || st.Versions != 1 || st.Read != 1 {
		t.Fatalf("after an append: %+v %v", st, err)
	}
	rec, err := v.Record(ctx, check(t, v)[0].Longest().Key)
	if err != nil || rec.Base == "" || len(rec.Chunks) != 1 {
		t.Fatalf("the grown version should extend the last: %+v %v", rec, err)
	}
	f := &discover.Finder{}
	cands, _, err := v.Candidates(ctx, f, Selector{})
	if err != nil || len(cands) != 8 {
		t.Fatalf("%d candidates: %v", len(cands), err)
	}

	// A conditional-write conflict: the second writer of a key is refused
	// and the first one's object stays.
	client, err := objstore.New(ctx, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := objstore.Loc{Bucket: "vault", Key: "agents/conflict"}
	if err := client.Create(ctx, l, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := client.Create(ctx, l, []byte("second")); !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("the second create: %v, want ErrExists", err)
	}
	if got, _ := client.Get(ctx, l); string(got) != "first" {
		t.Fatalf("the object holds %q after a refused write", got)
	}
	// Racing writers of one key: exactly one wins.
	wins := make(chan int, 8)
	var race sync.WaitGroup
	for i := range 8 {
		race.Add(1)
		go func() {
			defer race.Done()
			if client.Create(ctx, objstore.Loc{Bucket: "vault", Key: "agents/race"}, fmt.Appendf(nil, "%d", i)) == nil {
				wins <- i
			}
		}()
	}
	race.Wait()
	close(wins)
	if n := len(wins); n != 1 {
		t.Fatalf("%d writers of one key succeeded, want 1", n)
	}
}
