package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// countingFS counts the transcripts opened through it.
type countingFS struct {
	discover.OS
	opens atomic.Int64
}

func (c *countingFS) Open(name string) (discover.File, error) {
	if strings.HasSuffix(name, ".jsonl") {
		c.opens.Add(1)
	}
	return c.OS.Open(name)
}

// synthHome generates a home of codex and claude sessions and returns the
// environment that names it, what it holds, and its end.
func synthHome(t testing.TB, codex, claude int, mean int64) (osenv.Env, gen.HomeStats, time.Time) {
	dir := t.TempDir()
	to := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	st, err := gen.Home(filepath.Join(dir, ".codex"), filepath.Join(dir, ".claude"),
		gen.HomeOptions{Codex: codex, Claude: claude, From: to.AddDate(-1, 0, 0), To: to, MeanSize: mean, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	env := osenv.Process()
	for k, v := range map[string]string{"HOME": dir, "CODEX_HOME": filepath.Join(dir, ".codex"),
		"CLAUDE_CONFIG_DIR": filepath.Join(dir, ".claude"), "SANDBOX_HOME": filepath.Join(dir, "sandbox"),
		"XDG_STATE_HOME": filepath.Join(dir, ".local", "state"), "XDG_CONFIG_HOME": filepath.Join(dir, ".config"),
		"XDG_DATA_HOME": filepath.Join(dir, ".local", "share"), "GEMINI_CLI_HOME": dir, "PI_CODING_AGENT_DIR": filepath.Join(dir, ".pi", "agent"), "COPILOT_HOME": filepath.Join(dir, ".copilot"), "CRUSH_GLOBAL_DATA": filepath.Join(dir, ".local", "share", "crush"),
		"QWEN_HOME":   filepath.Join(dir, ".qwen"),
		"SANDBOX_NOW": to.Format(time.RFC3339)} {
		env = env.With(k, v)
	}
	return env, st, to
}

// TestSinceOpensOnlyTheWindow checks that `sessions --since 24h` opens only
// the transcripts that can hold activity in the window (those written since
// then), however many others the home holds.
func TestSinceOpensOnlyTheWindow(t *testing.T) {
	t.Parallel()
	env, st, now := synthHome(t, 400, 80, 8<<10)
	fsys := &countingFS{}
	a := newAppIn(env, nil, io.Discard, io.Discard)
	a.setupLog()
	sel, _, err := a.selectSessions(context.Background(), selectOptions{Since: "24h"}, fsys, false)
	if err != nil {
		t.Fatal(err)
	}
	want := st.Active(now.Add(-24 * time.Hour))
	if got := int(fsys.opens.Load()); got != want || len(sel) > want {
		t.Errorf("opened %d transcripts and selected %d of %d; %d can be in the window", got, len(sel), st.Files, want)
	}
	if want == 0 || want > st.Files/20 {
		t.Fatalf("the generated home has %d of %d in the window: not a useful test", want, st.Files)
	}
}

// BenchmarkSessions measures `sandbox sessions` over a synthetic home
// (BENCH_HOME_SESSIONS rollouts, default 600, plus a fifth as many Claude
// sessions): the full scan, and --since 24h, which must open only the
// transcripts that can be in the window.
func BenchmarkSessions(b *testing.B) {
	n := 600
	if v := os.Getenv("BENCH_HOME_SESSIONS"); v != "" {
		fmt.Sscan(v, &n)
	}
	env, st, _ := synthHome(b, n, n/5, 64<<10)
	run := func(b *testing.B, o selectOptions) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			a := newAppIn(env, nil, io.Discard, io.Discard)
			a.setupLog()
			a.json = true
			if err := a.runSessions(context.Background(), sessionsOptions{selectOptions: o}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("full", func(b *testing.B) { b.SetBytes(st.Bytes); run(b, selectOptions{}) })
	b.Run("since-24h", func(b *testing.B) { run(b, selectOptions{Since: "24h"}) })
}
