package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/fixtures/lines"
)

// reviewRollout is a Codex session that creates a.txt and b.txt and changes
// c.txt in two places far apart (two hunks).
const reviewRollout = `{"timestamp":"2026-11-20T09:12:01.037Z","type":"session_meta","payload":{"id":"019e5a1c-0000-7c21-9f4e-2a6b8d0c1e99","timestamp":"2026-11-20T09:12:03.120Z","cwd":"/workspace","originator":"codex_cli_rs","cli_version":"0.130.0","source":"cli","model_provider":"openai"}}
{"timestamp":"2026-11-20T09:12:02.074Z","type":"turn_context","payload":{"turn_id":"turn-1","cwd":"/workspace","approval_policy":"never","sandbox_policy":{"type":"workspace-write"},"model":"gpt-5.4"}}
{"timestamp":"2026-11-20T09:12:04.148Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Add a and b, fix c."}]}}
{"timestamp":"2026-11-20T09:12:05.185Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"call_a1","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** Add File: b.txt\n+beta\n*** Update File: c.txt\n@@\n line 1\n-line 2\n+two\n line 3\n@@\n line 34\n-line 35\n+thirty-five\n line 36\n*** End Patch\n"}}
{"timestamp":"2026-11-20T09:12:07.259Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_a1","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA a.txt\nA b.txt\nM c.txt\n"}}
{"timestamp":"2026-11-20T09:12:22.814Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"turn-1","last_agent_message":"Done."}}
`

// tmuxReview runs sandbox review in a tmux terminal of w×h and returns
// what drives it: keys, the screen (waiting for a text), a resize.
type tmuxReview struct {
	t    *testing.T
	sock string
}

func (r *tmuxReview) tmux(args ...string) string {
	r.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", r.sock}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen waits up to 30 s for want on the screen and returns the screen.
func (r *tmuxReview) screen(want string) string {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := r.tmux("capture-pane", "-p")
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%q never came on the screen:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *tmuxReview) keys(k ...string) {
	r.t.Helper()
	r.tmux(append([]string{"send-keys"}, k...)...)
}

func startReview(t *testing.T, w, h int, env []string, args ...string) *tmuxReview {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		missing(t, "tmux is not installed (apt-get install tmux): the review cannot be driven in a terminal")
	}
	r := &tmuxReview{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	bin := sandboxBinary(t)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	// EXIT= is the last thing printed: a test that waits for it then sees
	// all of stderr too (printed before it, it raced with the capture).
	stderr := filepath.Join(t.TempDir(), "stderr")
	script := "env -u NO_COLOR " + strings.Join(env, " ") + " " + bin + " review " + strings.Join(quoted, " ") + " 2>" + stderr + "; code=$?; cat " + stderr + "; echo EXIT=$code; sleep 60"
	r.tmux("new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", r.sock, "kill-server").Run() })
	return r
}

