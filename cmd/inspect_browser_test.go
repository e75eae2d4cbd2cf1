package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/inspect"
)

// The sessions the report is checked on in a browser: the sample, a Claude
// Code session with five parallel subagents, and a Codex session that died
// in a tool call.
var browserSessions = []string{
	"../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl",
	"../fixtures/corpus/claude/ccviewer_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
	"../fixtures/corpus/codex/06-synthetic-toolpath-shell-writes-apply_patch-interception.jsonl",
}

// chromium finds headless Chromium, or ends the test (a skip that says why;
// a failure under CI=true).
func chromium(t *testing.T) string {
	t.Helper()
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	missing(t, "no Chromium on this machine (.ci/run installs Debian's chromium): the report page is not checked in a browser")
	return ""
}

// browse runs headless Chromium on a page with its network activity logged,
// and returns what it printed on stdout and stderr, and the URLs the page
// itself asked for (not those of the browser's own background services).
func browse(t *testing.T, browser, page string, args ...string) (stdout, stderr string, requests []string) {
	t.Helper()
	dir := t.TempDir()
	netlog := filepath.Join(dir, "net.json")
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--enable-logging=stderr", "--v=0", "--log-net-log=" + netlog, "--user-data-dir=" + filepath.Join(dir, "profile")}, args...)
	all = append(all, "file://"+page)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, all...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, errb.String())
	}
	raw, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("no network log: %v", err)
	}
	var log struct {
		Events []struct {
			Params struct {
				URL string `json:"url"`
				// The page's requests are keyed by its own origin; the
				// browser's background requests are not.
				Key string `json:"network_isolation_key"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatalf("network log: %v", err)
	}
	seen := map[string]bool{}
	for _, e := range log.Events {
		u := e.Params.URL
		if u == "" || !strings.HasPrefix(e.Params.Key, "file://") || strings.HasPrefix(u, "file:") || strings.HasPrefix(u, "data:") || seen[u] {
			continue
		}
		seen[u] = true
		requests = append(requests, u)
	}
	return out.String(), errb.String(), requests
}

// TestBrowserSeesRequests proves the check of the next test can fail: a
// page that loads an image from the network is caught asking for it.
func TestBrowserSeesRequests(t *testing.T) {
	browser := chromium(t)
	page := filepath.Join(t.TempDir(), "ext.html")
	os.WriteFile(page, []byte(`<!doctype html><body><img src="https://example.invalid/x.png"></body>`), 0o644)
	_, _, req := browse(t, browser, page, "--dump-dom")
	if len(req) != 1 || req[0] != "https://example.invalid/x.png" {
		t.Fatalf("requests %q: want the image", req)
	}
}

var (
	// attrURL is an attribute that makes a browser fetch or navigate.
	attrURL = regexp.MustCompile(`(?i)\s(src|href|action|srcset|poster|data|xlink:href)\s*=\s*["']?([^"'\s>]*)`)
	// tag is a start tag: transcript text on the page is escaped, so a
	// raw < starts markup the page itself made.
	tag        = regexp.MustCompile(`<[a-zA-Z][^<>]*>`)
	detailsTag = regexp.MustCompile(`<details[^>]*>`)
)

// TestInspectHTMLInBrowser opens the report of each session in headless
// Chromium as a reviewer would: it loads with no errors and asks for
// nothing outside itself; the chart is there with a mark per tool call;
// every file is in the index, linked to its section; every diff is open
// without a click; and a print to PDF holds the verdict, the chart and
// every line of every net diff.
func TestInspectHTMLInBrowser(t *testing.T) {
	browser := chromium(t)
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		missing(t, "no pdftotext on this machine (.ci/run installs Debian's poppler-utils): the printed report is not checked")
	}
	env := hermetic(t)
	t.Setenv("TZ", "UTC")
	dir := t.TempDir()
	for _, f := range browserSessions {
		t.Run(filepath.Base(f), func(t *testing.T) {
			page := filepath.Join(dir, filepath.Base(f)+".html")
			if _, stderr, code := runApp(t, env, "inspect", f, "--html", page); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			raw, _ := os.ReadFile(page)
			html := string(raw)
			for _, tg := range tag.FindAllString(html, -1) {
				for _, m := range attrURL.FindAllStringSubmatch(tg, -1) {
					if !strings.HasPrefix(m[2], "#") {
						t.Errorf("the page refers outside itself: %s", tg)
					}
				}
			}
			style := regexp.MustCompile(`(?s)<style>.*?</style>`).FindString(html)
			if style == "" || strings.Contains(style, "url(") || strings.Contains(style, "@import") {
				t.Errorf("the page's style sheet loads something, or is missing")
			}
			if !strings.Contains(html, `content="default-src 'none';`) {
				t.Errorf("the page has no Content-Security-Policy that forbids loading")
			}
			js, _, _ := runApp(t, env, "inspect", f, "--json")
			var in inspect.Inspection
			mustJSON(t, js, &in)

			dom, stderr, req := browse(t, browser, page, "--dump-dom")
			for _, bad := range []string{"Uncaught", "Failed to load resource", "Refused to"} {
				if strings.Contains(stderr, bad) {
					t.Errorf("errors while loading:\n%s", stderr)
					break
				}
			}
			if len(req) > 0 {
				t.Errorf("the page asked the network for %q", req)
			}
			if !strings.Contains(dom, "Verdict: "+in.Verdict.State) || !strings.Contains(dom, htmlEscape(in.Verdict.Summary)) {
				t.Errorf("the verdict is not on the page")
			}
			chart := regexp.MustCompile(`(?s)<svg class="chart".*?</svg>`).FindString(dom)
			if n := strings.Count(chart, `<rect class="m `); chart == "" || n != in.Counts.Calls {
				t.Errorf("the chart has %d call marks, want %d", n, in.Counts.Calls)
			}
			index := regexp.MustCompile(`(?s)<table id="file-index">.*?</table>`).FindString(dom)
			for i, fv := range in.Files {
				a := fmt.Sprintf("f-%d", i+1)
				if !strings.Contains(index, `<a href="#`+a+`"><code>`+htmlEscape(fv.Path)+`</code></a>`) {
					t.Errorf("file %s is not in the index", fv.Path)
				}
				if !strings.Contains(dom, `<section class="file`) || !strings.Contains(dom, `id="`+a+`"`) {
					t.Errorf("file %s has no section %s", fv.Path, a)
				}
			}
			for _, fw := range in.FailedWrites {
				if !strings.Contains(index, htmlEscape(fw.Path)) {
					t.Errorf("failed write %s is not in the index", fw.Path)
				}
			}
			files := dom[strings.Index(dom, `<h2 id="files">`):strings.Index(dom, `<h2 id="timeline">`)]
			for _, d := range detailsTag.FindAllString(files, -1) {
				if !strings.Contains(d, " open") {
					t.Errorf("a diff is closed: %s", d)
				}
			}
			if n, want := strings.Count(files, `<pre class="diff">`), nets(in); n < want {
				t.Errorf("%d diffs on the page, want at least the %d net diffs", n, want)
			}

			// The filters are CSS: with "only failures" chosen (as the
			// page's own radio button would), only failed, rejected,
			// aborted and died-in rows show; a script added to a copy of
			// the page only counts them.
			filtered := filepath.Join(dir, filepath.Base(f)+".filtered.html")
			probe := `<script>addEventListener("load",function(){var n=0;document.querySelectorAll(".tl .tr:not(.head)").forEach(function(r){if(r.getClientRects().length)n++});document.title="VISIBLE "+n})</script></body>`
			cp := strings.Replace(html, `id="flt-fail">`, `id="flt-fail" checked>`, 1)
			os.WriteFile(filtered, []byte(strings.Replace(cp, "</body>", probe, 1)), 0o644)
			fdom, _, _ := browse(t, browser, filtered, "--virtual-time-budget=10000", "--dump-dom")
			want := strings.Count(dom, `class="tr `) - strings.Count(dom, `class="tr head`)
			bad := 0
			for _, m := range regexp.MustCompile(`class="tr ([^"]*)"`).FindAllStringSubmatch(dom, -1) {
				if strings.Contains(" "+m[1]+" ", " bad ") {
					bad++
				}
			}
			if m := regexp.MustCompile(`<title>VISIBLE (\d+)</title>`).FindStringSubmatch(fdom); m == nil || m[1] != strconv.Itoa(bad) {
				t.Errorf("with only failures chosen, %v of %d rows show; want the %d failures", m, want, bad)
			}

			pdf := filepath.Join(dir, filepath.Base(f)+".pdf")
			browse(t, browser, page, "--no-pdf-header-footer", "--print-to-pdf="+pdf)
			out, err := exec.Command(pdftotext, "-layout", pdf, "-").Output()
			if err != nil {
				t.Fatalf("pdftotext: %v", err)
			}
			text := squash(string(out))
			for _, want := range []string{"Verdict: " + in.Verdict.State, "main agent", "Needs checking"} {
				if want == "Needs checking" && len(in.Files) > 0 && allExact(in) {
					continue
				}
				if !strings.Contains(text, squash(want)) {
					t.Errorf("the PDF lacks %q", want)
				}
			}
			lines, lost := 0, 0
			for _, fv := range in.Files {
				for _, l := range strings.Split(fv.NetDiff, "\n") {
					if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
						lines++
						if !strings.Contains(text, squash(l)) {
							lost++
							if lost <= 5 {
								t.Errorf("the PDF lacks the line %q of %s", l, fv.Path)
							}
						}
					}
				}
			}
			if lines == 0 && nets(in) > 0 {
				t.Errorf("no diff lines checked")
			}
			t.Logf("%d tool calls, %d files, %d net diff lines, all in the PDF: %v", in.Counts.Calls, len(in.Files), lines, lost == 0)
		})
	}
}

func nets(in inspect.Inspection) int {
	n := 0
	for _, f := range in.Files {
		if f.NetDiff != "" {
			n++
		}
	}
	return n
}

func allExact(in inspect.Inspection) bool {
	for _, f := range in.Files {
		if f.Confidence != "exact" || len(f.Drift) > 0 {
			return false
		}
	}
	return len(in.FailedWrites) == 0 && len(in.Unrecoverable) == 0
}

// squash removes all white space, so that text compares whatever the lines
// a PDF wrapped it into, and the characters beyond the Basic Multilingual
// Plane (emoji): without a colour emoji font, which a CI machine may lack,
// the PDF holds a blank for them.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\f' || r == '\u00a0' || r > 0xFFFF || r == '\uFE0F' {
			return -1
		}
		return r
	}, s)
}

