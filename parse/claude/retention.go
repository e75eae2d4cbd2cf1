package claude

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tailscale/hujson"

	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/tidwall/gjson"
)

// defaultCleanupDays is how long Claude Code keeps a session's transcript
// when settings.json says nothing: it deletes older ones at start-up.
const defaultCleanupDays = 30

// Retention implements agent.Retainer: Claude Code deletes the transcripts
// of sessions older than cleanupPeriodDays (settings.json in its folder;
// 30 by default) each time it starts.
func (Agent) Retention(home string) (agent.Retention, bool) {
	r := agent.Retention{After: defaultCleanupDays * 24 * time.Hour, Setting: "cleanupPeriodDays (not set: Claude Code's default, 30)"}
	p := filepath.Join(home, "settings.json")
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return r, true
	}
	if err != nil {
		r.Setting = "cleanupPeriodDays (Claude Code's default, 30)"
		r.Problem = fmt.Sprintf("%s cannot be read (%v): Claude Code keeps its defaults", p, err)
		return r, true
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		r.Setting = "cleanupPeriodDays (Claude Code's default, 30)"
		r.Problem = fmt.Sprintf("%s is not valid JSON (%v): Claude Code does not read it either, and keeps its defaults", p, err)
		return r, true
	}
	top := gjson.ParseBytes(std)
	if !top.IsObject() {
		r.Setting = "cleanupPeriodDays (Claude Code's default, 30)"
		r.Problem = fmt.Sprintf("%s holds no JSON object: Claude Code keeps its defaults", p)
		return r, true
	}
	// Claude Code reads the file with JSON.parse, where the last of a
	// key written twice wins.
	var v gjson.Result
	top.ForEach(func(k, val gjson.Result) bool {
		if k.Str == "cleanupPeriodDays" {
			v = val
		}
		return true
	})
	switch {
	case !v.Exists():
	case v.Type == gjson.Number && v.Num == 0:
		// Before 2.1.89 a 0 deleted every transcript at start-up and
		// kept no new one (anthropics/claude-code#23710); since then it
		// is refused as invalid.
		r.After, r.Setting = 0, "cleanupPeriodDays 0 in "+p
		r.Problem = "cleanupPeriodDays is 0: Claude Code before 2.1.89 deletes every transcript at start-up and writes none; 2.1.89 and later refuse the value. Set a number of days instead (3650 keeps ten years)"
	case v.Type == gjson.Number && v.Num >= 1 && v.Num == float64(int64(v.Num)):
		r.After, r.Setting = time.Duration(v.Int())*24*time.Hour, "cleanupPeriodDays in "+p
	default:
		r.Setting = "cleanupPeriodDays (Claude Code's default, 30)"
		r.Problem = fmt.Sprintf("cleanupPeriodDays in %s is %s, not a whole number of days: Claude Code refuses it and keeps its default", p, v.Raw)
	}
	return r, true
}
