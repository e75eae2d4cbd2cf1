package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	recov "github.com/agentsandbox/sandbox/recover"
)

// gitRepo makes dir a git repository holding tree in one commit (git's own
// command sets it up; sandbox reads it with go-git) and returns the
// commit's hash.
func gitRepo(t *testing.T, dir string, tree map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		missing(t, "no git program to set the repository up")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "start")
	return strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
}

// git runs git in dir with a fixed identity and no user configuration.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com",
		"GIT_AUTHOR_DATE=2026-11-20T08:00:00Z", "GIT_COMMITTER_DATE=2026-11-20T08:00:00Z")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// patchRollout writes a Codex rollout of one apply_patch call, started at
// commit, that succeeded or failed.
func patchRollout(t *testing.T, name, commit, patch string, ok bool) {
	t.Helper()
	line := func(ts, typ string, payload map[string]any) string {
		b, err := json.Marshal(map[string]any{"timestamp": ts, "type": typ, "payload": payload})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	output := "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n"
	if !ok {
		output = "Exit code: 1\nWall time: 0 seconds\nOutput:\napply_patch verification failed\n"
	}
	s := line("2026-11-20T09:00:00.000Z", "session_meta", map[string]any{"id": "019e0000-0000-7000-8000-00000000c0f0",
		"timestamp": "2026-11-20T09:00:00.000Z", "cwd": "/workspace", "cli_version": "0.130.0",
		"git": map[string]any{"commit_hash": commit, "branch": "main"}}) +
		line("2026-11-20T09:00:01.000Z", "response_item", map[string]any{"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1", "input": patch}) +
		line("2026-11-20T09:00:02.000Z", "response_item", map[string]any{"type": "custom_tool_call_output", "call_id": "c1", "output": output})
	if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// codexRejects lists the conformance scenarios whose patch codex refuses.
// In a session codex verifies every hunk before writing any, so a refused
// call leaves the tree as it was (015's partial success is the standalone
// binary's, hunk by hunk).
var codexRejects = map[string]bool{
	"005_rejects_empty_patch": true, "006_rejects_missing_context": true, "007_rejects_missing_file_delete": true,
	"008_rejects_empty_update_hunk": true, "009_requires_existing_file_for_update": true,
	"012_delete_directory_fails": true, "013_rejects_invalid_hunk_header": true,
	"015_failure_after_partial_success_leaves_changes": true,
}

// TestConformanceGitHost recovers each of Codex's 23 apply_patch
// conformance scenarios through the CLI onto its input/ tree, made a git
// work tree at the commit the rollout names: the result is the scenario's
// expected tree (the input, for a patch codex refuses), with no conflict —
// 010's move onto an existing file and 011's add over one included.
func TestConformanceGitHost(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	root := "../fixtures/conformance/codex-apply-patch/scenarios"
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			host := filepath.Join(dir, "host")
			input := dirContents(t, filepath.Join(root, name, "input"))
			commit := gitRepo(t, host, input)
			patch, err := os.ReadFile(filepath.Join(root, name, "patch.txt"))
			if err != nil {
				t.Fatal(err)
			}
			rollout := filepath.Join(dir, "rollout.jsonl")
			patchRollout(t, rollout, commit, string(patch), !codexRejects[name])
			out, stderr, code := runApp(t, env, "recover", "-t", rollout, "--dest", host, "--json")
			if code != ExitOK {
				t.Fatalf("exit %d: %s\n%s", code, stderr, out)
			}
			var r recov.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			for _, f := range r.Files {
				if f.Action == recov.ActConflict || f.Confidence != string(recov.Exact) {
					t.Errorf("%s: %s, %s: %s", f.Path, f.Action, f.Confidence, f.Reason)
				}
			}
			want := dirContents(t, filepath.Join(root, name, "expected"))
			if codexRejects[name] {
				want = input
			}
			got := dirContents(t, host)
			delete(got, ".git")
			for k := range got {
				if strings.HasPrefix(k, ".git/") {
					delete(got, k)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("tree:\n got %q\nwant %q", got, want)
			}
		})
	}
	if n != 23 {
		t.Errorf("found %d scenarios, want 23", n)
	}
}

