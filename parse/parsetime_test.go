package parse

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 23, 15, 30, 0, 0, time.Local)
	midnight := time.Date(2026, 11, 23, 0, 0, 0, 0, time.Local)
	for in, want := range map[string]time.Time{
		"24h":                  now.Add(-24 * time.Hour),
		"24h ago":              now.Add(-24 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
		"3d":                   now.Add(-72 * time.Hour),
		"1w":                   now.Add(-7 * 24 * time.Hour),
		"3 days ago":           now.AddDate(0, 0, -3),
		"1 day ago":            now.AddDate(0, 0, -1),
		"an hour ago":          now.Add(-time.Hour),
		"2 Weeks ago":          now.AddDate(0, 0, -14),
		"30 minutes ago":       now.Add(-30 * time.Minute),
		"5 mins":               now.Add(-5 * time.Minute),
		"2 months ago":         now.AddDate(0, -2, 0),
		"1 year ago":           now.AddDate(-1, 0, 0),
		"yesterday":            midnight.AddDate(0, 0, -1),
		"today":                midnight,
		"now":                  now,
		"2026-11-20":           time.Date(2026, 11, 20, 0, 0, 0, 0, time.Local),
		"2026-11-20T10:12":     time.Date(2026, 11, 20, 10, 12, 0, 0, time.Local),
		"2026-11-20T10:12:03Z": time.Date(2026, 11, 20, 10, 12, 3, 0, time.UTC),
	} {
		got, err := ParseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ago", "whenever", "3 fortnights ago", "-3 days", "3 days from now", "1e9 years"} {
		if _, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
}
