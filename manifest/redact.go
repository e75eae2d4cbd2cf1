package manifest

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// secretKinds are the patterns --redact looks for: private keys, common
// token formats, and .env-style assignments to secret-sounding names.
var secretKinds = []struct {
	kind string
	re   *regexp.Regexp
	// group is the submatch to replace (0: the whole match).
	group int
}{
	{"private-key", regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`), 0},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), 0},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b`), 0},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}\b`), 0},
	{"anthropic-key", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}\b`), 0},
	{"openai-key", regexp.MustCompile(`\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}\b`), 0},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), 0},
	{"stripe-key", regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b`), 0},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`), 0},
	{"env-assignment", regexp.MustCompile(`(?mi)^[+\- \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Z0-9_]*[ \t]*=[ \t]*["']?([^\s"'#]{4,})`), 1},
}

// Redactor replaces likely secrets with placeholders and counts them.
type Redactor struct {
	counts map[[2]string]int
}

// NewRedactor returns a Redactor.
func NewRedactor() *Redactor { return &Redactor{counts: map[[2]string]int{}} }

// String returns s with secrets replaced by [REDACTED:kind]; where says
// what s is, for the list of redactions.
func (r *Redactor) String(s, where string) string {
	if s == "" {
		return s
	}
	for _, k := range secretKinds {
		locs := k.re.FindAllStringSubmatchIndex(s, -1)
		if len(locs) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, l := range locs {
			start, end := l[2*k.group], l[2*k.group+1]
			if start < 0 || strings.HasPrefix(s[start:end], "[REDACTED:") {
				continue
			}
			b.WriteString(s[last:start])
			b.WriteString("[REDACTED:" + k.kind + "]")
			last = end
			r.counts[[2]string{where, k.kind}]++
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// Op redacts an operation's texts.
func (r *Redactor) Op(op *Op) {
	where := op.Provenance.Transcript + ":" + strconv.Itoa(op.Provenance.Line)
	op.PatchText = r.String(op.PatchText, where)
	op.Command = r.String(op.Command, where)
	if op.Content != nil {
		c := r.String(*op.Content, where)
		op.Content = &c
	}
	for i := range op.Edits {
		op.Edits[i].Old = r.String(op.Edits[i].Old, where)
		op.Edits[i].New = r.String(op.Edits[i].New, where)
	}
	if op.Notebook != nil {
		op.Notebook.NewSource = r.String(op.Notebook.NewSource, where)
	}
	for i := range op.Evidence {
		op.Evidence[i].Content = r.String(op.Evidence[i].Content, where)
	}
	if op.Patch != nil {
		for i := range op.Patch.Hunks {
			h := &op.Patch.Hunks[i]
			h.Contents = r.String(h.Contents, where)
			for j := range h.Chunks {
				for k := range h.Chunks[j].OldLines {
					h.Chunks[j].OldLines[k] = r.String(h.Chunks[j].OldLines[k], where)
				}
				for k := range h.Chunks[j].NewLines {
					h.Chunks[j].NewLines[k] = r.String(h.Chunks[j].NewLines[k], where)
				}
			}
		}
	}
}

// File redacts a file's contents; a changed file is marked Redacted.
func (r *Redactor) File(f *File) {
	for _, s := range []*State{&f.Start, &f.Final} {
		if s.Content == nil || s.Encoding == "base64" {
			continue
		}
		red := r.String(*s.Content, f.Path)
		if red != *s.Content {
			s.Content = &red
			f.Redacted = true
		}
	}
}

// Redactions lists what was redacted, sorted.
func (r *Redactor) Redactions() []Redaction {
	var out []Redaction
	for k, n := range r.counts {
		out = append(out, Redaction{Where: k[0], Kind: k[1], Count: n})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Where != out[b].Where {
			return out[a].Where < out[b].Where
		}
		return out[a].Kind < out[b].Kind
	})
	return out
}
