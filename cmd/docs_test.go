package cmd

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite generated files")

// TestReference checks that docs/cli.md is the commands' own help.
func TestReference(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	const path = "../docs/cli.md"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(want, b.Bytes()) {
		t.Errorf("%s is out of date: run go test ./cmd -run TestReference -update", path)
	}
}

// TestHelpComplete checks that every command explains itself.
func TestHelpComplete(t *testing.T) {
	t.Parallel()
	root := newApp(nil, io.Discard, io.Discard).rootCommand()
	var all []*cobra.Command
	for _, c := range root.Commands() {
		all = append(append(all, c), c.Commands()...)
	}
	for _, c := range all {
		if c.Name() == "help" || c.Name() == "completion" || c.Parent().Name() == "completion" {
			continue
		}
		if c.Long == "" || c.Example == "" || c.Short == "" {
			t.Errorf("%s: needs Short, Long and Example", c.Name())
		}
		if !strings.Contains(c.Long, "\nEXIT STATUS\n") || strings.Count(c.Long, "EXIT STATUS") != 1 {
			t.Errorf("%s: needs one EXIT STATUS section, from the exit-code table (cmd/exitstatus.go)", c.Name())
		}
		if name := strings.TrimPrefix(c.CommandPath(), "sandbox "); !strings.HasPrefix(c.Long, "sandbox "+name+" ") {
			t.Errorf("%s: its long help starts %.20q; every command's starts with \"sandbox %s\"", c.Name(), c.Long, c.Name())
		}
		if r := []rune(c.Short); len(r) == 0 || !unicode.IsUpper(r[0]) || strings.HasSuffix(c.Short, ".") {
			t.Errorf("%s: its short help %q: a capital first, no final period", c.Name(), c.Short)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			// A flag that takes a value names it (FILE, DIR, SIZE…) in its
			// help, never by Go's type (stringArray, duration).
			if typ := f.Value.Type(); typ != "bool" && typ != "count" && !strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: its help shows %q as the value: put a `PLACEHOLDER` in its usage", c.Name(), f.Name, typ)
			}
		})
		if strings.Contains(strings.ToLower(c.Long), "exit status:") {
			t.Errorf("%s: an exit status paragraph of its own; the table says it", c.Name())
		}
	}
}

// TestExitCodes checks Main's mapping of outcomes to exit codes.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	sample := "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl"
	dest := t.TempDir()
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"recover", "-t", sample, "--dest", dest, "--dry-run"}, ExitOK},
		{[]string{"recover", "--bogus"}, ExitUsage},
		{[]string{"recover", "-t", sample}, ExitUsage},
		{[]string{"recover", "-t", "missing.jsonl", "--dest", dest}, ExitFailure},
		{[]string{"recover", "-t", "../fixtures/corpus/codex/01-real-0.58.0-shell-heredoc-apply_patch.jsonl", "--dest", dest, "--dry-run"}, ExitPartial},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if got := mainIn(env, c.args, nil, &out, &errb); got != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, got, c.code, errb.String())
		}
	}
}

// TestInterrupted checks that a cancelled run exits 130 and leaves nothing
// behind: the transcript is read, but nothing is written.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	a := newAppIn(env, nil, &out, &errb)
	a.setupLog()
	dest := filepath.Join(t.TempDir(), "dest")
	err := a.runRecover(ctx, recoverOptions{selectOptions: selectOptions{Transcripts: []string{"../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl"}},
		Dest: dest, OnConflict: "skip"})
	if code := a.exit(ctx, err); code != ExitInterrupted {
		t.Errorf("exit %d (err %v), want %d", code, err, ExitInterrupted)
	}
	if _, err := os.Stat(dest); err == nil {
		t.Errorf("an interrupted run created %s", dest)
	}
}
