package cmd

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

// BenchmarkRecoverDryRunJSON measures `sandbox recover --dry-run --json` end
// to end (read, parse, reconstruct, plan, report) on a generated Codex
// rollout and generated Claude Code, Gemini CLI and pi sessions.
// BENCH_ROLLOUT_MB sets their size (default 64).
func BenchmarkRecoverDryRunJSON(b *testing.B) {
	b.Run("codex", func(b *testing.B) { benchRecover(b, gen.Rollout) })
	b.Run("claude", func(b *testing.B) { benchRecover(b, gen.Claude) })
	b.Run("gemini", func(b *testing.B) { benchRecover(b, gen.Gemini) })
	b.Run("pi", func(b *testing.B) { benchRecover(b, gen.Pi) })
}

func benchRecover(b *testing.B, write func(io.Writer, gen.Options) (gen.Stats, error)) {
	size := int64(64)
	if v := os.Getenv("BENCH_ROLLOUT_MB"); v != "" {
		var n int64
		for _, c := range v {
			n = n*10 + int64(c-'0')
		}
		size = n
	}
	dir := b.TempDir()
	name := filepath.Join(dir, "rollout.jsonl")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	st, err := write(f, gen.Options{Size: size << 20, Seed: 1, Files: 400, PatchEvery: 20})
	if err != nil {
		b.Fatal(err)
	}
	f.Close()
	for _, k := range []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "SANDBOX_HOME", "GEMINI_CLI_HOME", "PI_CODING_AGENT_DIR"} {
		b.Setenv(k, dir)
	}
	b.SetBytes(st.Bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := newApp(nil, io.Discard, io.Discard)
		a.json = true
		a.setupLog()
		err := a.runRecover(context.Background(), recoverOptions{selectOptions: selectOptions{Transcripts: []string{name}}, Dest: filepath.Join(dir, "dest"), DryRun: true, OnConflict: "skip"})
		if err != nil {
			b.Fatal(err)
		}
	}
}
