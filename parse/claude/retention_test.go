package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRetention(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		settings string
		want     time.Duration
		from     string
		problem  string
	}{
		{"", 30 * day, "not set", ""},
		{`{"cleanupPeriodDays": 90}`, 90 * day, "settings.json", ""},
		{`{"cleanupPeriodDays": 0}`, 0, "cleanupPeriodDays 0", "before 2.1.89 deletes every transcript"},
		{`{"cleanupPeriodDays": "7"}`, 30 * day, "default, 30", "not a whole number"},
		{`{"cleanupPeriodDays": -3}`, 30 * day, "default, 30", "not a whole number"},
		{`{"cleanupPeriodDays": 1.5}`, 30 * day, "default, 30", "not a whole number"},
		{`{"permissions": {}}`, 30 * day, "not set", ""},
		{`{broken`, 30 * day, "default, 30", "not valid JSON"},
		{`{"cleanupPeriodDays": 30, "cleanupPeriodDays": 0}`, 0, "cleanupPeriodDays 0", "before 2.1.89"},
		{`{"cleanupPeriodDays": 0, "cleanupPeriodDays": 60}`, 60 * day, "settings.json", ""},
		{`[1]`, 30 * day, "default, 30", "no JSON object"},
		{"dir", 30 * day, "default, 30", "cannot be read"},
	} {
		home := t.TempDir()
		if c.settings == "dir" {
			os.Mkdir(filepath.Join(home, "settings.json"), 0o755)
		} else if c.settings != "" {
			os.WriteFile(filepath.Join(home, "settings.json"), []byte(c.settings), 0o644)
		}
		r, ok := Agent{}.Retention(home)
		if !ok || r.After != c.want || !strings.Contains(r.Setting, c.from) || (c.problem == "") != (r.Problem == "") || !strings.Contains(r.Problem, c.problem) {
			t.Errorf("%s: %+v %v, want %v from %q, problem %q", c.settings, r, ok, c.want, c.from, c.problem)
		}
	}
}
