package cmd

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentsandbox/sandbox/fixtures/crushdb"
	"github.com/agentsandbox/sandbox/fixtures/goosedb"
	"github.com/agentsandbox/sandbox/fixtures/ocdb"
	"github.com/agentsandbox/sandbox/internal/s3test"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sandbox": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI specification in testdata/script. Every script
// gets its own HOME and agent homes, so no test can see this machine's.
func TestScripts(t *testing.T) {
	t.Parallel()
	sample, err := filepath.Abs("../fixtures/sample")
	if err != nil {
		t.Fatal(err)
	}
	ocfix, err := filepath.Abs("../fixtures/opencode")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			for k, dir := range map[string]string{"HOME": "home", "CODEX_HOME": "home/.codex",
				"CLAUDE_CONFIG_DIR": "home/.claude", "SANDBOX_HOME": "home/.local/state/sandbox",
				"GEMINI_CLI_HOME": "home", "PI_CODING_AGENT_DIR": "home/.pi/agent", "COPILOT_HOME": "home/.copilot", "CRUSH_GLOBAL_DATA": "home/.local/share/crush",
				"QWEN_HOME": "home/.qwen"} {
				p := filepath.Join(env.WorkDir, dir)
				if err := os.MkdirAll(p, 0o755); err != nil {
					return err
				}
				env.Setenv(k, p)
			}
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "home/.local/state"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "home/.local/share"))
			env.Setenv("OPENCODE_FIXTURES", ocfix)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("TZ", "UTC")
			env.Setenv("SAMPLE", sample)
			hermeticAWS(env)
			env.Setenv("MINIO_MISSING", s3test.Missing())
			return nil
		},
		// [minio]: a MinIO server binary is here, or CI=true (where
		// "minio start" then fails, naming what is missing): a script
		// starts with [!minio] skip $MINIO_MISSING.
		Condition: func(cond string) (bool, error) {
			if cond == "minio" {
				return s3test.Binary() != "" || onCI(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"snapshot":  cmdSnapshot,
			"mkrollout": cmdMkrollout,
			"archive":   cmdArchive,
			"mtime":     cmdMtime,
			"exits":     cmdExits,
			"cmpnoeol":  cmdCmpNoEOL,
			"ocdb":      cmdOcdb,
			"crushdb":   cmdCrushdb,
			"goosedb":   cmdGoosedb,
			"truncate":  cmdTruncate,
			"minio":     cmdMinio,
			"s3":        cmdS3,
		},
	})
}

// cmdExits runs a program like exec and checks its exit code:
// exits N PROGRAM [ARGS...]. Its output is kept for stdout/stderr checks.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdCmpNoEOL compares a file that ends without a newline with a txtar file,
// which always ends with one: cmpnoeol GOT WANT. GOT must be WANT without its
// final newline, byte for byte.
func cmdCmpNoEOL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpnoeol GOT WANT")
	}
	got, want := ts.ReadFile(args[0]), ts.ReadFile(args[1])
	if !strings.HasSuffix(want, "\n") || got != strings.TrimSuffix(want, "\n") {
		ts.Fatalf("%s differs from %s without its final newline:\n%q\n%q", args[0], args[1], got, want)
	}
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

