package vault

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

// BenchmarkSyncNoChange is a sync of a home of 12,000 transcripts (10,000
// Codex rollouts over a year, 2,000 Claude Code sessions: the generator of
// make bench-big's home, at a small mean size, since nothing is read) when
// nothing changed since the last sync: it must stat, not read (the target:
// under a second, docs/performance.md). BENCH_VAULT_HOME names a home to
// keep between runs (made there when missing).
func BenchmarkSyncNoChange(b *testing.B) {
	env, home := hermetic(b)
	if h := os.Getenv("BENCH_VAULT_HOME"); h != "" {
		home = h
		env = append(env, "HOME="+h)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex")); err != nil {
		to := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
		if _, err := gen.Home(filepath.Join(home, ".codex"), filepath.Join(home, ".claude"),
			gen.HomeOptions{Codex: 10000, Claude: 2000, From: to.AddDate(-1, 0, 0), To: to, MeanSize: 4 << 10, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	v, err := Create(context.Background(), filepath.Join(b.TempDir(), "vault"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	so := SyncOptions{Env: env, Host: "box", Cache: filepath.Join(b.TempDir(), "cache.json")}
	st, err := v.Sync(context.Background(), so)
	if err != nil || st.Files != 12000 {
		b.Fatalf("the first sync: %d files, %v", st.Files, err)
	}
	b.ResetTimer()
	for b.Loop() {
		st, err := v.Sync(context.Background(), so)
		if err != nil || st.Read != 0 || st.Unchanged != 12000 {
			b.Fatalf("a sync with nothing changed read %d files (%d unchanged): %v", st.Read, st.Unchanged, err)
		}
	}
	b.ReportMetric(12000, "files/op")
}
