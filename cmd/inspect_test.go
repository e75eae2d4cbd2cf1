package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInspectCorpus keeps goldens of inspect (text and JSON) for every
// corpus transcript and the sample.
func TestInspectCorpus(t *testing.T) {
	hermetic(t)
	t.Setenv("TZ", "UTC")
	files, _ := filepath.Glob("../fixtures/corpus/*/*.jsonl")
	files = append(files, "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			text, stderr, code := runApp(t, "inspect", f)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			js, _, code := runApp(t, "inspect", f, "--json")
			if code != ExitOK {
				t.Fatalf("--json: exit %d", code)
			}
			for ext, got := range map[string]string{".txt": text, ".json": js} {
				golden := filepath.Join("testdata/inspect", name+ext)
				if *update {
					os.MkdirAll(filepath.Dir(golden), 0o755)
					os.WriteFile(golden, []byte(got), 0o644)
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil || string(want) != got {
					t.Errorf("%s differs (go test ./cmd -run TestInspectCorpus -update):\n%s", golden, got)
				}
			}
		})
	}
}

// TestInspectHTMLInBrowser opens the report page in headless Chromium: it
// must load with no errors, ask for nothing outside itself, and show the
// verdict and every file.
func TestInspectHTMLInBrowser(t *testing.T) {
	var browser string
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		missing(t, "no Chromium on this machine (.ci/run installs Debian's chromium): the report page is not checked in a browser")
	}
	hermetic(t)
	dir := t.TempDir()
	for _, f := range []string{"../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl",
		"../fixtures/corpus/claude/ccviewer_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
		"../fixtures/corpus/codex/06-synthetic-toolpath-shell-writes-apply_patch-interception.jsonl"} {
		page := filepath.Join(dir, filepath.Base(f)+".html")
		if _, stderr, code := runApp(t, "inspect", f, "--html", page); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		html, _ := os.ReadFile(page)
		if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)`).Match(html) || bytes.Contains(html, []byte("<script")) {
			t.Fatalf("%s refers outside itself or runs scripts", page)
		}
		js, _, _ := runApp(t, "inspect", f, "--json")
		var in inspection
		mustJSON(t, js, &in)
		cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+page)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", browser, err, errb.String())
		}
		dom := out.String()
		if strings.Contains(errb.String(), "Uncaught") || strings.Contains(errb.String(), "Failed to load resource") {
			t.Errorf("%s: errors while loading:\n%s", page, errb.String())
		}
		if !strings.Contains(dom, "Verdict: "+in.Verdict.State) || !strings.Contains(dom, htmlEscape(in.Verdict.Summary)) {
			t.Errorf("%s: the verdict is not on the page", page)
		}
		for _, f := range in.Files {
			if !strings.Contains(dom, f.Path) {
				t.Errorf("%s: file %s is not on the page", page, f.Path)
			}
		}
	}
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;") // as the DOM serialises text
	return r.Replace(s)
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := jsonUnmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}
