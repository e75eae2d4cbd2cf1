package recover

import (
	"fmt"
	"path"

	"github.com/agentsandbox/sandbox/manifest"
)

// Lost grades down the files that lines of the sessions' transcripts that
// could not be read (damaged, cut, longer than --max-line) name: a change
// such a line held is missing from the replay, so none of them is proven.
// A file the replay changed keeps its last content known, graded stale;
// one it has no content for, or believes absent, is unrecoverable, and so
// is a file only such a line names: listed, never written. Call it after
// the replay and before Finish.
func (r *Reconstructor) Lost(sessions []manifest.Session) {
	for _, s := range sessions {
		for _, w := range s.Warnings {
			for _, n := range w.Names {
				p := path.Clean(n)
				if !path.IsAbs(p) {
					if s.Cwd == "" {
						continue
					}
					p = path.Join(s.Cwd, p)
				}
				r.lost(p, s.ID, w)
			}
		}
	}
}

func (r *Reconstructor) lost(p, session string, w manifest.Warning) {
	why := fmt.Sprintf("%s:%d could not be read (%s), and it names this file: a change it held may be missing", path.Base(w.File), w.Line, firstLine(w.Message))
	f, ok := r.entry(p, session)
	if n := len(f.res.Notes); n > 0 && f.res.Notes[n-1] == why {
		return
	}
	if f.proven.line > w.Line && path.Base(f.proven.transcript) == path.Base(w.File) {
		// Evidence of the whole content came after the lost line: what
		// the line did is settled.
		return
	}
	observed := ok && f.res.Ops == 0 && f.stale == "" && f.unknown == "" && f.res.Reason == "" && len(f.res.Notes) == 0
	f.res.Notes = append(f.res.Notes, why)
	switch {
	case !ok || observed || f.cur.Known && !f.cur.Exists:
		// Nothing the session did to it is known, or the replay has it
		// absent: the lost line may have written anything.
		f.res.Start, f.res.Base = Content{}, ""
		f.cur, f.pinned, f.guess, f.stale = Content{}, false, false, ""
		f.res.Reason = why
	case f.cur.Known && f.stale == "":
		f.stale = why + "; the recovered content is the last one known"
	}
}
