package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestRecoverAsksOnATerminal: recovering into the session's own directory
// from a terminal shows the plan and asks; "n" writes nothing, "y" writes
// exactly what was shown. The plan and the write come from one reading of
// the transcript (recov.Prepare), so the answer is about what is written.
func TestRecoverAsksOnATerminal(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	bin := sandboxBinary(t)
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(dir, "rollout.jsonl")
	writeTinyRollout(t, rollout, app, map[string]string{"notes.txt": "recovered", "b.txt": "bee"})
	for _, answer := range []string{"n", "y"} {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pseudo-terminal here: %v", err)
		}
		cmd := exec.Command(bin, "recover", "-t", rollout)
		cmd.Env = append(env.List(), "TERM=dumb")
		var stdout bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var screen bytes.Buffer
		asked := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 4096)
			once := false
			for {
				n, err := ptmx.Read(buf)
				screen.Write(buf[:n])
				if !once && strings.Contains(screen.String(), "[y/N]") {
					once = true
					close(asked)
				}
				if err != nil {
					return
				}
			}
		}()
		select {
		case <-asked:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("never asked:\n%s", screen.String())
		}
		fmt.Fprintf(ptmx, "%s\n", answer)
		err = cmd.Wait()
		ptmx.Close()
		<-done
		s := screen.String()
		for _, want := range []string{"ACTION", "create", "notes.txt", "b.txt", "Write 2 file(s)? [y/N]"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: the question lacks %q:\n%s", answer, want, s)
			}
		}
		got, rerr := os.ReadFile(filepath.Join(app, "notes.txt"))
		switch answer {
		case "n":
			if err == nil || !strings.Contains(s, "not confirmed: nothing written") || rerr == nil {
				t.Errorf("n: exit %v, notes.txt read %v:\n%s", err, rerr, s)
			}
		case "y":
			if err != nil || string(got) != "recovered\n" || !strings.Contains(stdout.String(), "create\tnotes.txt\texact") {
				t.Errorf("y: exit %v, notes.txt %q:\n%s\n%s", err, got, s, stdout.String())
			}
		}
	}
}

// writeTinyRollout writes a Codex rollout that worked in cwd and added each
// file with one line.
func writeTinyRollout(t *testing.T, name, cwd string, files map[string]string) {
	t.Helper()
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	line := func(i int, typ string, payload any) string {
		b, _ := json.Marshal(map[string]any{"timestamp": start.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z"), "type": typ, "payload": payload})
		return string(b) + "\n"
	}
	var b strings.Builder
	b.WriteString(line(0, "session_meta", map[string]any{"id": "019e3333-0000-7000-8000-00000000000a", "cwd": cwd, "cli_version": "0.130.0"}))
	i := 1
	for name, content := range files {
		id := fmt.Sprintf("call_%d", i)
		patch := "*** Begin Patch\n*** Add File: " + name + "\n+" + content + "\n*** End Patch\n"
		b.WriteString(line(i, "response_item", map[string]any{"type": "custom_tool_call", "name": "apply_patch", "call_id": id, "input": patch}))
		b.WriteString(line(i+1, "response_item", map[string]any{"type": "custom_tool_call_output", "call_id": id,
			"output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA " + name + "\n"}))
		i += 2
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSessionsLookedInOrder: the homes are searched, and listed in
// looked_in, in the registry's order (parse/registry.go), which is the
// order they had before the registry: a report's order is part of it.
func TestSessionsLookedInOrder(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	home := env.Get("HOME")
	env = append(env, "CODEX_HOME="+filepath.Join(home, ".codex"), "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"GEMINI_CLI_HOME="+home, "PI_CODING_AGENT_DIR="+filepath.Join(home, ".pi", "agent"), "COPILOT_HOME="+filepath.Join(home, ".copilot"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "SANDBOX_HOME="+filepath.Join(home, "sb"), "CRUSH_GLOBAL_DATA=",
		"QWEN_HOME=", "QWEN_RUNTIME_DIR=", "GOOSE_PATH_ROOT=", "FACTORY_HOME_OVERRIDE=")
	out, errb, code := runApp(t, env, "sessions", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var doc struct {
		Looked []string `json:"looked_in"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range []string{".codex/sessions", ".codex/archived_sessions", ".claude/projects", "data/opencode", ".gemini/tmp", ".pi/agent/sessions", ".copilot/session-state", ".copilot/history-session-state", ".cursor/projects", "data/crush", "data/goose/sessions", ".qwen/projects", ".factory/sessions", "sb/sessions"} {
		want = append(want, filepath.Join(home, p))
	}
	if strings.Join(doc.Looked, "\n") != strings.Join(want, "\n") {
		t.Errorf("looked_in:\n%s\nwant\n%s", strings.Join(doc.Looked, "\n"), strings.Join(want, "\n"))
	}
}
