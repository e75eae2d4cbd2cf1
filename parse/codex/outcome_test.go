package codex

import (
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