// cmdMkrollout writes a small Codex rollout:
// mkrollout FILE ID CWD START [NAME=CONTENT...]; each NAME=CONTENT is an
// apply_patch Add of NAME (relative to CWD), one line of CONTENT. CWD and
// FILE may use $WORK.
func cmdMkrollout(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: mkrollout FILE ID CWD START [NAME=CONTENT...]")
	}
	start, err := time.Parse(time.RFC3339, args[3])
	ts.Check(err)
	stamp := func(i int) string {
		return start.Add(time.Duration(i) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	line := func(i int, typ string, payload any) string {
		b, _ := json.Marshal(map[string]any{"timestamp": stamp(i), "type": typ, "payload": payload})
		return string(b) + "\n"
	}
	var b strings.Builder
	b.WriteString(line(0, "session_meta", map[string]any{"id": args[1], "timestamp": stamp(0), "cwd": args[2], "cli_version": "0.130.0"}))
	b.WriteString(line(1, "turn_context", map[string]any{"cwd": args[2], "turn_id": "t1"}))
	for i, kv := range args[4:] {
		name, content, _ := strings.Cut(kv, "=")
		id := fmt.Sprintf("call_%d", i)
		patch := "*** Begin Patch\n*** Add File: " + name + "\n+" + content + "\n*** End Patch\n"
		b.WriteString(line(2+2*i, "response_item", map[string]any{"type": "custom_tool_call", "name": "apply_patch", "call_id": id, "input": patch}))
		b.WriteString(line(3+2*i, "response_item", map[string]any{"type": "custom_tool_call_output", "call_id": id,
			"output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA " + name + "\n"}))
	}
	p := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	ts.Check(os.WriteFile(p, []byte(b.String()), 0o644))
}

// cmdArchive builds an archive: archive zip|tar|tgz OUT MEMBER=FILE...;
// MEMBER may be any name ("../x"); FILE "@link:TARGET" makes a symbolic
// link member; a .gz FILE is stored as it is (a gzip member).
func cmdArchive(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: archive zip|tar|tgz OUT MEMBER=FILE...")
	}
	var buf bytes.Buffer
	members := args[2:]
	switch args[0] {
	case "zip":
		zw := zip.NewWriter(&buf)
		for _, m := range members {
			name, file, _ := strings.Cut(m, "=")
			if target, ok := strings.CutPrefix(file, "@link:"); ok {
				h := &zip.FileHeader{Name: name}
				h.SetMode(fs.ModeSymlink | 0o777)
				w, err := zw.CreateHeader(h)
				ts.Check(err)
				w.Write([]byte(target))
				continue
			}
			data, err := os.ReadFile(ts.MkAbs(file))
			ts.Check(err)
			w, err := zw.Create(name)
			ts.Check(err)
			w.Write(data)
		}
		ts.Check(zw.Close())
	case "gz":
		data, err := os.ReadFile(ts.MkAbs(members[0]))
		ts.Check(err)
		gz := gzip.NewWriter(&buf)
		gz.Write(data)
		ts.Check(gz.Close())
	case "tar", "tgz":
		var w io.Writer = &buf
		var gz *gzip.Writer
		if args[0] == "tgz" {
			gz = gzip.NewWriter(&buf)
			w = gz
		}
		tw := tar.NewWriter(w)
		for _, m := range members {
			name, file, _ := strings.Cut(m, "=")
			if target, ok := strings.CutPrefix(file, "@link:"); ok {
				ts.Check(tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777}))
				continue
			}
			data, err := os.ReadFile(ts.MkAbs(file))
			ts.Check(err)
			ts.Check(tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: time.Now()}))
			tw.Write(data)
		}
		ts.Check(tw.Close())
		if gz != nil {
			ts.Check(gz.Close())
		}
	default:
		ts.Fatalf("archive: unknown kind %q", args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), buf.Bytes(), 0o644))
}

// cmdMtime sets files' modification time: mtime RFC3339 FILE...
func cmdMtime(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mtime TIME FILE...")
	}
	t, err := time.Parse(time.RFC3339, args[0])
	ts.Check(err)
	for _, f := range args[1:] {
		ts.Check(os.Chtimes(ts.MkAbs(f), t, t))
	}
}

// cmdOcdb builds an opencode database with opencode's schema and the rows
// of a SQL script: ocdb SCRIPT.sql DB.
func cmdOcdb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: ocdb SCRIPT.sql DB")
	}
	script, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	db := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(db), 0o755))
	ts.Check(ocdb.Build(db, string(script)))
}

// cmdCrushdb builds a Crush database from a spec (fixtures/crushdb):
// crushdb SPEC.jsonl DB.
func cmdCrushdb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: crushdb SPEC.jsonl DB")
	}
	spec, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer spec.Close()
	db := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(db), 0o755))
	ts.Check(crushdb.Build(db, spec))
}

// cmdGoosedb builds a Goose sessions.db from a spec (fixtures/goosedb):
// goosedb SPEC.jsonl DB.
func cmdGoosedb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: goosedb SPEC.jsonl DB")
	}
	spec, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer spec.Close()
	db := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(db), 0o755))
	ts.Check(goosedb.Build(db, spec))
}

// cmdTruncate cuts a file to its first N bytes: truncate N FILE.
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate N FILE")
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	ts.Check(os.Truncate(ts.MkAbs(args[1]), n))
}
