package inspect

import (
	"html/template"
	"io"
	"strings"
)

// RenderHTML writes the report as one self-contained page: styles and the
// chart inline, a Content-Security-Policy that lets the page load nothing
// from anywhere, and a few lines of script that only add conveniences
// (expand and collapse all, open everything before printing): without
// script the page reads the same, diffs open and filters working (CSS).
func RenderHTML(w io.Writer, r *Report) error { return page.Execute(w, r) }

type diffLine struct{ Class, Text string }

// diffLines classes a diff's lines for colour.
func diffLines(d string) []diffLine {
	var out []diffLine
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
		out = append(out, diffLine{c, l})
	}
	return out
}

// gradeClass colours a grade: exact is good, git and host-based are in
// between, and the rest (stale, unknown-outcome, redacted, unrecoverable)
// are bad.
func gradeClass(g string) string {
	switch g {
	case "exact":
		return "g-ok"
	case "host-based", "git":
		return "g-mid"
	}
	return "g-bad"
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"diff":  diffLines,
	"join":  strings.Join,
	"grade": gradeClass,
	"clock": stamp,
	"inc":   func(i int) int { return i + 1 },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>sandbox inspect: {{.Title}}</title>
<style>
:root{--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--unk:#8250df;--mute:#57606a;--line:#d0d7de}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:1.5rem auto;max-width:1200px;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.15rem;margin:1.8rem 0 .6rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1rem;margin:1.2rem 0 .4rem}
a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
.meta{color:var(--mute)}.meta b{color:#1b1f24;font-weight:600}
.verdict{border-radius:6px;padding:.8rem 1rem;margin:1rem 0;border:2px solid}
.v-clean{background:#dafbe1;border-color:#4ac26b}.v-other{background:#ffebe9;border-color:#cf222e}
.verdict .state{font-size:1.25rem;font-weight:700}.ev{font-family:ui-monospace,monospace;font-size:12px;color:var(--mute);overflow-wrap:anywhere}
.died{background:#fff;border-left:4px solid var(--bad);padding:.3rem .6rem;margin:.5rem 0}
.check{border:2px solid #d4a72c;background:#fff8c5;border-radius:6px;padding:.6rem 1rem;margin:1rem 0}
.check h2{margin-top:0;border:0}
.check li{margin:.25rem 0}
.nums{display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;margin:.6rem 0}.nums span b{font-size:1.05rem}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eaeef2;vertical-align:top}
th{background:#f6f8fa}
.applied{color:var(--ok)}.failed{color:var(--bad)}.rejected{color:var(--warn)}.unknown{color:var(--unk)}
.o-failed .out pre,.o-rejected .out pre{border-left:3px solid var(--bad)}td.nw{white-space:nowrap}
.badge{display:inline-block;border-radius:1em;padding:0 .5em;font-size:12px;border:1px solid;white-space:nowrap}
.g-ok{color:var(--ok);border-color:#4ac26b}.g-mid{color:var(--warn);border-color:#d4a72c}.g-bad{color:var(--bad);border-color:var(--bad);background:#ffebe9}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
pre{background:#f6f8fa;padding:.4rem .5rem;margin:.3rem 0;white-space:pre-wrap;overflow-wrap:anywhere}
pre.diff span{display:block;white-space:pre-wrap}.add{background:#e6ffec}.del{background:#ffebe9}.hunk{color:#0969da}.h{font-weight:bold}.cmd{color:var(--unk)}
details{margin:.3rem 0}summary{cursor:pointer}
section.file{border:1px solid var(--line);border-radius:6px;margin:.8rem 0;padding:.4rem .8rem;content-visibility:auto;contain-intrinsic-size:auto 400px}
section.file.flagged{border-color:var(--bad);border-width:2px}
.flagline{color:var(--bad);font-weight:600}.note{color:var(--warn)}
.step{margin:.5rem 0 .2rem;font-size:13px}.step .ev{display:inline}
.chart,.strip{display:block;margin:.4rem 0;border:1px solid var(--line);border-radius:4px}
svg text{font:11px system-ui,sans-serif;fill:#1b1f24}svg .tl{fill:var(--mute)}svg .tick{stroke:#d8dee4}
svg .lane0{fill:#fff}svg .lane1{fill:#f6f8fa}
svg .m{stroke:none}svg .m.applied,svg .s.applied{fill:#2da44e}svg .m.failed,svg .s.failed{fill:#cf222e}svg .m.rejected,svg .s.rejected{fill:#bf8700}svg .m.unknown,svg .s.unknown{fill:#8250df}
svg .s.nr{fill-opacity:.35;stroke-width:1.5}svg .s.nr.failed{stroke:#cf222e}svg .s.nr.unknown{stroke:#8250df}svg .s.nr.rejected{stroke:#bf8700}
svg .m.died{stroke:#cf222e;stroke-width:2}svg .diedbar{fill:#cf222e;fill-opacity:.25;stroke:#cf222e;stroke-dasharray:3 2}svg .diedl{fill:#cf222e;font-weight:700}
svg .fc{fill:#1b1f24}svg .turn line{stroke:#0969da;stroke-dasharray:3 2}svg .turn path{fill:#0969da}
svg .compact line{stroke:#bc4c00;stroke-width:2;stroke-dasharray:1 3}svg .abort path{fill:#cf222e}
.legend{font-size:12px;color:var(--mute)}.legend i{display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;margin:0 .25em 0 .8em;border-radius:2px}
.tl .tr{display:grid;grid-template-columns:5rem 9rem 9rem 7.5rem minmax(0,1fr);gap:0 .6rem;padding:.25rem .4rem;border-bottom:1px solid #eaeef2;content-visibility:auto;contain-intrinsic-size:auto 44px}
.tl .tr.head{background:#f6f8fa;font-weight:600;content-visibility:visible}.tl .span{grid-column:3/6;min-width:0}
.k-turn{background:#ddf4ff}.k-aborted{background:#fff8c5}.k-compact{background:#fff1e5}.k-message{color:#424a53}
.tl .tr.died{background:#ffebe9;border:2px solid var(--bad)}
.tl .tr.side{border-left:4px solid #d8b9ff}.lane{font-size:11px;color:#6639ba}
.gap{color:var(--mute);font-size:11px}.gap.big{color:var(--warn);font-weight:600}.dur{color:var(--mute);font-size:11px}
.out pre{margin:.2rem 0 0;max-height:none}.todos{margin:.2rem 0;padding-left:1.2rem}.todos li{list-style:none}
.todos .completed::before{content:"☑ "}.todos .in_progress::before{content:"▶ "}.todos .pending::before{content:"☐ "}.todos .completed{color:var(--mute);text-decoration:line-through}
.filters{margin:.4rem 0;font-size:13px}.filters label{margin-right:1rem}
#flt-fail:checked~.tl .tr:not(.bad):not(.head),#flt-file:checked~.tl .tr:not(.fileop):not(.head),#flt-main:checked~.tl .tr.side,#flt-side:checked~.tl .tr:not(.side):not(.head){display:none}
.js-only{display:none}.js .js-only{display:inline-block}
button{font:inherit;font-size:12px;padding:.1rem .6rem;border:1px solid var(--line);border-radius:4px;background:#f6f8fa;cursor:pointer}
footer{margin:2rem 0 1rem;color:var(--mute);font-size:12px;border-top:1px solid var(--line);padding-top:.5rem}
@media print{
 body{max-width:none;margin:0;font-size:11px}
 .filters>input,.filters>label,.filters>.show,.js-only,button{display:none!important}
 .tl .tr{display:grid!important;content-visibility:visible;grid-template-columns:4.2rem 6rem 7rem 5.5rem minmax(0,1fr)}section.file{content-visibility:visible}
 details>summary{list-style:none}
 .verdict,.check,svg,.tl .tr{break-inside:avoid-page}
 pre{white-space:pre-wrap}
 a{color:inherit}
}
</style></head><body>
<header>
<h1>Session report: {{.Title}}</h1>
{{range .In.Sessions}}<div class="meta"><b>{{.Agent}} {{.AgentVersion}}</b> · session <code>{{.ID}}</code> · <code>{{.Cwd}}</code> · {{clock .Start}} → {{clock .End}} · <span class="ev">{{.Transcript}}</span></div>
{{end}}<div class="meta">Times are in {{.Zone}}.</div>
</header>
<div class="verdict {{if eq .In.Verdict.State "clean"}}v-clean{{else}}v-other{{end}}" id="verdict">
<div class="state">Verdict: {{.In.Verdict.State}}</div><div>{{.In.Verdict.Summary}}</div>
{{if .Died}}<div class="died">The call it died in: <a href="#{{.Died}}">{{.DiedText}}</a></div>{{end}}
{{range .In.Verdict.Evidence}}<div class="ev">{{.}}</div>{{end}}
{{range .In.Sandbox}}<div class="ev" id="sandbox-end">Sandbox: {{.String}}{{if .LastOutput}}<pre>{{range .LastOutput}}{{.}}
{{end}}</pre>{{end}}</div>{{end}}
</div>
{{if .Flags}}<div class="check" id="needs-checking"><h2>Needs checking: {{len .Flags}} file(s)</h2><ul>
{{range .Flags}}<li>{{if .Anchor}}<a href="#{{.Anchor}}"><code>{{.Path}}</code></a>{{else}}<code>{{.Path}}</code>{{end}} <span class="badge {{grade .Grade}}">{{.Grade}}</span> — {{.Reason}}{{if .Check}}<br><small>Check: {{.Check}}</small>{{end}}</li>
{{end}}</ul></div>{{end}}
<div class="nums" id="summary">
<span><b>{{.Duration}}</b> from {{.Start}} to {{.End}}</span>
<span><b>{{.In.Counts.Turns}}</b> turns</span>
<span><b>{{.In.Counts.Calls}}</b> tool calls (<span class="failed">{{.In.Counts.Failed}} failed</span>, <span class="rejected">{{.In.Counts.Rejected}} rejected</span>, <span class="unknown">{{.In.Counts.Unknown}} unknown</span>)</span>
<span><b>{{.In.Counts.FileOps}}</b> file operations ({{.In.Counts.OpsApplied}} applied)</span>
<span><b>{{.In.Counts.Files}}</b> files</span>
<span><b>{{.In.Counts.Drift}}</b> drift</span>
{{if .Subagents}}<span><b>{{.Subagents}}</b> subagent(s)</span>{{end}}
{{if .Model}}<span>model <b>{{.Model}}</b></span>{{end}}
{{if .Tokens}}<span>tokens: {{.Tokens}}</span>{{end}}
</div>
<h2 id="at-a-glance">The session at a glance</h2>
{{.Chart}}
<div class="legend">Each mark is a tool call, from its start to its result:<i style="background:#2da44e"></i>applied<i style="background:#cf222e"></i>failed<i style="background:#bf8700"></i>rejected<i style="background:#8250df"></i>unknown; ▲ changed files (links to the file); <span style="color:#0969da">┆</span> a user turn; <span style="color:#bc4c00">┆</span> compaction; a red band to the end, labelled: the call the session died in. Hover a mark for the call.</div>
{{if .Strip}}<h3 id="file-strip">Which file changed when</h3>{{.Strip}}
<div class="legend">A mark per operation on the file, coloured by outcome; a pale mark was not replayed.</div>{{end}}
<h2 id="files">Files</h2>
<p><span class="js-only"><button type="button" id="expand-all">Expand all</button> <button type="button" id="collapse-all">Collapse all</button></span></p>
{{if or .Files .FailedWrites}}<table id="file-index"><tr class="head"><th>File</th><th>Grade</th><th>What the session did</th><th>Ends as</th><th>Ops</th></tr>
{{range .Files}}<tr{{if .Flag}} class="bad"{{end}}><td><a href="#{{.Anchor}}"><code>{{.Path}}</code></a></td><td><span class="badge {{grade .Confidence}}">{{.Confidence}}</span></td><td>{{.Change}}{{if .Flag}}<div class="flagline">{{.Flag}}</div>{{end}}</td><td class="nw">{{.Final}}</td><td>{{len .Steps}}</td></tr>
{{end}}{{range .FailedWrites}}<tr class="bad"><td><a href="#{{.Anchor}}"><code>{{.Path}}</code></a></td><td><span class="badge g-bad">failed</span></td><td>{{.Check}}</td><td class="nw">not written</td><td></td></tr>
{{end}}</table>{{else}}<p>The session changed no files.</p>{{end}}
{{range .Files}}<section class="file{{if .Flag}} flagged{{end}}" id="{{.Anchor}}">
<h3><code>{{.Path}}</code> <span class="badge {{grade .Confidence}}">{{.Confidence}}</span></h3>
<div>{{.Change}}{{if .MovedFromAnchor}} (<a href="#{{.MovedFromAnchor}}">{{.MovedFrom}}</a>){{end}}{{if .MovedToAnchor}} (<a href="#{{.MovedToAnchor}}">{{.MovedTo}}</a>){{end}}; ends as {{.Final}}; {{len .Steps}} operation(s).</div>
{{if .Flag}}<p class="flagline">Needs checking ({{.Confidence}}): {{.Flag}}</p>{{end}}{{range .Drift}}<p class="note">drift: {{.}}</p>{{end}}{{range .Notes}}<p class="ev">{{.}}</p>{{end}}
{{if .NetDiff}}<details open class="net"><summary><b>Net change over the session</b> (start → end)</summary><pre class="diff">{{range diff .NetDiff}}<span class="{{.Class}}">{{.Text}}</span>{{end}}</pre></details>
{{else}}<p class="note">No net diff: {{if not .StartKnown}}the content at the session's start is not known{{else if eq .Final "unknown"}}the content at the end is not known{{else}}the file ends as it began{{end}}.</p>{{end}}
{{if .Steps}}<details open class="ops"><summary>Each operation ({{len .Steps}})</summary>
{{range .OpSteps}}<div class="step">{{clock .Time}} · {{.Tool}} ({{.Kind}}) · <span class="{{.Outcome}}">{{.Outcome}}</span>{{if not .Replayed}} · not replayed{{end}} <span class="ev">line {{.Line}} · {{.Why}}</span></div>
{{if .Failed}}<div class="flagline">{{.Failed}}</div>{{end}}{{if .Same}}<div class="ev">(its diff is the net change above)</div>{{else if .Diff}}<pre class="diff">{{range diff .Diff}}<span class="{{.Class}}">{{.Text}}</span>{{end}}</pre>{{end}}{{end}}
</details>{{end}}
</section>
{{end}}{{range .FailedWrites}}<section class="file flagged" id="{{.Anchor}}"><h3><code>{{.Path}}</code> <span class="badge g-bad">failed</span></h3><p class="flagline">{{.Check}}</p><p>{{.Reason}}</p></section>
{{end}}
<h2 id="timeline">Timeline</h2>
<div class="filters"><span class="show">Show:</span>
<input type="radio" name="flt" id="flt-all" checked><label for="flt-all">everything</label>
<input type="radio" name="flt" id="flt-fail"><label for="flt-fail">only failures</label>
<input type="radio" name="flt" id="flt-file"><label for="flt-file">only file changes</label>
{{if gt (len .Lanes) 1}}<input type="radio" name="flt" id="flt-main"><label for="flt-main">only the main agent</label>
<input type="radio" name="flt" id="flt-side"><label for="flt-side">only subagents</label>{{end}}
<div id="timeline-table" class="tl"><div class="tr head"><div>Time</div><div>Who</div><div>What</div><div>Outcome</div><div>Details</div></div>
{{range .Rows}}<div id="{{.Anchor}}" class="tr {{.Class}}"><div>{{.Time}}{{if .Gap}}<div class="gap{{if .BigGap}} big{{end}}">{{.Gap}}</div>{{end}}</div>
<div>{{if .Side}}<span class="lane">{{.Lane}}</span>{{else}}{{if eq .Kind "turn"}}user{{else}}agent{{end}}{{end}}</div>
{{if eq .Kind "call"}}<div><b>{{.Tool}}</b>{{if .Subagent}} <span class="lane">→ starts {{.Subagent}}</span>{{end}}</div><div class="{{.Outcome}}">{{.Outcome}}{{if .Dur}}<div class="dur">{{.Dur}}</div>{{end}}{{if .Died}}<div class="flagline">the session died here</div>{{end}}</div>
<div>{{if not .Todos}}<code>{{.Target}}</code>{{end}}{{if .Todos}}<ul class="todos">{{range .Todos}}<li class="{{.Status}}">{{.Text}}</li>{{end}}</ul>{{end}}{{if ne .Outcome "applied"}}{{if .Detail}}<div class="ev">{{.Detail}}</div>{{end}}{{end}}
{{range .Ops}}<div class="ev">{{.Kind}} {{if .Anchor}}<a href="#{{.Anchor}}">{{.Path}}</a>{{else if .Path}}{{.Path}}{{else}}(files it does not name){{end}} ({{.Outcome}})</div>{{end}}
{{if .Head}}<div class="out">{{if .Tail}}{{if .More}}<details><summary>earlier output{{if .Cut}} (cut){{end}}</summary><pre>{{.More}}</pre></details>{{end}}<pre>{{.Head}}</pre>{{else}}<pre>{{.Head}}</pre>{{if or .More .Cut}}<details><summary>more output{{if .Cut}} (cut){{end}}</summary><pre>{{.More}}</pre></details>{{end}}{{end}}</div>{{end}}</div>
{{else if eq .Kind "turn"}}<div class="span"><b>{{.Head}}</b>{{if .More}}<details><summary>more</summary><pre>{{.More}}</pre></details>{{end}}</div>
{{else if eq .Kind "message"}}<div class="span"><pre>{{.Head}}</pre>{{if or .More .Cut}}<details><summary>more{{if .Cut}} (cut){{end}}</summary><pre>{{.More}}</pre></details>{{end}}</div>
{{else}}<div class="span"><b>{{.Kind}}</b>: {{.Head}}</div>{{end}}</div>
{{end}}</div></div>
{{if .In.Warnings}}<h2 id="warnings">Warnings</h2><ul>{{range .In.Warnings}}<li class="ev">{{.File}}:{{.Line}}: {{.Message}}</li>{{end}}</ul>{{end}}
{{if .Redact}}<h2 id="redactions">Redacted</h2>{{if .In.Redactions}}<ul>{{range .In.Redactions}}<li>{{.Count}} {{.Kind}} in <code>{{.Where}}</code></li>{{end}}</ul>{{else}}<p>--redact found nothing that looks like a secret.</p>{{end}}{{end}}
<footer>Written by sandbox inspect {{.Footer.Version}} on {{.Footer.Host}} by {{.Footer.User}} at {{.Footer.Generated}}.{{if .Redact}} Likely secrets were replaced with [REDACTED:kind] (--redact).{{end}} This page loads nothing from anywhere.</footer>
<script>
document.documentElement.className+=" js";
function setAll(o){document.querySelectorAll("section.file details").forEach(function(d){d.open=o})}
document.getElementById("expand-all").onclick=function(){setAll(true)};
document.getElementById("collapse-all").onclick=function(){setAll(false)};
window.addEventListener("beforeprint",function(){document.querySelectorAll("details").forEach(function(d){d.open=true})});
</script>
</body></html>
`))
