package gemini

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRetention(t *testing.T) {
	for _, c := range []struct {
		settings string
		want     time.Duration
		ok       bool
	}{
		{"", 0, false},
		{`{"general":{"sessionRetention":{"enabled":false,"maxAge":"7d"}}}`, 0, false},
		{`{"general":{"sessionRetention":{"enabled":true,"maxAge":"7d"}}}`, 7 * 24 * time.Hour, true},
		{`{"general":{"sessionRetention":{"enabled":true,"maxAge":"2w"}}}`, 14 * 24 * time.Hour, true},
		{`{"general":{"sessionRetention":{"enabled":true,"maxAge":"36h"}}}`, 36 * time.Hour, true},
		{`{"general":{"sessionRetention":{"enabled":true}}}`, 30 * 24 * time.Hour, true},
		{`{"general":{"sessionRetention":{"enabled":true,"maxAge":"soon"}}}`, 30 * 24 * time.Hour, true},
		{"{\n // a comment\n \"general\": {\"sessionRetention\": {\"enabled\": true, \"maxAge\": \"1m\",},},\n}", 30 * 24 * time.Hour, true},
		{`not json`, 0, false},
	} {
		home := t.TempDir()
		if c.settings != "" {
			os.WriteFile(filepath.Join(home, "settings.json"), []byte(c.settings), 0o644)
		}
		r, ok := Agent{}.Retention(home)
		if r.After != c.want || ok != c.ok || ok && r.Setting == "" {
			t.Errorf("%s: %+v %v, want %v %v", c.settings, r, ok, c.want, c.ok)
		}
		// A file Gemini CLI cannot read is said: the retention cannot be told.
		if broken := c.settings == "not json"; broken != (r.Problem != "") {
			t.Errorf("%s: problem %q", c.settings, r.Problem)
		}
	}
}
