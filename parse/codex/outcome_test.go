package codex

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/jsonl"
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
		// A damaged key reads as gjson reads it: up to the damage.
		`{"session\z":{}}`:          true,
		`{"\u0073ession\z":1}`:      true,
		"{\"sess\\u0069on\x01\":1}": true,
		`{"sess\u0069on`:            true,
		`{"session\`:                true,
		"{\"session\x01\n\":1}":     false, // as gjson read it
		`{"\u0073\u0065\u0073\u0073\u0069\u006f\u006e":1}`: true,
		`{"` + strings.Repeat(`\u0073`, 12) + `":1}`:       false,
	} {
		if got := SingleJSON([]byte(head)); got != want {
			t.Errorf("SingleJSON(%.40q) = %v, want %v", head, got, want)
		}
		if got, old := SingleJSON([]byte(head)), singleJSONWhole([]byte(head)); got != old {
			t.Errorf("SingleJSON(%.40q) = %v, but reading the whole head %v", head, got, old)
		}
	}
}

// singleJSONWhole is SingleJSON as it was, reading the first key with
// gjson from the whole head.
func singleJSONWhole(peek []byte) bool {
	t := bytes.TrimLeft(jsonl.TrimBOM(peek), " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	rest := bytes.TrimLeft(t[1:], " \t\r")
	if len(rest) > 0 && rest[0] == '\n' {
		return true
	}
	key := gjson.ParseBytes(bytes.TrimLeft(rest, " \t\r\n"))
	return key.Type == gjson.String && key.Str == "session"
}

// FuzzSingleJSON requires SingleJSON's bounded reading of the first key to
// be the whole head's, whatever the head.
func FuzzSingleJSON(f *testing.F) {
	for _, s := range []string{`{"session":{}}`, `{"\u0073ession\z":1}`, `{"sess`, "{\"a\x01\":1}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		if got, want := SingleJSON(head), singleJSONWhole(head); got != want {
			t.Fatalf("SingleJSON(%q) = %v, the whole head's reading %v", head, got, want)
		}
	})
}

// freeformHeader is the header of a free-form output as the regular
// expression freeformExit stands for says it.
var freeformHeader = regexp.MustCompile(`^Exit code: (-?\d+)\nWall time: [^\n]*\n(?:Total output lines: \d+\n)?Output:\n`)

// FuzzFreeformExit holds freeformExit to the regular expression's match and
// submatch, on any text.
func FuzzFreeformExit(f *testing.F) {
	for _, s := range []string{
		"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n",
		"Exit code: -12\nWall time: \nTotal output lines: 40\nOutput:\n",
		"Exit code: 1\nWall time: 2 s\nTotal output lines: \nOutput:\n",
		"Exit code: \nWall time: 1\nOutput:\n", "Exit code: 3x\nWall time: 1\nOutput:\n",
		"Exit code: 0\nWall time: 1\nTotal output lines: 2\nOutput:", "Exit code: 0\nWall time: 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		code, ok := freeformExit(s)
		m := freeformHeader.FindStringSubmatch(s)
		if ok != (m != nil) || ok && code != m[1] {
			t.Fatalf("freeformExit(%q) = %q, %v; the expression: %q", s, code, ok, m)
		}
	})
}
