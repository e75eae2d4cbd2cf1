package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsandbox/sandbox/internal/plural"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/vault"
)

// soonWindow is how far ahead doctor looks for an agent's own cleanup.
const soonWindow = 7 * 24 * time.Hour

// staleSync is how old a vault's last sync may be before doctor says so.
const staleSync = 24 * time.Hour

// finding is one thing doctor checked.
type finding struct {
	Check   string `json:"check"`
	Agent   string `json:"agent,omitempty"`
	Status  string `json:"status"` // ok or warning
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Say what could lose transcripts soon: agents' cleanups, no vault, an old sync",
		Long: `sandbox doctor looks for what would lose the transcripts recovery needs, before it
happens:

- an agent that deletes its own sessions (Claude Code after cleanupPeriodDays,
  30 days by default; Gemini CLI with general.sessionRetention enabled) and
  sessions of it that its next start will delete within 7 days, and how many
  of those no vault holds;
- no vault set up (sandbox vault sync has never run into the default vault),
  and whether a sync service is installed;
- a vault whose last sync from this machine is older than a day while
  transcripts changed since.

It changes nothing.`,
		Example: `  sandbox doctor
  sandbox doctor --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runDoctor(cmd.Context())
		},
	}
}

func (a *app) runDoctor(ctx context.Context) error {
	now := a.now()
	homes := discover.DefaultHomes(a.env)
	var out []finding
	warn := func(f finding) { f.Status = "warning"; out = append(out, f) }
	okay := func(f finding) { f.Status = "ok"; out = append(out, f) }

	var inVault func(string) bool
	var last time.Time
	where, _ := vault.Resolve(a.env, "")
	v, verr := vault.Open(ctx, where, vault.Options{})
	host := vault.HostName()
	if verr == nil {
		inVault, last = v.Synced(a.env, host)
	}

	finder := &discover.Finder{}
	defer finder.RemoveSpools()
	for _, ag := range agent.All() {
		r, ok := ag.(agent.Retainer)
		home := homes.Agents[ag.Name()]
		if !ok || home == "" {
			continue
		}
		if _, err := os.Stat(home); err != nil {
			continue
		}
		ret, ok := r.Retention(home)
		title := ag.About().Title
		if !ok {
			if ret.Problem != "" {
				warn(finding{Check: "cleanup", Agent: string(ag.Name()), Message: title + ": " + ret.Problem})
			}
			continue
		}
		after, setting := ret.After, ret.Setting
		var soon, unkept, refused int
		var first time.Time
		for _, c := range ag.Scan(finder, home, discover.Window{}, "") {
			if c.Path == "" {
				continue
			}
			del := c.ModTime.Add(after)
			if del.After(now.Add(soonWindow)) {
				continue
			}
			soon++
			if first.IsZero() || del.Before(first) {
				first = del
			}
			switch {
			case vault.Refuses(c.Path) != "":
				// A sync would not take it: saying "sync keeps them" would
				// be wrong after every sync.
				refused++
			case inVault == nil || !inVault(c.Path):
				unkept++
			}
		}
		f := finding{Check: "cleanup", Agent: string(ag.Name())}
		rule := fmt.Sprintf("%s deletes sessions older than %s at start-up (%s)", title, days(after), setting)
		if after == 0 {
			rule = fmt.Sprintf("%s deletes every session at start-up (%s)", title, setting)
		}
		due := fmt.Sprintf("%s due within 7 days", plural.Count(soon, "session"))
		if ret.Problem != "" {
			rule += ". " + ret.Problem
		}
		if refused > 0 {
			due += fmt.Sprintf(" (%d of them links or files named like credentials, which vault sync does not copy: make them plain files to keep them)", refused)
		}
		switch {
		case ret.Problem != "":
			f.Message = fmt.Sprintf("%s; %s, %d of them in no vault", rule, due, unkept)
			f.Hint = "fix the setting; sandbox vault sync keeps what there is now"
			warn(f)
		case soon == 0:
			f.Message = rule + "; none is due within 7 days"
			okay(f)
		case unkept == 0 && refused == 0:
			f.Message = fmt.Sprintf("%s; %s, all of them kept in the vault", rule, due)
			okay(f)
		case unkept == 0:
			f.Message = fmt.Sprintf("%s; %s", rule, due)
			f.Hint = "copy each linked transcript in place of its link, then sandbox vault sync"
			warn(f)
		default:
			next := "the first " + when(first, now)
			if first.Before(now) {
				next = "some overdue: its next start deletes them"
			}
			f.Message = fmt.Sprintf("%s; %s (%s), %d of them in no vault", rule, due, next, unkept)
			f.Hint = "sandbox vault sync keeps them now; sandbox vault install keeps every later one"
			warn(f)
		}
	}

	svc, svcVault, _ := vault.ServiceVault(vault.ServiceOptions{Env: a.env, GOOS: runtime.GOOS})
	if svc == "" {
		svc, _ = vault.ServicePath(vault.ServiceOptions{Env: a.env, GOOS: runtime.GOOS})
	}
	_, svcErr := os.Stat(svc)
	service := svc != "" && svcErr == nil
	switch {
	case errors.Is(verr, vault.ErrNotVault) || verr != nil && errors.Is(verr, os.ErrNotExist):
		f := finding{Check: "vault", Message: "no vault at " + where + ": the transcripts exist only where the agents keep them"}
		f.Hint = "sandbox vault sync makes one; sandbox vault install keeps it synced"
		if service {
			f.Message += " (a sync service is installed: " + svc + "; is it running?)"
		}
		warn(f)
	case verr != nil:
		warn(finding{Check: "vault", Message: fmt.Sprintf("the vault at %s cannot be read: %v", where, verr)})
	default:
		f := finding{Check: "vault", Message: "vault at " + where}
		if service {
			// Its file is there; whether it runs, the last sync's time says.
			f.Message += "; a sync service is installed (" + svc + ")"
			if svcVault != "" && svcVault != where {
				f.Message += ", but it syncs into " + svcVault + ", not this vault"
				f.Hint = "sandbox vault install again (with --to, or SANDBOX_VAULT set as for this check) to sync into one vault"
			}
		} else {
			f.Message += "; no sync service installed"
			f.Hint = "sandbox vault install keeps it synced"
		}
		if service && svcVault != "" && svcVault != where {
			warn(f)
		} else {
			okay(f)
		}
		changed := 0
		if now.Sub(last) > staleSync {
			for _, c := range finder.Homes(homes, discover.Window{Since: last}) {
				if c.ModTime.After(last) {
					changed++
				}
			}
		}
		s := finding{Check: "sync"}
		switch {
		case last.IsZero():
			s.Message = "no sync from this machine (" + host + ") into the vault yet"
			s.Hint = "sandbox vault sync"
			warn(s)
		case changed > 0:
			s.Message = fmt.Sprintf("the last sync from this machine was %s; %d transcripts changed since", when(last, now), changed)
			s.Hint = "sandbox vault sync, or sandbox vault install to keep it synced"
			warn(s)
		default:
			s.Message = "the last sync from this machine was " + when(last, now)
			okay(s)
		}
	}

	warnings := 0
	for _, f := range out {
		if f.Status == "warning" {
			warnings++
		}
	}
	if a.json {
		if err := a.writeJSON(struct {
			Schema   string    `json:"schema"`
			Findings []finding `json:"findings"`
		}{"sandbox.doctor/v1", out}); err != nil {
			return err
		}
	} else {
		for _, f := range out {
			fmt.Fprintf(a.stdout, "%-7s %s\n", f.Status+":", printable(f.Message))
			if f.Hint != "" {
				fmt.Fprintf(a.stdout, "        %s\n", f.Hint)
			}
		}
	}
	if warnings > 0 {
		noun := "warnings"
		if warnings == 1 {
			noun = "warning"
		}
		return &PartialError{fmt.Sprintf("%d %s", warnings, noun)}
	}
	return nil
}

// days says a duration in days (or hours, under two days).
func days(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// when says a time relative to now: "in 3 days", "2 days ago".
func when(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d > 0:
		return "in " + days(d)
	case -d < time.Hour:
		return "minutes ago"
	default:
		return days(-d) + " ago"
	}
}
