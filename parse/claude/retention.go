package claude

import (
	"os"
	"path/filepath"
	"time"

	"github.com/tailscale/hujson"
	"github.com/tidwall/gjson"
)

// defaultCleanupDays is how long Claude Code keeps a session's transcript
// when settings.json says nothing: it deletes older ones at start-up.
const defaultCleanupDays = 30

// Retention implements agent.Retainer: Claude Code deletes the transcripts
// of sessions older than cleanupPeriodDays (settings.json in its folder;
// 30 by default) each time it starts.
func (Agent) Retention(home string) (time.Duration, string, bool) {
	days := int64(defaultCleanupDays)
	setting := "cleanupPeriodDays (not set: Claude Code's default, 30)"
	p := filepath.Join(home, "settings.json")
	if data, err := os.ReadFile(p); err == nil {
		if std, err := hujson.Standardize(data); err == nil {
			if v := gjson.GetBytes(std, "cleanupPeriodDays"); v.Type == gjson.Number && v.Int() > 0 {
				days = v.Int()
				setting = "cleanupPeriodDays in " + p
			}
		}
	}
	return time.Duration(days) * 24 * time.Hour, setting, true
}
