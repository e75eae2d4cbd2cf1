package vault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// hermetic is an environment whose every home is under a temporary folder.
func hermetic(t testing.TB) (osenv.Env, string) {
	t.Helper()
	home := t.TempDir()
	env := osenv.Env{
		"HOME=" + home,
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"SANDBOX_HOME=" + filepath.Join(home, ".local", "state", "sandbox"),
	}
	return env, home
}

// rollout writes a Codex rollout of n turns at its place in home and
// returns its path and content.
func rollout(t testing.TB, home, id string, lines int) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"timestamp":"2026-11-20T10:00:00.000Z","type":"session_meta","payload":{"id":%q,"timestamp":"2026-11-20T10:00:00.000Z","cwd":"/work","originator":"codex_cli_rs","cli_version":"0.63.0"}}`+"\n", id)
	for i := range lines {
		fmt.Fprintf(&b, `{"timestamp":"2026-11-20T10:00:%02d.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"turn %d %s"}]}}`+"\n", i%60, i, strings.Repeat("x", 200))
	}
	p := filepath.Join(home, ".codex", "sessions", "2026", "11", "20", "rollout-2026-11-20T10-00-00-"+id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	return p, b.Bytes()
}

func write(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newVault(t testing.TB, env osenv.Env) *Vault {
	t.Helper()
	where, err := Resolve(env, "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Create(context.Background(), where, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sync1(t testing.TB, v *Vault, env osenv.Env) SyncStats {
	t.Helper()
	st, err := v.Sync(context.Background(), SyncOptions{Env: env, Host: "box"})
	if err != nil || len(st.Problems) > 0 {
		t.Fatalf("sync: %v %v", err, st.Problems)
	}
	return st
}

// content reads a version back whole.
func content(t testing.TB, v *Vault, key string) []byte {
	t.Helper()
	f, err := v.OpenVersion(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// check reads every version of every source back and checks it against
// the SHA-256 its key names: the vault is whole.
func check(t testing.TB, v *Vault) []Source {
	t.Helper()
	srcs, err := v.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		for _, ver := range s.Versions {
			data := content(t, v, ver.Key)
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != ver.SHA256 || int64(len(data)) != ver.Size {
				t.Fatalf("%s: content does not match its key", ver.Key)
			}
		}
	}
	return srcs
}

// TestEveryVersionKept: a transcript that grows, is cut short, is rewritten
// and is deleted between syncs leaves every version in the vault, readable
// byte for byte; a reader takes the longest.
func TestEveryVersionKept(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	p, full := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55", 12000) // past one chunk
	cut := full[:len(full)/3]
	rewritten := []byte(`{"timestamp":"2026-11-20T10:00:00.000Z","type":"session_meta","payload":{"id":"019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55"}}` + "\n")

	var stored []int64
	write(t, p, cut)
	st := sync1(t, v, env)
	stored = append(stored, st.Stored)
	if st.Versions != 1 {
		t.Fatalf("first sync: %+v", st)
	}
	if st := sync1(t, v, env); st.Read != 0 || st.Unchanged != 1 || st.Versions != 0 {
		t.Fatalf("a sync with nothing changed read: %+v", st)
	}
	write(t, p, full) // grew
	st = sync1(t, v, env)
	stored = append(stored, st.Stored)
	write(t, p, cut[:len(cut)/2]) // cut short
	sync1(t, v, env)
	write(t, p, rewritten) // rewritten
	sync1(t, v, env)
	if err := os.Remove(p); err != nil { // deleted
		t.Fatal(err)
	}
	if st := sync1(t, v, env); st.Gone != 1 {
		t.Fatalf("deletion not seen: %+v", st)
	}
	srcs := check(t, v)
	if len(srcs) != 1 || len(srcs[0].Versions) != 4 || !srcs[0].GoneNow() {
		t.Fatalf("sources: %+v", srcs)
	}
	want := [][]byte{cut, full, cut[:len(cut)/2], rewritten}
	for i, ver := range srcs[0].Versions {
		if !bytes.Equal(content(t, v, ver.Key), want[i]) {
			t.Errorf("version %d differs from what the file held", i+1)
		}
	}
	// The grown file stored only what was appended: its chunks are a
	// fraction of the whole (compressed, and without the first third).
	if stored[1] >= int64(len(full)) {
		t.Errorf("growing stored %d bytes for a %d-byte file", stored[1], len(full))
	}
	if got := srcs[0].Longest(); got.Size != int64(len(full)) {
		t.Errorf("longest is %d bytes, want %d", got.Size, len(full))
	}
	if got, _ := srcs[0].Pick(Selector{N: 1}); got.Size != int64(len(cut)) {
		t.Errorf("version 1 is %d bytes", got.Size)
	}
	// Read as a source, the vault gives the longest version.
	f := &discover.Finder{}
	cands, _, err := v.Candidates(context.Background(), f, Selector{})
	if err != nil || len(cands) != 1 {
		t.Fatalf("candidates: %v %v", cands, err)
	}
	rc, err := cands[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, full) {
		t.Fatalf("the vault read as a source gives %d bytes, want the longest (%d)", len(got), len(full))
	}
	// A version the file does not hold, by number or by time, is said,
	// not silently nothing.
	for _, sel := range []Selector{{N: 5}, {At: srcs[0].Versions[0].Seen.Add(-time.Hour)}} {
		cands, skipped, err := v.Candidates(context.Background(), f, sel)
		if err != nil || len(cands) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Why, "1 file") {
			t.Errorf("%+v: %v %+v %v", sel, cands, skipped, err)
		}
	}
}

// TestSyncAfterCacheLoss: a sync that lost its cache reads the files again
// but stores nothing it holds.
func TestSyncAfterCacheLoss(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	p, data := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e56", 300)
	write(t, p, data)
	sync1(t, v, env)
	if err := os.RemoveAll(filepath.Join(home, ".cache")); err != nil {
		t.Fatal(err)
	}
	if st := sync1(t, v, env); st.Versions != 0 || st.Read != 1 {
		t.Fatalf("after the cache was lost: %+v", st)
	}
	write(t, p, append(data, data[len(data)/2:]...))
	os.RemoveAll(filepath.Join(home, ".cache"))
	if st := sync1(t, v, env); st.Versions != 1 {
		t.Fatalf("growth after the cache was lost: %+v", st)
	}
	check(t, v)
}

// TestConcurrentFirstSyncs: syncs that each make a new vault in one folder
// at once (two shells running their first sync) all succeed, into one
// vault: none clears another's half-written marker as a killed sync's.
func TestConcurrentFirstSyncs(t *testing.T) {
	env, home := hermetic(t)
	rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e99", 50)
	for round := range 20 {
		where := filepath.Join(t.TempDir(), "vault")
		ids := make([]string, 4)
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := Create(context.Background(), where, Options{})
				if err == nil {
					ids[w] = v.ID()
					_, err = v.Sync(context.Background(), SyncOptions{Env: env, Host: "box", Cache: filepath.Join(home, fmt.Sprintf("cache-%d-%d.json", round, w))})
				}
				errs[w] = err
			}()
		}
		wg.Wait()
		for w, err := range errs {
			if err != nil {
				t.Fatalf("round %d, sync %d: %v", round, w, err)
			}
			if ids[w] != ids[0] {
				t.Fatalf("round %d: two vaults made in one folder (%s, %s)", round, ids[0], ids[w])
			}
		}
	}
}