// TestGeneratedGitHost recovers generated Codex sessions onto a checkout
// of their start commit: as it started (every file exact, the tree the
// session's final one), edited by hand since at other lines (merged three
// ways: the hand edits and the session's both kept) and edited on lines
// the session changed too (those files, and only those, conflict).
func TestGeneratedGitHost(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	for _, seed := range []int64{3, 11} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			o := gen.Options{Size: 256 << 10, Seed: seed, Files: 24, PatchEvery: 4, HostFiles: true}
			st, err := gen.Rollout(io.Discard, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, variant := range []string{"start", "other-lines", "same-lines"} {
				t.Run(variant, func(t *testing.T) {
					dir := t.TempDir()
					host := filepath.Join(dir, "host")
					o := o
					o.GitCommit = gitRepo(t, host, st.Initial)
					name := filepath.Join(dir, "rollout.jsonl")
					writeSession(t, name, gen.Rollout, o)
					want := map[string]string{}
					for k, v := range st.Final {
						want[k] = v
					}
					clash := map[string]bool{}
					names := sortedKeys(st.Initial)
					for i, f := range names {
						switch {
						case variant == "other-lines" && i%3 == 0:
							edited := "// edited on the host\n" + st.Initial[f]
							writeFile(t, filepath.Join(host, f), edited)
							want[f] = "// edited on the host\n" + st.Final[f]
						case variant == "same-lines" && i%3 == 0 && st.Final[f] != st.Initial[f]:
							edited := onChangedLine(st.Initial[f], st.Final[f])
							writeFile(t, filepath.Join(host, f), edited)
							want[f] = edited
							clash[f] = true
						}
					}
					out, stderr, code := runApp(t, env, "recover", "-t", name, "--dest", host, "--json")
					if wantCode := map[bool]int{false: ExitOK, true: ExitPartial}[len(clash) > 0]; code != wantCode {
						t.Fatalf("exit %d, want %d: %s", code, wantCode, stderr)
					}
					var r recov.Report
					if err := json.Unmarshal([]byte(out), &r); err != nil {
						t.Fatal(err)
					}
					conflicts := 0
					for _, f := range r.Files {
						if f.Action == recov.ActConflict {
							conflicts++
							if !clash[f.Path] {
								t.Errorf("%s: conflict, but the host changed no line the session did: %s", f.Path, f.Reason)
							}
						}
						// A merge is graded merged: the host's own lines were
						// never in the transcript. Anything else is exact.
						want := recov.Exact
						if f.Action == recov.ActMerge {
							want = recov.Merged
						}
						if f.Confidence != string(want) {
							t.Errorf("%s (%s): graded %s, want %s", f.Path, f.Action, f.Confidence, want)
						}
					}
					if conflicts != len(clash) {
						t.Errorf("%d conflicts, want %d", conflicts, len(clash))
					}
					got := dirContents(t, host)
					for k := range got {
						if strings.HasPrefix(k, ".git/") {
							delete(got, k)
						}
					}
					for k, w := range want {
						if got[k] != w {
							t.Errorf("%s differs from the expected tree", k)
						}
					}
					if len(got) != len(want) {
						t.Errorf("%d files, want %d", len(got), len(want))
					}
					// Exported beside the repository and applied elsewhere onto
					// the same host files: the same plan, the same tree.
					if variant != "start" {
						return
					}
					m, other := filepath.Join(dir, "m.json"), filepath.Join(dir, "other")
					writeTree(t, other, st.Initial)
					if _, stderr, code := runApp(t, env, "export", "-t", name, "--repo", host, "-o", m); code != ExitOK {
						t.Fatalf("export: exit %d: %s", code, stderr)
					}
					app, stderr, code := runApp(t, env, "apply", m, "--dest", other, "--json")
					if code != ExitOK {
						t.Fatalf("apply: exit %d: %s", code, stderr)
					}
					if pa, pb := plans(t, out), plans(t, app); pa != pb {
						t.Errorf("recover and apply plan differently:\n%s\n%s", pa, pb)
					}
					if a, b := dirContents(t, other), want; fmt.Sprint(a) != fmt.Sprint(b) {
						t.Errorf("apply's tree differs from recover's")
					}
				})
			}
		})
	}
}

// onChangedLine edits, in start, the first line final changed.
func onChangedLine(start, final string) string {
	a, b := strings.Split(start, "\n"), strings.Split(final, "\n")
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			a[i] = "// the host changed this line too"
			break
		}
	}
	return strings.Join(a, "\n")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func writeFile(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
