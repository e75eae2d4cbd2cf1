package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Row is one session as sandbox ps lists it (ps --json, and what --format
// templates see): the session record's fields and these.
type Row struct {
	*Session
	Status  string  `json:"status"`
	AgeS    float64 `json:"age_seconds"`
	IdleS   float64 `json:"idle_seconds"`
	Dir     string  `json:"dir"`
	Running bool    `json:"running"`
}

// filterKeys are the keys a Filter takes.
var filterKeys = []string{"state", "runtime", "name", "agent", "image", "project"}

// Filter keeps some sessions (ps --filter): values of one key are
// alternatives, keys all hold (as docker ps --filter).
type Filter map[string][]string

// ParseFilter reads KEY=VALUE specs, each maybe a comma-separated list.
func ParseFilter(specs []string) (Filter, error) {
	f := Filter{}
	for _, spec := range specs {
		for _, one := range strings.Split(spec, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(one), "=")
			if !ok || v == "" {
				return nil, fmt.Errorf("--filter %q: want KEY=VALUE, KEY one of %s", one, strings.Join(filterKeys, ", "))
			}
			if !slices.Contains(filterKeys, k) {
				return nil, fmt.Errorf("--filter %q: unknown key %q; use %s", one, k, strings.Join(filterKeys, ", "))
			}
			if k == "state" && !slices.Contains([]State{StateCreated, StateRunning, StateExited, StateKilled, StateOOM,
				StateDropped, StateError}, State(v)) {
				return nil, fmt.Errorf("--filter state=%s: use created, running, exited, killed, oom, dropped or error", v)
			}
			f[k] = append(f[k], v)
		}
	}
	return f, nil
}

// Match reports whether r passes the filter.
func (f Filter) Match(r Row) bool {
	for k, vals := range f {
		ok := false
		for _, v := range vals {
			switch k {
			case "state":
				ok = ok || string(r.State) == v
			case "runtime":
				ok = ok || r.Runtime == v
			case "name":
				ok = ok || strings.Contains(r.ID, v)
			case "agent":
				ok = ok || r.Agent == v
			case "image":
				ok = ok || r.Image == v
			case "project":
				abs, err := filepath.Abs(v)
				ok = ok || r.Project == v || (err == nil && r.Project == abs)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Rows lists the store's sessions that pass f, oldest first, as of now.
// A session marked running whose harness has died is marked dropped first
// (Check), and dropped is told its name; damaged says which records could
// not be read.
func (st *Store) Rows(ctx context.Context, now time.Time, f Filter, dropped func(id string)) (rows []Row, damaged []error, err error) {
	list, damaged, err := st.List()
	if err != nil {
		return nil, damaged, err
	}
	rows = make([]Row, 0, len(list))
	for _, s := range list {
		if st.Check(ctx, s) && dropped != nil {
			dropped(s.ID)
		}
		r := Row{Session: s, Status: s.Describe(), AgeS: now.Sub(s.Created).Seconds(),
			IdleS: now.Sub(st.LastActive(s)).Seconds(), Dir: st.Dir(s.ID), Running: st.Running(s)}
		if f.Match(r) {
			rows = append(rows, r)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Created.Before(rows[j].Created) })
	return rows, damaged, nil
}

// Describe says how the session's last run ended, and the agent's session
// id when it is known ("exited with code 0; claude session 9f…").
func (s *Session) Describe() string {
	var b strings.Builder
	switch s.State {
	case StateRunning:
		b.WriteString("running")
	case StateExited:
		fmt.Fprintf(&b, "exited with code %d", s.ExitCode)
	case StateKilled:
		fmt.Fprintf(&b, "killed by %s (exit %d)", s.Signal, s.ExitCode)
	case StateOOM:
		fmt.Fprintf(&b, "killed: out of memory (exit %d)", s.ExitStatus())
	case StateDropped:
		b.WriteString("dropped: the harness died")
		if s.ExitCode != 0 {
			fmt.Fprintf(&b, " (agent exit %d)", s.ExitCode)
		}
	case StateError:
		fmt.Fprintf(&b, "failed to run: %s", s.Error)
	default:
		b.WriteString(string(s.State))
	}
	if s.AgentSessionID != "" {
		fmt.Fprintf(&b, "; %s session %s", s.Agent, s.AgentSessionID)
	}
	return b.String()
}

// ShortState is the session's state for a table cell: exited(CODE),
// killed(SIGNAL), or the state's name.
func (s *Session) ShortState() string {
	switch s.State {
	case StateExited:
		return fmt.Sprintf("exited(%d)", s.ExitCode)
	case StateKilled:
		return "killed(" + s.Signal + ")"
	}
	return string(s.State)
}
