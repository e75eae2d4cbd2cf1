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
	}{
		{"", 30 * day, "not set"},
		{`{"cleanupPeriodDays": 90}`, 90 * day, "settings.json"},
		{`{"cleanupPeriodDays": 0}`, 30 * day, "not set"},
		{`{"cleanupPeriodDays": "7"}`, 30 * day, "not set"},
		{`{"permissions": {}}`, 30 * day, "not set"},
		{`{broken`, 30 * day, "not set"},
	} {
		home := t.TempDir()
		if c.settings != "" {
			os.WriteFile(filepath.Join(home, "settings.json"), []byte(c.settings), 0o644)
		}
		got, setting, ok := Agent{}.Retention(home)
		if !ok || got != c.want || !strings.Contains(setting, c.from) {
			t.Errorf("%s: %v %q %v, want %v from %q", c.settings, got, setting, ok, c.want, c.from)
		}
	}
}
