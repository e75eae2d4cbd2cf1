package shellcmd

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// corpusCommand is one shell command an agent ran, and where.
type corpusCommand struct {
	File    string
	Line    int
	Command string
}

// extractCommands returns every Bash command of the Claude Code sessions
// and every shell command of the Codex rollouts in files, in order.
func extractCommands(t testing.TB, files []string) []corpusCommand {
	t.Helper()
	var out []corpusCommand
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			for _, cmd := range lineCommands(line) {
				out = append(out, corpusCommand{File: filepath.Base(name), Line: n, Command: cmd})
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f.Close()
	}
	return out
}

// lineCommands returns the shell commands one transcript line asks to run:
// Claude Code's Bash tool_use inputs, and Codex's shell, shell_command and
// exec_command function calls (see shared/formats/codex.md).
func lineCommands(line []byte) []string {
	var out []string
	gjson.GetBytes(line, "message.content").ForEach(func(_, item gjson.Result) bool {
		if item.Get("type").Str == "tool_use" && item.Get("name").Str == "Bash" {
			if c := item.Get("input.command"); c.Type == gjson.String {
				out = append(out, strings.Clone(c.Str))
			}
		}
		return true
	})
	item := gjson.GetBytes(line, "payload")
	if !item.Exists() {
		item = gjson.ParseBytes(line)
	}
	if item.Get("type").Str != "function_call" {
		return out
	}
	args := gjson.Parse(item.Get("arguments").Str)
	switch item.Get("name").Str {
	case "shell", "container.exec":
		argv := args.Get("command").Array()
		if len(argv) >= 3 && (argv[0].Str == "bash" || argv[0].Str == "sh" || argv[0].Str == "zsh") {
			out = append(out, strings.Clone(argv[len(argv)-1].Str))
		}
	case "shell_command":
		out = append(out, strings.Clone(args.Get("command").Str))
	case "exec_command":
		out = append(out, strings.Clone(args.Get("cmd").Str))
	}
	return out
}

// loadCorpus returns the commands of the real Claude Code sessions of
// fixtures/corpus/claude-entire (a copy of shared/corpus/claude-entire).
func loadCorpus(t testing.TB) []corpusCommand {
	t.Helper()
	files, _ := filepath.Glob("../../fixtures/corpus/claude-entire/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no sessions in fixtures/corpus/claude-entire")
	}
	return extractCommands(t, files)
}

// fixtureCommands returns the commands of the transcripts kept in the
// project's fixtures.
func fixtureCommands(t testing.TB) []corpusCommand {
	t.Helper()
	files, _ := filepath.Glob("../../fixtures/corpus/claude/*.jsonl")
	codex, _ := filepath.Glob("../../fixtures/corpus/codex/*.jsonl")
	return extractCommands(t, append(files, codex...))
}

// checkGolden compares got with the golden file, or rewrites it with
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test ./manifest/shellcmd -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date (run go test ./manifest/shellcmd -update and read the diff)", name)
	}
}

// TestCorpusProperties checks, over every real command, what no reading
// may ever do: invent a path that is not in the command, take a flag or a
// line of text for a path.
func TestCorpusProperties(t *testing.T) {
	cmds := append(loadCorpus(t), fixtureCommands(t)...)
	if len(cmds) < 500 {
		t.Fatalf("only %d corpus commands", len(cmds))
	}
	for _, c := range cmds {
		r := Parse(c.Command)
		if err := checkResult(c.Command, r); err != nil {
			t.Errorf("%s:%d: %v\n%s", c.File, c.Line, err, c.Command)
		}
		if r.Writes() && !mayWrite(c.Command) {
			t.Errorf("%s:%d: the prefilter rules out a command that writes\n%s", c.File, c.Line, c.Command)
		}
	}
}

// TestCorpusEffects lists, for every distinct claude-entire command that
// has effects, its first line and its effects, in
// testdata/corpus-effects.txt: the file to read when the reading changes.
func TestCorpusEffects(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Effects of the Bash commands of fixtures/corpus/claude-entire (go test ./manifest/shellcmd -update).\n")
	b.WriteString("# One entry per distinct command, headed by the first place each session ran it.\n")
	var order []string
	where := map[string][]string{}
	for _, c := range loadCorpus(t) {
		at := fmt.Sprintf("%s:%d", c.File, c.Line)
		w, seen := where[c.Command]
		if !seen {
			order = append(order, c.Command)
		}
		if !slices.ContainsFunc(w, func(s string) bool { return strings.HasPrefix(s, c.File+":") }) {
			where[c.Command] = append(w, at)
		}
	}
	for _, cmd := range order {
		r := Parse(cmd)
		if len(r.Effects) == 0 && len(r.Vague) == 0 && r.Err == nil {
			continue
		}
		first, rest, multi := strings.Cut(cmd, "\n")
		fmt.Fprintf(&b, "\n## %s\n$ %s", strings.Join(where[cmd], " "), first)
		if multi {
			fmt.Fprintf(&b, "  […%d more lines]", strings.Count(rest, "\n")+1)
		}
		b.WriteByte('\n')
		b.WriteString(describe(r))
	}
	checkGolden(t, "testdata/corpus-effects.txt", []byte(b.String()))
}
