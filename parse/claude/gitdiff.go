package claude

import (
	"strings"

	sgdiff "github.com/sourcegraph/go-diff/diff"
	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// gitDiffCmd reports whether a Bash command is a git diff whose new side is
// the working tree, printed as a plain unified diff: "git diff" (or "git
// --no-pager diff") with at most one revision or path before "--" (one
// revision compares it with the working tree; two could be two commits)
// and paths after it, and no option but those that change only context or
// colour. Anything else (--cached, --stat, -R, A..B, a chain of commands)
// is not read: its lines are not the files as they were.
func gitDiffCmd(cmd string) bool {
	if !strings.HasPrefix(cmd, "git ") || !strings.Contains(cmd, "diff") {
		return false // most commands, at the cost of two looks
	}
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "git" || strings.ContainsAny(cmd, "$`\"'\\*?[]{}<>|&;()~!#\n") {
		return false
	}
	f = f[1:]
	if f[0] == "--no-pager" {
		f = f[1:]
	}
	if len(f) == 0 || f[0] != "diff" {
		return false
	}
	loose := 0
	for i, a := range f[1:] {
		switch {
		case a == "--":
			return loose <= 1 && i+2 <= len(f)
		case a == "--no-color" || a == "--no-ext-diff" || strings.HasPrefix(a, "--unified=") || strings.HasPrefix(a, "-U"):
		case strings.HasPrefix(a, "-") || strings.Contains(a, ".."):
			return false
		default:
			loose++
		}
	}
	return loose <= 1
}

// diffEvidence takes the hunks of a git diff of the working tree (see
// gitDiffCmd), printed whole by a Bash call that succeeded with nothing on
// stderr, as partial evidence of each file it shows: the context and added
// lines of a hunk are the file's lines from the hunk's new start, as the
// file was when the call ran. Paths are the repository's, read from the
// working directory (a session in a subfolder names other files, and its
// evidence finds no file to check). Deleted files, renames, binary files
// and combined diffs are left out.
func (p *parser) diffEvidence(rec jsonl.Record, tu *toolUse, id string, b gjson.Result, tur *turResult) {
	o, why := outcome("Bash", b, tur)
	out := tur.Get("stdout")
	if o != manifest.OutcomeApplied || !tur.IsObject() || out.Type != gjson.String || tur.Get("stderr").Str != "" ||
		tur.Get("interrupted").Bool() || len(out.Str) >= catMax || strings.Contains(out.Str, "truncated") ||
		strings.Contains(out.Str, "\x1b[") || strings.Contains(out.Str, "\ndiff --cc ") || strings.HasPrefix(out.Str, "diff --cc ") {
		return
	}
	files, err := sgdiff.ParseMultiFileDiff([]byte(out.Str + "\n"))
	if err != nil {
		return
	}
	for _, fd := range files {
		name, ok := strings.CutPrefix(fd.NewName, "b/")
		if !ok || fd.OrigName != "/dev/null" && fd.OrigName != "a/"+name || len(fd.Hunks) == 0 {
			continue
		}
		op, ok := p.fileOp(rec, tu, id, manifest.KindObserve, name)
		if !ok {
			continue
		}
		for _, h := range fd.Hunks {
			lines, ok := newSide(h)
			if !ok {
				op.Evidence = nil
				break
			}
			if h.NewLines == 0 {
				continue
			}
			op.Evidence = append(op.Evidence, manifest.Evidence{Path: op.Paths[0], Kind: manifest.EvidencePartial, Content: lines,
				Source: "git diff output", LFNormalized: true, StartLine: int(h.NewStartLine)})
		}
		if len(op.Evidence) == 0 {
			continue
		}
		op.Outcome, op.OutcomeEvidence = o, why
		p.emit(op)
	}
}

// newSide is a hunk's lines as the new file has them (context and added
// lines), and whether they number what the hunk's header says.
func newSide(h *sgdiff.Hunk) (string, bool) {
	body := strings.TrimSuffix(string(h.Body), "\n")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		switch {
		case l == "":
			out = append(out, "") // an empty context line whose space was trimmed
		case l[0] == ' ' || l[0] == '+':
			out = append(out, l[1:])
		case l[0] == '-' || l[0] == '\\':
		default:
			return "", false
		}
	}
	return strings.Join(out, "\n"), int32(len(out)) == h.NewLines
}
