package cmd

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sandbox": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI specification in testdata/script. Every script
// gets its own HOME and agent homes, so no test can see this machine's.
func TestScripts(t *testing.T) {
	sample, err := filepath.Abs("../fixtures/sample")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			for k, dir := range map[string]string{"HOME": "home", "CODEX_HOME": "home/.codex",
				"CLAUDE_CONFIG_DIR": "home/.claude", "SANDBOX_HOME": "home/.local/state/sandbox"} {
				p := filepath.Join(env.WorkDir, dir)
				if err := os.MkdirAll(p, 0o755); err != nil {
					return err
				}
				env.Setenv(k, p)
			}
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "home/.local/state"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SAMPLE", sample)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"snapshot": cmdSnapshot,
		},
	})
}

// cmdSnapshot writes, to FILE, one line per entry under DIR: its path, its
// type and mode, and for a file the sha256 of its bytes.
func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: snapshot DIR FILE")
	}
	root := ts.MkAbs(args[0])
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, fmt.Sprintf("%s link %s", rel, target))
		case info.IsDir():
			lines = append(lines, fmt.Sprintf("%s dir %v", rel, info.Mode().Perm()))
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s file %v %x", rel, info.Mode().Perm(), sha256.Sum256(data)))
		}
		return nil
	})
	if err != nil {
		ts.Fatalf("snapshot: %v", err)
	}
	sort.Strings(lines)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}
