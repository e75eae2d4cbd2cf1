package inspect

import (
	"strconv"

	"github.com/agentsandbox/sandbox/manifest"
)

// Redact replaces likely secrets in every text of an inspection
// with the patterns and placeholders of export --redact (manifest.Redactor),
// and lists what it replaced. Diffs are redacted whole, so a private key
// that spans lines is found as in a file.
func Redact(in *Inspection) {
	r := manifest.NewRedactor()
	at := func(file string, line int) string { return file + ":" + strconv.Itoa(line) }
	for i := range in.Sessions {
		s := &in.Sessions[i]
		for j := range s.Warnings {
			s.Warnings[j].Message = r.String(s.Warnings[j].Message, at(s.Warnings[j].File, s.Warnings[j].Line))
		}
	}
	transcript := map[string]string{}
	for _, s := range in.Sessions {
		transcript[s.ID] = s.Transcript
	}
	v := &in.Verdict
	v.Summary = r.String(v.Summary, "verdict")
	for i := range v.Evidence {
		v.Evidence[i] = r.String(v.Evidence[i], "verdict")
	}
	for i := range in.Timeline {
		e := &in.Timeline[i]
		where := at(transcript[e.Session], e.Line)
		e.Text = r.String(e.Text, where)
		e.Target = r.String(e.Target, where)
		e.Detail = r.String(e.Detail, where)
		e.Output = r.String(e.Output, where)
		for j := range e.Todos {
			e.Todos[j].Text = r.String(e.Todos[j].Text, where)
		}
	}
	for i := range in.Files {
		f := &in.Files[i]
		f.NetDiff = r.String(f.NetDiff, f.Path)
		f.Reason = r.String(f.Reason, f.Path)
		for j := range f.Drift {
			f.Drift[j] = r.String(f.Drift[j], f.Path)
		}
		for j := range f.Notes {
			f.Notes[j] = r.String(f.Notes[j], f.Path)
		}
		for j := range f.Steps {
			s := &f.Steps[j]
			where := at(transcript[s.Session], s.Line)
			s.Diff = r.String(s.Diff, where)
			s.Why = r.String(s.Why, where)
		}
	}
	for _, list := range [][]Issue{in.Unrecoverable, in.FailedWrites} {
		for i := range list {
			list[i].Why = r.String(list[i].Why, list[i].Path)
		}
	}
	for i := range in.Warnings {
		w := &in.Warnings[i]
		w.Message = r.String(w.Message, at(w.File, w.Line))
	}
	for i := range in.Sandbox {
		in.Sandbox[i].Error = r.String(in.Sandbox[i].Error, "sandbox")
		for j := range in.Sandbox[i].LastOutput {
			in.Sandbox[i].LastOutput[j] = r.String(in.Sandbox[i].LastOutput[j], "sandbox output")
		}
	}
	in.Redactions = r.Redactions()
	if in.Redactions == nil {
		in.Redactions = []manifest.Redaction{}
	}
}
