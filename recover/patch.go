package recover

import (
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// PatchAgainst says what a patch's "before" side is.
type PatchAgainst string

// Patch bases.
const (
	// AgainstHost: the host's files now; the patch does what recover would.
	AgainstHost PatchAgainst = "host"
	// AgainstStart: the files as the session started (the start commit);
	// the patch is the session's whole work.
	AgainstStart PatchAgainst = "start"
)

// PatchResult is a patch and the files it leaves out.
type PatchResult struct {
	Text string
	// Files counts the files in the patch.
	Files int
	// Left lists the files left out, with why.
	Left []BranchLeft
}

// GitPatch writes the plans of a recovery as one patch in the form of git
// format-patch: a mail header (so git am takes it, with the agent as
// author), then a diff --git section per file (so git apply takes it). It
// writes nothing anywhere.
func GitPatch(res *Result, against PatchAgainst, author string, when time.Time) PatchResult {
	var out PatchResult
	var body strings.Builder
	for _, p := range res.Plans {
		if !p.Mapped {
			out.Left = append(out.Left, BranchLeft{Path: p.Path(), Reason: string(p.Action) + ": " + p.Reason})
			continue
		}
		var before, after Content
		oldPath, newPath := p.Target.Rel, p.Target.Rel
		mode := p.HostMode
		switch against {
		case AgainstStart:
			f := p.File
			if p.Action == ActSkipped && f.Confidence == Redacted {
				out.Left = append(out.Left, BranchLeft{Path: p.Path(), Reason: string(p.Action) + ": " + p.Reason})
				continue
			}
			if !f.Start.Known || !f.Final.Known {
				out.Left = append(out.Left, BranchLeft{Path: p.Path(), Reason: fmt.Sprintf("%s: the content the session started from or ended with is unknown", f.Confidence)})
				continue
			}
			before, after = f.Start, f.Final
			if f.MovedFrom != "" {
				continue // the source's deletion and this file's creation are each in the patch
			}
		default:
			switch {
			case !p.Written() || (p.Action == ActConflict && p.Write.Known && strings.Contains(p.Write.Text, "<<<<<<< ")):
				if p.Action != ActUnchanged && p.Action != "" {
					out.Left = append(out.Left, BranchLeft{Path: p.Path(), Reason: string(p.Action) + ": " + p.Reason})
				}
				continue
			case p.Backup != nil:
				out.Left = append(out.Left, BranchLeft{Path: p.Path(), Reason: "conflict: " + p.Reason})
				continue
			}
			before, after = p.Host, p.Write
			if p.Action == ActMove && p.From != nil {
				// A move: the source's deletion, then the destination's creation.
				section(&body, p.From.Rel, p.From.Rel, p.FromHost, Content{Known: true}, mode)
				out.Files++
				before = Content{Known: true}
			}
		}
		if s := section(&body, oldPath, newPath, before, after, mode); s {
			out.Files++
		}
	}
	if out.Files == 0 {
		return out
	}
	var b strings.Builder
	b.WriteString("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n")
	fmt.Fprintf(&b, "From: %s\n", oneLine(author))
	fmt.Fprintf(&b, "Date: %s\n", when.UTC().Format(time.RFC1123Z))
	var ids []string
	for _, s := range res.Report.Sessions {
		ids = append(ids, s.ID)
	}
	fmt.Fprintf(&b, "Subject: [PATCH] Recover the work of session %s\n\n", oneLine(strings.Join(ids, ", ")))
	fmt.Fprintf(&b, "Recovered by sandbox from the transcript(s), against the %s.\n\n", map[PatchAgainst]string{AgainstHost: "host's files", AgainstStart: "files as the session started"}[against])
	for _, id := range ids {
		fmt.Fprintf(&b, "Session-Id: %s\n", oneLine(id))
	}
	b.WriteString("---\n")
	b.WriteString(body.String())
	b.WriteString("-- \nsandbox\n\n")
	out.Text = b.String()
	return out
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// section writes one file's diff --git section; false when the two sides
// are the same.
func section(b *strings.Builder, oldPath, newPath string, before, after Content, mode fs.FileMode) bool {
	if before.Exists == after.Exists && before.Text == after.Text {
		return false
	}
	gm := "100644"
	if mode&0o111 != 0 {
		gm = "100755"
	}
	a, bn := diffName("a/"+oldPath), diffName("b/"+newPath)
	fmt.Fprintf(b, "diff --git %s %s\n", a, bn)
	oldName, newName := "a/"+oldPath, "b/"+newPath
	switch {
	case !before.Exists:
		fmt.Fprintf(b, "new file mode 100644\n")
		oldName = "/dev/null"
	case !after.Exists:
		fmt.Fprintf(b, "deleted file mode %s\n", gm)
		newName = "/dev/null"
	}
	bt, at := "", ""
	if before.Exists {
		bt = before.Text
	}
	if after.Exists {
		at = after.Text
	}
	b.WriteString(UnifiedDiff(oldName, newName, bt, at))
	return true
}
