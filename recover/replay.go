package recover

import (
	"context"
	"errors"

	"github.com/agentsandbox/sandbox/manifest"
)

// The one replay every command that reads transcripts runs: recover (and
// its dry run), --to-branch, export, apply of an exported manifest and
// inspect each say in a Stage where the sessions' files are on the host and
// what the replay keeps, and take the files from Replay. What follows
// differs: recover plans and applies them (Prepared), --to-branch writes
// commits, export writes the manifest, inspect judges the session.

// Stage is how a command replays its sessions.
type Stage struct {
	// Ends maps the sessions' paths to where their files land: paths that
	// land on one host file are one file. Nil keeps the agents' paths.
	Ends *Mapper
	// Bases maps the sessions' paths to the host copies the files began
	// from, read when a transcript does not pin a file's content. Nil
	// reads none.
	Bases *Mapper
	// Starts are the start commits found for the sessions, whose content
	// of a file comes before the host's; Ends places them.
	Starts *Starts
	// BaseName names the host copies in the report ("--base").
	BaseName string
	// IncludeUnknown replays the calls whose outcome is unknown.
	IncludeUnknown bool
	// History keeps every file's steps (--to-branch, inspect).
	History bool
	// SHA256States records states by sha256 (export lists them).
	SHA256States bool
	// Each sees every operation once it is replayed, in replay order.
	Each func(*manifest.Op)
	// Sessions, when set, are the sessions of the sources' operations,
	// for sources that are not one per session (a manifest's operations).
	Sessions []manifest.Session
}

// Replayed is what a replay found: the sessions, once read to their end,
// how many operations each source had, and the files.
type Replayed struct {
	Sessions []manifest.Session
	Counts   []int
	Files    []*FileResult
	Stats    Stats
	// Warnings are the replay's own (commands whose targets it cannot name).
	Warnings []manifest.Warning
	rc       *Reconstructor
}

// History returns the steps of the file at an agent path (Stage.History).
func (r *Replayed) History(agentPath string) []Step { return r.rc.History(agentPath) }

// Histories returns every file's steps, by the agent path first seen.
func (r *Replayed) Histories() map[string][]Step { return r.rc.Histories() }

// Replay merges the sources' operations in time order, replays them and
// grades the files: the transcripts are read once, as they stream. Lines
// the transcripts lost lower the grade of the files they name. A replay
// cut short by ctx returns its error: its operations are not the
// sessions', so nothing may be planned from them.
func Replay(ctx context.Context, sources []Source, fsys FS, st Stage) (*Replayed, error) {
	rc := stageReconstructor(fsys, st)
	headers := headersOf(sources)
	each := rc.Add
	if st.Each != nil {
		each = func(op *manifest.Op) {
			rc.Add(op)
			st.Each(op)
		}
	}
	counts, err := mergeInto(ctx, sources, headers, each)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sessions := st.Sessions
	if sessions == nil {
		sessions = sessionsOf(sources)
	}
	rc.Lost(sessions)
	files, stats := rc.Finish()
	return &Replayed{Sessions: sessions, Counts: counts, Files: files, Stats: stats, Warnings: rc.Warnings(), rc: rc}, nil
}

// stageReconstructor is the reconstructor of a stage: files start from the
// start commit, then from the host copies Bases maps them to (when the
// transcript pins no content), keyed by their host target under Ends.
func stageReconstructor(fsys FS, st Stage) *Reconstructor {
	opts := ReconstructOptions{IncludeUnknown: st.IncludeUnknown, History: st.History, SHA256States: st.SHA256States, BaseName: st.BaseName}
	base := func(string) ([]byte, bool, bool) { return nil, false, false }
	if st.Bases != nil {
		base = func(agent string) ([]byte, bool, bool) {
			t, ok := st.Bases.Map(agent)
			if !ok {
				return nil, false, false
			}
			data, _, exists, err := fsys.ReadFile(t)
			if err != nil {
				return nil, false, false
			}
			return data, exists, true
		}
		opts.IsDir = func(agent string) bool {
			t, ok := st.Bases.Map(agent)
			if !ok {
				return false
			}
			_, _, exists, err := fsys.ReadFile(t)
			return exists && errors.Is(err, ErrIsDir)
		}
	}
	if st.Ends != nil {
		opts.Key = func(agent string) string {
			if t, ok := st.Ends.Map(agent); ok {
				return t.Path()
			}
			return agent
		}
	}
	rc := NewReconstructor(base, opts)
	if st.Ends != nil {
		st.Starts.install(rc, st.Ends)
	}
	return rc
}