// TestInspectHTMLThousandCalls renders the report of a generated session
// of about 1,000 tool calls in Chromium and measures the time from the
// start of navigation to the first layout of the whole page (parse, style,
// layout), as a script added to a copy of the page reports it.
func TestInspectHTMLThousandCalls(t *testing.T) {
	browser := chromium(t)
	env := hermetic(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "rollout-2026-11-20T09-12-03-019e0001-0000-7000-8000-000000000001.jsonl")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Rollout(f, gen.Options{Size: 8700 << 10, Seed: 1, Files: 60, PatchEvery: 20}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	page := filepath.Join(dir, "report.html")
	began := time.Now()
	if _, stderr, code := runApp(t, env, "inspect", name, "--html", page); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	took := time.Since(began)
	js, _, _ := runApp(t, env, "inspect", name, "--json")
	var in inspect.Inspection
	mustJSON(t, js, &in)
	if in.Counts.Calls < 950 || in.Counts.Calls > 1100 {
		t.Fatalf("%d calls: the generator no longer makes about 1,000", in.Counts.Calls)
	}
	raw, _ := os.ReadFile(page)
	probe := `<script>addEventListener("load",function(){document.body.offsetHeight;document.title="RENDERED "+performance.now().toFixed(0)})</script></body>`
	timed := filepath.Join(dir, "timed.html")
	os.WriteFile(timed, bytes.Replace(raw, []byte("</body>"), []byte(probe), 1), 0o644)
	best := -1
	for i := 0; i < 3; i++ {
		dom, _, _ := browse(t, browser, timed, "--virtual-time-budget=20000", "--dump-dom")
		m := regexp.MustCompile(`<title>RENDERED (\d+)</title>`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the page did not report its time")
		}
		ms, _ := strconv.Atoi(m[1])
		if best < 0 || ms < best {
			best = ms
		}
	}
	t.Logf("%d tool calls, %d files: report written in %v, %d bytes; rendered in Chromium in %d ms (best of 3)",
		in.Counts.Calls, in.Counts.Files, took.Round(time.Millisecond), len(raw), best)
	// A second is the aim on an idle machine (docs/inspect.md has the
	// figures); a shared CI machine gets five before this fails.
	if best > 5000 {
		t.Errorf("rendering took %d ms", best)
	}
}