// TestConcurrentSyncs: syncs of one vault at once, from two caches, while
// the transcripts grow, leave a vault whose every version reads whole.
func TestConcurrentSyncs(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	var paths []string
	var datas [][]byte
	for i := range 5 {
		p, data := rollout(t, home, fmt.Sprintf("019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e%02d", i), 400)
		write(t, p, data[:len(data)/2])
		paths, datas = append(paths, p), append(datas, data)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				st, err := v.Sync(context.Background(), SyncOptions{Env: env, Host: "box", Cache: filepath.Join(home, fmt.Sprintf("cache-%d.json", w))})
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
	for i, p := range paths {
		write(t, p, datas[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sync1(t, v, env)
	srcs := check(t, v)
	if len(srcs) != 5 {
		t.Fatalf("%d sources", len(srcs))
	}
	for _, s := range srcs {
		if s.Longest().Size != int64(len(datas[0])) {
			t.Errorf("%s: longest %d bytes", s.Name, s.Longest().Size)
		}
	}
}

// TestSQLiteWhileWritten: a database written to all through the sync is
// copied as of one transaction: every version is a whole database whose
// sessions read.
func TestSQLiteWhileWritten(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	dir := filepath.Join(home, ".local", "share", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "opencode.db")
	if _, err := gen.OpencodeDB(db, 40, 1); err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "file", Path: db}
	w, err := sql.Open("sqlite", u.String()+"?_pragma=journal_mode(wal)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// Each transaction adds a message and its part: a copy that tore
		// would hold one without the other, or a damaged page.
		for i := 0; ctx.Err() == nil; i++ {
			tx, err := w.Begin()
			if err != nil {
				done <- err
				return
			}
			id := fmt.Sprintf("msg_w%08d", i)
			_, err = tx.Exec("INSERT INTO message (id, session_id, time_created, time_updated, data) SELECT ?, id, 1763800000000, 1763800000000, '{\"role\":\"user\"}' FROM session LIMIT 1", id)
			if err == nil {
				_, err = tx.Exec("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) SELECT ?, ?, id, 1763800000000, 1763800000000, ? FROM session LIMIT 1", "prt_"+id, id, `{"type":"text","text":"`+strings.Repeat("y", 3000)+`"}`)
			}
			if err != nil {
				tx.Rollback()
				done <- err
				return
			}
			if err := tx.Commit(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 4 {
		sync1(t, v, env)
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	srcs := check(t, v)
	if len(srcs) != 1 || len(srcs[0].Versions) < 2 {
		t.Fatalf("sources: %+v", srcs)
	}
	for _, ver := range srcs[0].Versions {
		p := filepath.Join(t.TempDir(), "copy.db")
		write(t, p, content(t, v, ver.Key))
		c, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: p}).String())
		if err != nil {
			t.Fatal(err)
		}
		var ok string
		var orphans int
		if err := c.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("%s: integrity %q %v", ver.Key, ok, err)
		}
		if err := c.QueryRow("SELECT count(*) FROM message m WHERE m.id LIKE 'msg_w%' AND NOT EXISTS (SELECT 1 FROM part p WHERE p.message_id = m.id)").Scan(&orphans); err != nil || orphans != 0 {
			t.Fatalf("%s: %d messages without their part (a torn copy) %v", ver.Key, orphans, err)
		}
		c.Close()
	}
	f := &discover.Finder{}
	defer f.RemoveSpools()
	cands, skipped, err := v.Candidates(context.Background(), f, Selector{})
	if err != nil || len(skipped) > 0 || len(cands) != 40 {
		t.Fatalf("the kept database gives %d sessions, skipped %v, %v", len(cands), skipped, err)
	}
}

// TestWatchPicksUpAnAppend: --watch stores an append within 2 seconds.
func TestWatchPicksUpAnAppend(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	p, data := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e57", 100)
	write(t, p, data[:len(data)/2])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synced := make(chan SyncStats, 16)
	go Watch(ctx, v, SyncOptions{Env: env, Host: "box"}, WatchOptions{After: func(st SyncStats, err error) {
		if err == nil {
			synced <- st
		}
	}})
	if st := <-synced; st.Versions != 1 {
		t.Fatalf("the first sync: %+v", st)
	}
	start := time.Now()
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write(data[len(data)/2:])
	fh.Close()
	for {
		select {
		case st := <-synced:
			if st.Versions == 0 {
				continue
			}
			t.Logf("stored %s after the append", time.Since(start))
			srcs := check(t, v)
			if srcs[0].Longest().Size != int64(len(data)) {
				t.Fatalf("longest %d, want %d", srcs[0].Longest().Size, len(data))
			}
			return
		case <-time.After(2*time.Second - time.Since(start)):
			t.Fatal("no sync within 2 seconds of the append")
		}
	}
}

// TestPrune: prune removes only what the newest version holds all of, and
// never a version another is stored as an extension of; every version left
// reads whole.
func TestPrune(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	p, full := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e58", 6000)
	write(t, p, full[:len(full)/3]) // V1
	sync1(t, v, env)
	write(t, p, full[:len(full)/6]) // V2: cut short, stored whole
	sync1(t, v, env)
	write(t, p, full) // V3: extends V2
	sync1(t, v, env)
	other, odata := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e59", 100)
	write(t, other, odata)
	sync1(t, v, env)
	write(t, other, []byte("{}\n")) // rewritten: not the first bytes of anything
	sync1(t, v, env)

	ctx := context.Background()
	if st, err := v.Prune(ctx, PruneOptions{Keep: time.Hour, Now: time.Now()}); err != nil || st.Versions != 0 {
		t.Fatalf("prune within --keep removed %+v %v", st, err)
	}
	dry, err := v.Prune(ctx, PruneOptions{Now: time.Now().Add(time.Hour), DryRun: true})
	if err != nil || dry.Versions != 1 || dry.Chunks == 0 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if len(check(t, v)[0].Versions)+len(check(t, v)[1].Versions) != 5 {
		t.Fatal("a dry run removed versions")
	}
	st, err := v.Prune(ctx, PruneOptions{Now: time.Now().Add(time.Hour)})
	if err != nil || st.Versions != 1 || st.Chunks != dry.Chunks {
		t.Fatalf("prune: %+v %v (dry run said %+v)", st, err, dry)
	}
	srcs := check(t, v)
	var kept []int64
	for _, ver := range srcs[0].Versions {
		kept = append(kept, ver.Size)
	}
	if len(kept) != 2 || kept[0] != int64(len(full)/6) || kept[1] != int64(len(full)) {
		t.Fatalf("kept sizes %v: want the cut one (the newest extends it) and the newest", kept)
	}
	if len(srcs[1].Versions) != 2 {
		t.Fatalf("a rewritten file's earlier version was pruned: %+v", srcs[1].Versions)
	}
	if again, err := v.Prune(ctx, PruneOptions{Now: time.Now().Add(time.Hour)}); err != nil || again.Versions+again.Chunks != 0 {
		t.Fatalf("a second prune: %+v %v", again, err)
	}
}

// TestSymlinkNotFollowed: a link in an agent's folder, named like a
// transcript, is not copied out (it could name any file of the user's).
func TestSymlinkNotFollowed(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	p, data := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e60", 10)
	write(t, p, data)
	secret := filepath.Join(home, "secret")
	write(t, secret, []byte("password\n"))
	link := filepath.Join(filepath.Dir(p), "rollout-2026-11-20T10-00-00-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e61.jsonl")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	st := sync1(t, v, env)
	if st.Versions != 1 || len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0], "symbolic link") {
		t.Fatalf("sync: %+v", st)
	}
	for _, s := range check(t, v) {
		if strings.HasSuffix(s.Name, "1e61.jsonl") {
			t.Fatalf("the link was followed into the vault: %s", s.Name)
		}
	}
}

// TestMirrorSeesANewSession: a mirror (Tree) stores a transcript written
// in its workspace's new folders within a second, not at the next rescan.
func TestMirrorSeesANewSession(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	root := filepath.Join(home, "state")
	ws := filepath.Join(root, "sessions", "s1", "home")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synced := make(chan SyncStats, 64)
	so := SyncOptions{Env: env, Host: "box", Cache: filepath.Join(home, "c.json"), Tree: &Tree{Root: root, Workspace: ws,
		Files: []string{filepath.Join(root, "sessions", "s1", "session.json")}}}
	go Watch(ctx, v, so, WatchOptions{Rescan: time.Minute, After: func(st SyncStats, err error) { synced <- st }})
	<-synced
	start := time.Now()
	p := filepath.Join(ws, ".claude", "projects", "-w", "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e62.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	write(t, p, []byte(`{"type":"user","sessionId":"019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e62","parentUuid":null,"uuid":"u1","timestamp":"2026-11-20T10:00:00.000Z","cwd":"/w","message":{"role":"user","content":"hi"}}`+"\n"))
	for {
		select {
		case st := <-synced:
			if st.Versions == 0 {
				continue
			}
			t.Logf("stored %s after it was written", time.Since(start).Round(time.Millisecond))
			srcs := check(t, v)
			if len(srcs) != 1 || srcs[0].Name != "box/sandbox/sessions/s1/home/.claude/projects/-w/019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e62.jsonl" {
				t.Fatalf("sources %+v", srcs)
			}
			return
		case <-time.After(time.Second - time.Since(start)):
			t.Fatal("not stored within a second")
		}
	}
}

// TestAppendReadsOnlyNewBytes: a transcript appended to in place is read
// from where the last version ended (its ends checked), not whole; one
// replaced by another file (a new inode) is read whole.
func TestAppendReadsOnlyNewBytes(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	p, data := rollout(t, home, "019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e71", 20000) // about 5 MB
	write(t, p, data[:len(data)-1000])
	sync1(t, v, env)
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write(data[len(data)-1000:])
	fh.Close()
	st := sync1(t, v, env)
	if st.Versions != 1 || st.ReadBytes > 3*endsWindow {
		t.Fatalf("an append of 1000 bytes read %d bytes: %+v", st.ReadBytes, st)
	}
	srcs := check(t, v)
	if !bytes.Equal(content(t, v, srcs[0].Longest().Key), data) {
		t.Fatal("the appended version differs from the file")
	}
	// The same bytes and more, as a new file renamed over it.
	tmp := p + ".tmp"
	write(t, tmp, append(append([]byte{}, data...), data[:500]...))
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if st := sync1(t, v, env); st.ReadBytes < int64(len(data)) || st.Versions != 1 {
		t.Fatalf("a file replaced by another was not read whole: %+v", st)
	}
	check(t, v)
}

// TestFileStoreReadBack: opencode's legacy file store, kept file by file,
// reads back from the vault as the store: the same sessions as at home.
func TestFileStoreReadBack(t *testing.T) {
	env, home := hermetic(t)
	v := newVault(t, env)
	storage := filepath.Join(home, ".local", "share", "opencode", "storage")
	copyTree(t, filepath.Join("..", "fixtures", "opencode", "storage"), storage)
	st := sync1(t, v, env)
	if st.Versions != 7 {
		t.Fatalf("synced %+v, want the store's 7 files", st)
	}
	f := &discover.Finder{}
	defer f.RemoveSpools()
	at := f.Homes(discover.HomesIn(home), discover.Window{})
	cands, skipped, err := v.Candidates(context.Background(), f, Selector{})
	if err != nil || len(skipped) > 0 {
		t.Fatalf("%v %v", skipped, err)
	}
	if len(cands) != len(at) || len(at) == 0 {
		t.Fatalf("%d sessions from the vault, %d at home", len(cands), len(at))
	}
	for i := range at {
		if cands[i].ID != at[i].ID {
			t.Errorf("session %d: %q from the vault, %q at home", i, cands[i].ID, at[i].ID)
		}
		want, _ := at[i].Open()
		got, err := cands[i].Open()
		if err != nil {
			t.Fatal(err)
		}
		a, _ := io.ReadAll(want)
		b, _ := io.ReadAll(got)
		// Each record names the file it came from: the copy's differ.
		src := regexp.MustCompile(`"src":"[^"]*"`)
		a, b = src.ReplaceAll(a, nil), src.ReplaceAll(b, nil)
		if !bytes.Equal(a, b) {
			t.Errorf("session %s reads differently from the vault:\n%s\n---\n%s", at[i].ID, a[:min(len(a), 600)], b[:min(len(b), 600)])
		}
	}
}
