package harness

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// RemoveOptions says how RemoveSession removes a session.
type RemoveOptions struct {
	Force  bool // stop a running session first
	DryRun bool // say what would be done, do nothing
	Purge  bool // remove for good, without an archive
}

// Removal is what RemoveSession did (or would do) to one session.
type Removal struct {
	Session string `json:"session"`
	Action  string `json:"action"` // remove, purge, stop-and-remove, stop-and-purge, none
	Archive string `json:"archive,omitempty"`
	Files   int    `json:"files"`
	Bytes   int64  `json:"bytes"`
	Error   string `json:"error,omitempty"`
}

// RemoveSession removes the session called name, or says why not: its
// record, workspace, logs and manifest, and any container left behind.
// Unless o.Purge, the session is first archived whole (a snapshot restore
// brings back, named for now), and without that archive it is not removed.
// A running session is refused unless o.Force, which stops it first.
func (st *Store) RemoveSession(ctx context.Context, name string, o RemoveOptions, now time.Time) Removal {
	r := Removal{Session: name, Action: "none"}
	if err := ValidName(name); err != nil {
		r.Error = err.Error()
		return r
	}
	s, err := st.Load(name)
	if err != nil {
		r.Error = strings.TrimPrefix(err.Error(), "open ")
		return r
	}
	r.Session = s.ID
	st.Check(ctx, s)
	r.Files, r.Bytes = st.Usage(s.ID)
	r.Action = "remove"
	if o.Purge {
		r.Action = "purge"
	} else {
		r.Archive = st.ArchivePathFree(s.ID, now)
	}
	if st.Running(s) {
		if !o.Force {
			r.Action, r.Archive = "none", ""
			r.Error = fmt.Sprintf("session %s is running; stop it first (sandbox stop %s) or use rm -f", s.ID, s.ID)
			return r
		}
		r.Action = "stop-and-" + r.Action
		if o.DryRun {
			return r
		}
		if s, err = st.Stop(ctx, s, StopGrace); err != nil {
			r.Error = "stopping it: " + err.Error()
			return r
		}
	}
	if o.DryRun {
		return r
	}
	if r.Archive != "" {
		if err := st.Pull(ctx, s); err != nil {
			r.Error = "reading its HOME from where its runtime keeps it: " + err.Error()
			r.Archive = ""
			return r
		}
		if _, err := st.ArchiveSession(ctx, s.ID, r.Archive); err != nil {
			r.Error = "archiving it: " + err.Error()
			r.Archive = ""
			return r
		}
	}
	if err := st.Remove(ctx, s); err != nil {
		r.Error = err.Error()
	}
	return r
}
