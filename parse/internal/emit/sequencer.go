package emit

import (
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// Sequencer is what every parser does with what it settles: number the
// session's operations in replay order, and send the session's header
// once, before the first of them (or at the end, when there is none). The
// zero value is ready.
type Sequencer struct {
	seq    int
	headed bool
	// Line, when set, is the line the parser is reading in place, and
	// the only memory it reads that it does not own: Op copies only the
	// strings in it (manifest.Op.OwnBorrowed). Nil copies every string.
	Line []byte
}

// Header sends the session once; session builds it when it is sent (its
// working directory and start may be learnt late). Warnings go with the
// end of the parse, never in the header.
func (s *Sequencer) Header(h Handler, session func() manifest.Session) {
	if s.headed {
		return
	}
	s.headed = true
	if h.Header != nil {
		sess := session()
		sess.Warnings = nil
		h.Header(sess)
	}
}

// Op numbers op as the next operation of session id and sends it, after
// the header. Its strings are made its own first (manifest.Op.Own): a
// parser reading a line through a copy of it (gjson) gets slices of that
// copy, and reconstruction keeps a file's path and content to the end, so
// with 2,800 files written 8 MB of Claude Code lines stayed live.
func (s *Sequencer) Op(h Handler, op manifest.Op, id string, session func() manifest.Session) {
	op.OwnBorrowed(jsonl.Within(s.Line))
	op.Session = id
	op.Seq = s.seq
	s.seq++
	s.Header(h, session)
	if h.Op != nil {
		h.Op(op)
	}
}