// reviewSetup writes the rollout and a project holding c.txt's start.
func reviewSetup(t *testing.T) (env []string, transcript, dest string) {
	dir := t.TempDir()
	transcript = filepath.Join(dir, "rollout.jsonl")
	dest = filepath.Join(dir, "proj")
	if err := os.WriteFile(transcript, []byte(reviewRollout), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, "c.txt"), []byte(lines.Numbered(40, nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range hermeticVars(t) {
		env = append(env, k+"="+v)
	}
	return env, transcript, dest
}

// TestReviewInTerminal drives sandbox review in a real terminal (tmux):
// take one file, leave another, take one hunk of a third, apply; the tree
// is then exactly that, and sandbox undo gives the project back.
func TestReviewInTerminal(t *testing.T) {
	env, transcript, dest := reviewSetup(t)
	r := startReview(t, 150, 40, env, "-t", transcript, "--dest", dest)
	s := r.screen("c.txt")
	for _, want := range []string{"Sessions", "Files (3)", "a.txt", "b.txt", "codex"} {
		mustContain(t, "the review's first screen", s, want)
	}
	r.keys("Space")  // a.txt
	r.keys("j", "j") // c.txt (b.txt left)
	s = r.screen("hunk 1/2")
	mustContain(t, "c.txt's diff", s, "-line 2")
	mustContain(t, "c.txt's diff", s, "+thirty-five")
	r.keys("y", "n") // the first hunk taken, the second left
	r.screen("[~]")
	r.keys("Enter")
	r.screen("Write 2 files (1 in part) and leave 1? [y/N]")
	r.keys("y")
	s = r.screen("EXIT=")
	mustContain(t, "the review's exit", s, "EXIT=0")
	mustContain(t, "the summary (its line wrapped)", strings.ReplaceAll(s, "\n", ""), "1 left in review")

	if got := string(readFile(filepath.Join(dest, "a.txt"))); got != "alpha\n" {
		t.Errorf("a.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dest, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt was written, though left: %v", err)
	}
	if got, want := string(readFile(filepath.Join(dest, "c.txt"))), lines.Numbered(40, map[int]string{2: "two\n"}); got != want {
		t.Errorf("c.txt = %q, want the host's copy with the first hunk only: %q", got, want)
	}

	undo := exec.Command(sandboxBinary(t), "undo", "--dest", dest)
	undo.Env = append(os.Environ(), env...)
	out, err := undo.CombinedOutput()
	if err != nil {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	_, err = os.Stat(filepath.Join(dest, "a.txt"))
	if !os.IsNotExist(err) || string(readFile(filepath.Join(dest, "c.txt"))) != lines.Numbered(40, nil) {
		t.Errorf("undo did not give the project back (a.txt: %v):\n%s", err, out)
	}
}

// TestReviewQuitWritesNothing: q after taking everything writes nothing.
func TestReviewQuitWritesNothing(t *testing.T) {
	env, transcript, dest := reviewSetup(t)
	r := startReview(t, 120, 30, env, "-t", transcript, "--dest", dest)
	r.screen("c.txt")
	r.keys("A")
	r.screen("took 3 files")
	r.keys("q")
	s := r.screen("EXIT=")
	mustContain(t, "the exit", s, "EXIT=0")
	mustContain(t, "what q says", s, "nothing written")
	entries, _ := os.ReadDir(dest)
	if len(entries) != 1 || string(readFile(filepath.Join(dest, "c.txt"))) != lines.Numbered(40, nil) {
		t.Errorf("q changed the project: %v", entries)
	}
}

// TestReviewResizes: the layout follows the terminal's size, every row
// within it and the three panes shown.
func TestReviewResizes(t *testing.T) {
	env, transcript, dest := reviewSetup(t)
	r := startReview(t, 150, 40, env, "-t", transcript, "--dest", dest)
	r.screen("c.txt")
	r.keys("j", "j")
	for _, size := range [][2]int{{80, 24}, {60, 16}, {200, 50}, {100, 30}} {
		r.tmux("resize-window", "-x", fmt.Sprint(size[0]), "-y", fmt.Sprint(size[1]))
		// tmux crops the old screen at once; the review's redraw follows.
		wants := []string{"Sessions", "Files", "c.txt", "@@ -1,5 +1,5 @@", "space take"}
		var s string
		deadline := time.Now().Add(10 * time.Second)
		for {
			s = r.tmux("capture-pane", "-p")
			all := len(strings.Split(strings.TrimRight(s, "\n"), "\n")) == size[1]
			for _, want := range wants {
				all = all && strings.Contains(s, want)
			}
			if all || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		for i, row := range strings.Split(s, "\n") {
			if n := utf8.RuneCountInString(row); n > size[0] {
				t.Errorf("%dx%d: row %d is %d wide", size[0], size[1], i, n)
			}
		}
		for _, want := range wants {
			mustContain(t, fmt.Sprintf("the screen at %dx%d", size[0], size[1]), s, want)
		}
	}
	r.keys("q")
	r.screen("EXIT=0")
}

// TestReviewOffTerminal: piped, review prints the plan and writes nothing.
func TestReviewOffTerminal(t *testing.T) {
	env, transcript, dest := reviewSetup(t)
	out, errb, code := runApp(t, hermetic(t), "review", "-t", transcript, "--dest", dest)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	_ = env
	mustContain(t, "the warning", errb, "review needs a terminal")
	mustContain(t, "the plan", out, "update c.txt")
	mustContain(t, "the plan", out, "dry run: nothing was written")
	if _, err := os.Stat(filepath.Join(dest, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt written off a terminal")
	}
	_, errb, code = runApp(t, hermetic(t), "recover", "-i", "--dry-run", "-t", transcript, "--dest", dest)
	if code != 2 {
		t.Errorf("recover -i --dry-run: exit %d, want 2 (usage): %s", code, errb)
	}
}
