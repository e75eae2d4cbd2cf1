package cmd

import (
	"html/template"
	"os"
	"path/filepath"
	"strings"
)

// writeHTML writes the inspection as one self-contained page: no scripts,
// no network, no external assets; styles inline.
func writeHTML(name string, in *inspection) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := page.Execute(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// diffLines classes a diff's lines for colour.
func diffLines(d string) []struct{ Class, Text string } {
	var out []struct{ Class, Text string }
	for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			c = "h"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "$ "):
			c = "cmd"
		}
		out = append(out, struct{ Class, Text string }{c, l})
	}
	return out
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"diff":  diffLines,
	"join":  strings.Join,
	"clock": func(t interface{ Format(string) string }) string { return t.Format("2006-01-02 15:04:05") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sandbox inspect: {{with index .Sessions 0}}{{.ID}}{{end}}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:2rem 0 .6rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
.meta{color:#57606a}.verdict{border-radius:6px;padding:.8rem 1rem;margin:1rem 0;border:1px solid}
.v-clean{background:#dafbe1;border-color:#4ac26b}.v-other{background:#fff1e5;border-color:#e09b5c}
.verdict b{font-size:1.05rem}.ev{font-family:ui-monospace,monospace;font-size:12px;color:#57606a}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eaeef2;vertical-align:top}
th{background:#f6f8fa}.applied{color:#1a7f37}.failed{color:#cf222e}.rejected{color:#9a6700}.unknown{color:#8250df}
.turn td{background:#f6f8fa;font-style:italic}.stop td{background:#fff8c5}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;margin:.3rem 0}
pre span{display:block;white-space:pre}.add{background:#e6ffec}.del{background:#ffebe9}.hunk{color:#0969da}.h{font-weight:bold}.cmd{color:#8250df}
details{border:1px solid #d0d7de;border-radius:6px;margin:.5rem 0;padding:.3rem .7rem}summary{cursor:pointer}
.warn{color:#9a6700}.issue{background:#fff8c5;border-radius:6px;padding:.5rem .8rem;margin:.4rem 0}
</style></head><body>
<h1>Session report</h1>
{{range .Sessions}}<div class="meta">{{.Agent}} {{.AgentVersion}} · session <code>{{.ID}}</code> · {{.Cwd}} · {{clock .Start}} → {{clock .End}} · {{.Transcript}}</div>
{{end}}
<div class="verdict {{if eq .Verdict.State "clean"}}v-clean{{else}}v-other{{end}}" id="verdict">
<b>Verdict: {{.Verdict.State}}</b><br>{{.Verdict.Summary}}
{{range .Verdict.Evidence}}<div class="ev">{{.}}</div>{{end}}
{{range .Sandbox}}<div class="ev" id="sandbox-end">Sandbox: {{.String}}{{if .LastOutput}}<pre>{{range .LastOutput}}{{.}}
{{end}}</pre>{{end}}</div>{{end}}
</div>
<p>{{.Counts.Turns}} turns · {{.Counts.Calls}} tool calls ({{.Counts.Failed}} failed, {{.Counts.Rejected}} rejected, {{.Counts.Unknown}} unknown) ·
{{.Counts.FileOps}} file operations ({{.Counts.OpsApplied}} applied) · {{.Counts.Files}} files · {{.Counts.Drift}} drift</p>
{{if .Unrecoverable}}<h2>What cannot be recovered</h2>
{{range .Unrecoverable}}<div class="issue"><code>{{.Path}}</code><br>Why: {{.Why}}<br>Check: {{.Check}}</div>{{end}}{{end}}
<h2>Timeline</h2>
<table><tr><th>Time</th><th>Tool</th><th>Outcome</th><th>Target</th></tr>
{{range .Timeline}}{{if eq .Kind "turn"}}<tr class="turn"><td>{{clock .Time}}</td><td colspan="3">{{.Text}}</td></tr>
{{else if eq .Kind "aborted"}}<tr class="stop"><td>{{clock .Time}}</td><td colspan="3">{{.Text}}</td></tr>
{{else}}<tr><td>{{clock .Time}}</td><td>{{.Tool}}</td><td class="{{.Outcome}}">{{.Outcome}}</td><td>{{.Target}}{{if ne .Outcome "applied"}}{{if .Detail}}<div class="ev">{{.Detail}}</div>{{end}}{{end}}{{range .Ops}}<div class="ev">{{.Kind}} {{join .Paths " "}} ({{.Outcome}})</div>{{end}}</td></tr>
{{end}}{{end}}</table>
<h2>Files</h2>
{{range .Files}}<details class="file"><summary><code>{{.Path}}</code> — {{.Confidence}}, {{.Final}}, {{len .Steps}} operation(s){{if .Drift}} · <span class="warn">drift</span>{{end}}</summary>
{{if .Reason}}<p>{{.Reason}}</p>{{end}}{{range .Drift}}<p class="warn">drift: {{.}}</p>{{end}}{{range .Notes}}<p class="ev">{{.}}</p>{{end}}
{{range .Steps}}<div class="ev">{{clock .Time}} · line {{.Line}} · {{.Tool}} ({{.Kind}}) · <span class="{{.Outcome}}">{{.Outcome}}</span> · {{.Why}}{{if not .Replayed}} · not replayed{{end}}</div>
{{if .Diff}}<pre>{{range diff .Diff}}<span class="{{.Class}}">{{.Text}}</span>{{end}}</pre>{{end}}{{end}}
</details>
{{end}}
{{if .Warnings}}<h2>Warnings</h2><ul>{{range .Warnings}}<li class="ev">{{.File}}:{{.Line}}: {{.Message}}</li>{{end}}</ul>{{end}}
<p class="meta">Written by sandbox inspect. This page loads nothing from anywhere.</p>
</body></html>
`))
