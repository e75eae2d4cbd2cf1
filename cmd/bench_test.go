package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/inspect"
)

// BenchmarkRecoverDryRunJSON measures `sandbox recover --dry-run --json` end
// to end (read, parse, reconstruct, plan, report) on a generated Codex
// rollout and generated Claude Code, Gemini CLI and pi sessions.
// BENCH_ROLLOUT_MB sets their size (default 64). BENCH_TRANSCRIPT names a
// file to read instead (each sub-benchmark then reads it), so that a profile
// of a big page-cached transcript holds no generator:
//
//	BENCH_TRANSCRIPT=bench/claude-1g.jsonl go test ./cmd -run - \
//	    -bench 'RecoverDryRunJSON/claude$' -benchtime 3x -cpuprofile cpu.prof
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
	var st gen.Stats
	if given := os.Getenv("BENCH_TRANSCRIPT"); given != "" {
		if !filepath.IsAbs(given) {
			// Named from the module's root, as the command above does;
			// the test runs in cmd.
			given = filepath.Join("..", given)
		}
		fi, err := os.Stat(given)
		if err != nil {
			b.Fatal(err)
		}
		name, st.Bytes = given, fi.Size()
	} else {
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		st, err = write(f, gen.Options{Size: size << 20, Seed: 1, Files: 400, PatchEvery: 20})
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	for _, k := range []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "SANDBOX_HOME", "XDG_DATA_HOME", "GEMINI_CLI_HOME", "PI_CODING_AGENT_DIR", "COPILOT_HOME", "CRUSH_GLOBAL_DATA",
		"QWEN_HOME", "GOOSE_PATH_ROOT", "FACTORY_HOME_OVERRIDE"} {
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

// BenchmarkSessionsOpencode measures `sandbox sessions --from opencode.db
// --json` on a generated database of BENCH_OPENCODE_SESSIONS sessions
// (default 10000): listing, parsing every session and counting its
// operations. The target is under a second for 10,000 sessions.
func BenchmarkSessionsOpencode(b *testing.B) {
	n := 10000
	if v := os.Getenv("BENCH_OPENCODE_SESSIONS"); v != "" {
		n = 0
		for _, c := range v {
			n = n*10 + int(c-'0')
		}
	}
	dir := b.TempDir()
	db := filepath.Join(dir, "opencode.db")
	size, err := gen.OpencodeDB(db, n, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "SANDBOX_HOME", "XDG_DATA_HOME"} {
		b.Setenv(k, dir)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out countWriter
		if code := Main([]string{"sessions", "--from", db, "--json"}, nil, &out, io.Discard); code != ExitOK {
			b.Fatalf("exit %d", code)
		}
		if out.n == 0 {
			b.Fatal("no output")
		}
	}
	b.ReportMetric(float64(n), "sessions")
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkInspectReport measures inspect's reports on a generated Codex
// session of about 1,000 tool calls and 200 files: the whole command with
// --html (parse, replay, diffs, page), and the HTML and Markdown rendering
// alone from a built inspect.Inspection. Bytes are the report's.
func BenchmarkInspectReport(b *testing.B) {
	dir := b.TempDir()
	for _, k := range []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "SANDBOX_HOME", "XDG_STATE_HOME"} {
		b.Setenv(k, dir)
	}
	name := filepath.Join(dir, "rollout-2026-11-20T09-12-03-019e0001-0000-7000-8000-000000000001.jsonl")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := gen.Rollout(f, gen.Options{Size: 8700 << 10, Seed: 1, Files: 60, PatchEvery: 20}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var js bytes.Buffer
	if code := Main([]string{"inspect", name, "--json"}, strings.NewReader(""), &js, io.Discard); code != ExitOK {
		b.Fatalf("inspect --json: exit %d", code)
	}
	var in inspect.Inspection
	if err := json.Unmarshal(js.Bytes(), &in); err != nil {
		b.Fatal(err)
	}
	var page, md bytes.Buffer
	inspect.RenderHTML(&page, inspect.NewReport(&in, false, inspect.Footer{}))
	inspect.WriteMarkdown(&md, inspect.NewReport(&in, false, inspect.Footer{}))
	b.Run("html-command", func(b *testing.B) {
		out := filepath.Join(dir, "report.html")
		b.SetBytes(int64(page.Len()))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			a := newApp(nil, io.Discard, io.Discard)
			a.quiet = true
			a.setupLog()
			if err := a.runInspect(context.Background(), name, inspectOptions{HTML: out, Format: "text"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("html-render", func(b *testing.B) {
		b.SetBytes(int64(page.Len()))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := inspect.RenderHTML(io.Discard, inspect.NewReport(&in, false, inspect.Footer{})); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("md-render", func(b *testing.B) {
		b.SetBytes(int64(md.Len()))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := inspect.WriteMarkdown(io.Discard, inspect.NewReport(&in, false, inspect.Footer{})); err != nil {
				b.Fatal(err)
			}
		}
	})
}
