package codex

import (
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// TestDecideText pins how an output's words decide a call's outcome,
// including Codex's own sandbox refusing a command.
func TestDecideText(t *testing.T) {
	for _, c := range []struct {
		out  string
		want manifest.Outcome
	}{
		{"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n", manifest.OutcomeApplied},
		{"Exit code: 2\nWall time: 0.1 seconds\nOutput:\nno\n", manifest.OutcomeFailed},
		{"sandbox denied exec error, exit code: 1, stdout: , stderr: touch: cannot touch 'x': Read-only file system", manifest.OutcomeFailed},
		{"Command denied by sandbox: rm -rf build", manifest.OutcomeFailed},
		{"failed in sandbox: Landlock restricted", manifest.OutcomeFailed},
		{"Success. Updated the following files:\nM a.txt\n", manifest.OutcomeApplied},
		{"patch rejected by user", manifest.OutcomeFailed},
		{"something else entirely", manifest.OutcomeUnknown},
	} {
		if got, why := decideText(c.out); got != c.want {
			t.Errorf("decideText(%q) = %s (%s), want %s", c.out, got, why, c.want)
		}
	}
}

// TestSingleJSON checks how the single-JSON layout is told from a head:
// its first key is "session" however it is spelled, or the object opens a
// line of its own (the pretty-printed file); anything else is not it.
func TestSingleJSON(t *testing.T) {
	for head, want := range map[string]bool{
		`{"session":{"id":"x"},"items":[`:          true,
		"\ufeff{ \"session\" : {":                  true,
		`{"\u0073ession":{}}`:                      true,
		"{\n  \"session\": {":                      true,
		`{"sessions":[]}`:                          false,
		`{"id":"x","session":{}}`:                  false,
		`{"session`:                                true,
		`{"type":"session_meta","payload":{}}`:     false,
		`[{"session":{}}]`:                         false,
		``:                                         false,
		`{"sess\"ion":1}`:                          false,
		`{"session":` + strings.Repeat(" ", 70000): true,
	} {
		if got := SingleJSON([]byte(head)); got != want {
			t.Errorf("SingleJSON(%.40q) = %v, want %v", head, got, want)
		}
	}
}
