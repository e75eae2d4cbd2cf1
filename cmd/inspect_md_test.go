package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/agentsandbox/sandbox/inspect"
)

// hostile is a session whose prompt, agent text, files, command and output
// hold HTML, script tags, runs of backticks and planted secrets.
const hostile = "testdata/report/rollout-2026-11-21T08-00-00-019e7777-0000-7000-8000-00000000cafe.jsonl"

// fixedMeta keeps the machine out of goldens.
func fixedMeta(t *testing.T) {
	old := reportMeta
	reportMeta = func() inspect.Footer {
		return inspect.Footer{Host: "host", User: "user", Version: "v0.0.0-test", Generated: "2026-11-22 10:00:00 UTC"}
	}
	t.Cleanup(func() { reportMeta = old })
}

// TestInspectMarkdown keeps goldens of inspect --format md, and reads each
// with a GitHub-flavoured Markdown parser: every net diff is one fenced
// block, whole and unchanged; nothing of the transcript became HTML,
// a link or an image; and the tables have their rows.
func TestInspectMarkdown(t *testing.T) {
	env := hermetic(t)
	t.Setenv("TZ", "UTC")
	fixedMeta(t)
	cases := map[string][]string{}
	for _, f := range append(browserSessions, hostile) {
		cases[strings.TrimSuffix(filepath.Base(f), ".jsonl")] = []string{"inspect", f, "--format", "md"}
	}
	cases["hostile-redacted"] = []string{"inspect", hostile, "--format", "md", "--redact"}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			got, stderr, code := runApp(t, env, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden := filepath.Join("testdata/report", name+".md")
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			} else if want, err := os.ReadFile(golden); err != nil || string(want) != got {
				t.Errorf("%s differs (go test ./cmd -run TestInspectMarkdown -update):\n%s", golden, got)
			}
			jsArgs := append(append([]string{}, args[:2]...), "--json")
			if args[len(args)-1] == "--redact" {
				jsArgs = append(jsArgs, "--redact")
			}
			js, _, _ := runApp(t, env, jsArgs...)
			var in inspect.Inspection
			mustJSON(t, js, &in)

			src := []byte(got)
			doc := md.Parser().Parse(text.NewReader(src))
			fences := map[string]bool{}
			var rows int
			ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
				if !entering {
					return ast.WalkContinue, nil
				}
				switch n := n.(type) {
				case *ast.FencedCodeBlock:
					var b strings.Builder
					for i := 0; i < n.Lines().Len(); i++ {
						s := n.Lines().At(i)
						b.Write(s.Value(src))
					}
					if string(n.Language(src)) == "diff" {
						fences[b.String()] = true
					}
				case *ast.HTMLBlock, *ast.RawHTML:
					t.Errorf("the Markdown holds HTML: %q", nodeText(n, src))
				case *ast.Image, *ast.Link, *ast.AutoLink:
					t.Errorf("the Markdown holds a link or an image: %q", nodeText(n, src))
				}
				if n.Kind().String() == "TableRow" {
					rows++
				}
				return ast.WalkContinue, nil
			})
			for _, f := range in.Files {
				if f.NetDiff != "" && !fences[f.NetDiff] {
					t.Errorf("the net diff of %s is not one whole ```diff block", f.Path)
				}
			}
			if len(in.Files) > 0 && rows < len(in.Files) {
				t.Errorf("%d table rows for %d files", rows, len(in.Files))
			}
		})
	}
}

func nodeText(n ast.Node, src []byte) string {
	var b strings.Builder
	switch n := n.(type) {
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			s := n.Segments.At(i)
			b.Write(s.Value(src))
		}
	case *ast.Link:
		b.Write(n.Destination)
	case *ast.Image:
		b.Write(n.Destination)
	case *ast.AutoLink:
		b.Write(n.URL(src))
	default:
		if n.Type() == ast.TypeBlock {
			for i := 0; i < n.Lines().Len(); i++ {
				s := n.Lines().At(i)
				b.Write(s.Value(src))
			}
		}
	}
	return b.String()
}

// TestInspectRedact plants secrets in a session and checks that --redact
// takes every one of them out of the JSON, Markdown and HTML reports (and
// the agent's text, a command and its output, not only the files), lists
// what it replaced, and leaves the rest of the report as it was.
func TestInspectRedact(t *testing.T) {
	env := hermetic(t)
	fixedMeta(t)
	secrets := []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
		"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "hunter2hunter2", "AKIAABCDEFGHIJKLMNOP"}
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	plain := filepath.Join(dir, "plain.html")
	outs := map[string]string{}
	var stderr string
	var code int
	outs["md"], stderr, code = runApp(t, env, "inspect", hostile, "--format", "md", "--redact")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	outs["json"], _, _ = runApp(t, env, "inspect", hostile, "--json", "--redact")
	if _, e, code := runApp(t, env, "inspect", hostile, "--html", page, "--redact"); code != ExitOK {
		t.Fatalf("--html: exit %d: %s", code, e)
	}
	runApp(t, env, "inspect", hostile, "--html", plain)
	b, _ := os.ReadFile(page)
	outs["html"] = string(b)
	b, _ = os.ReadFile(plain)
	for _, s := range secrets {
		if !strings.Contains(string(b), s) {
			t.Fatalf("the unredacted report lacks %s: the test plants nothing", s)
		}
		for k, out := range outs {
			if strings.Contains(out, s) {
				t.Errorf("%s report still holds %s", k, s)
			}
		}
	}
	for _, kind := range []string{"github-token", "openai-key", "aws-access-key", "env-assignment"} {
		if !strings.Contains(stderr, "redacted") || !strings.Contains(stderr, kind) {
			t.Errorf("stderr does not list the %s redactions:\n%s", kind, stderr)
		}
		for k, out := range outs {
			if !strings.Contains(out, kind) {
				t.Errorf("%s report does not say it redacted a %s", k, kind)
			}
		}
	}
	if !strings.Contains(outs["html"], `id="redactions"`) || !strings.Contains(outs["html"], "[REDACTED:github-token]") {
		t.Errorf("the page does not list its redactions")
	}
	// What is not a secret stays.
	if !strings.Contains(outs["md"], "`/work/README.md`") || !strings.Contains(outs["html"], "curl: (7) Failed to connect") {
		t.Errorf("--redact took more than the secrets")
	}
}

// TestInspectHTMLEscapes renders the hostile session: its script and image
// tags, and the closing tags meant to break out of a <pre>, are text on the
// page, and nothing in it makes the browser fetch anything.
func TestInspectHTMLEscapes(t *testing.T) {
	env := hermetic(t)
	page := filepath.Join(t.TempDir(), "r.html")
	if _, stderr, code := runApp(t, env, "inspect", hostile, "--html", page); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(page)
	html := string(b)
	for _, bad := range []string{"<script>alert", "<img", "<b>now", "</pre></td><script>", "onerror=alert(2)>"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q as markup", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(3)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;", "&lt;b&gt;now"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks the escaped text %q", want)
		}
	}
	for _, tg := range tag.FindAllString(html, -1) {
		for _, m := range attrURL.FindAllStringSubmatch(tg, -1) {
			if !strings.HasPrefix(m[2], "#") {
				t.Errorf("the page refers outside itself: %s", tg)
			}
		}
	}
}
