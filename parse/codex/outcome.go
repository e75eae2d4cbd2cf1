package codex

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

var unifiedExit = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)$`)

const successText = "Success. Updated the following files:"

var failurePrefixes = []string{
	"apply_patch verification failed:", "error:", "Failed to ", "Invalid patch", "apply_patch handler received",
	"patch rejected", "exec command rejected", "aborted", "Script failed", "No files were modified.",
	// Codex's own sandbox refusing a command (SandboxErr::Denied and its
	// shell-tool wording): the command did not do what it was asked.
	"sandbox denied exec error", "Command denied by sandbox", "failed in sandbox",
}

// decideOutput decides a call's outcome from its output (formats/codex.md
// §3.9, steps 2–7). out is the raw JSON value of the output field.
func decideOutput(out gjson.Result) (manifest.Outcome, string) {
	if out.IsArray() {
		first := ""
		var all strings.Builder
		out.ForEach(func(_, v gjson.Result) bool {
			t := v.Get("text").String()
			if first == "" {
				first = t
			}
			all.WriteString(t)
			all.WriteByte('\n')
			return true
		})
		switch {
		case strings.HasPrefix(first, "Script completed"):
			return manifest.OutcomeApplied, "output: Script completed"
		case strings.HasPrefix(first, "Script failed"):
			return manifest.OutcomeFailed, "output: Script failed"
		}
		return decideText(all.String())
	}
	if out.IsObject() {
		if s := out.Get("success"); s.Exists() {
			if s.Bool() {
				return manifest.OutcomeApplied, "output: success=true"
			}
			return manifest.OutcomeFailed, "output: success=false"
		}
		return decideText(textOf(out.Get("content")))
	}
	return decideText(textOf(out))
}

// textOf is a value as text: a string's own, any other value written the
// one way its meaning allows, so that it reads the same however the
// transcript spells it.
func textOf(r gjson.Result) string {
	if r.Type == gjson.JSON {
		return jsonl.Canonical(r.Raw)
	}
	return r.String()
}

func decideText(s string) (manifest.Outcome, string) {
	t := strings.TrimLeft(s, " \t\r\n")
	if strings.HasPrefix(t, "{") && gjson.Valid(t) {
		if ec := gjson.Get(t, "metadata.exit_code"); ec.Exists() {
			if ec.Int() == 0 {
				return manifest.OutcomeApplied, "output: exit_code 0"
			}
			return manifest.OutcomeFailed, "output: exit_code " + ec.Raw
		}
		if o := gjson.Get(t, "output"); o.Exists() {
			return decideText(o.String())
		}
	}
	if code, ok := freeformExit(t); ok {
		return exitOutcome(code, "output: Exit code ")
	}
	// Unified exec: an optional "Command: …" (which may span lines), then
	// Chunk ID / Wall time and the exit line, all before "Output:".
	head := t
	if i := strings.Index(t, "\nOutput:\n"); i >= 0 {
		head = t[:i]
	}
	if strings.HasPrefix(t, "Command: ") || strings.HasPrefix(t, "Chunk ID: ") || strings.HasPrefix(t, "Wall time: ") || strings.HasPrefix(t, "Process ") {
		if m := unifiedExit.FindStringSubmatch(head); m != nil && (strings.Contains(head, "Wall time: ") || strings.HasPrefix(t, "Process ")) {
			return exitOutcome(m[1], "output: Process exited with code ")
		}
		if strings.Contains(head, "\nProcess running with session ID") {
			return manifest.OutcomeUnknown, "output: process still running"
		}
	}
	if strings.HasPrefix(t, successText) {
		return manifest.OutcomeApplied, "output: " + successText
	}
	for _, p := range failurePrefixes {
		if strings.HasPrefix(t, p) {
			return manifest.OutcomeFailed, "output: " + emit.FirstLine(t)
		}
	}
	if strings.Contains(t, "rejected by user") || strings.Contains(t, "declined") {
		return manifest.OutcomeRejected, "output: " + emit.FirstLine(t)
	}
	return manifest.OutcomeUnknown, "output not recognised: " + emit.FirstLine(t)
}

// freeformExit reports whether t starts with a free-form output's header
// (freeformHeader in outcome_test.go matches it), and its exit code: read
// by hand, not by the regular expression, whose backtracking match and
// slice of submatches every output of a rollout paid for. FuzzFreeformExit
// holds it to the expression's answer.
func freeformExit(t string) (code string, ok bool) {
	rest, ok := strings.CutPrefix(t, "Exit code: ")
	if !ok {
		return "", false
	}
	n := 0
	if n < len(rest) && rest[n] == '-' {
		n++
	}
	digits := n
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	if n == digits {
		return "", false
	}
	code, rest = rest[:n], rest[n:]
	if rest, ok = strings.CutPrefix(rest, "\nWall time: "); !ok {
		return "", false
	}
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return "", false
	}
	rest = rest[nl+1:]
	if r, ok := strings.CutPrefix(rest, "Total output lines: "); ok {
		n := 0
		for n < len(r) && '0' <= r[n] && r[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(r) || r[n] != '\n' {
			return "", false
		}
		rest = r[n+1:]
	}
	if !strings.HasPrefix(rest, "Output:\n") {
		return "", false
	}
	return code, true
}

func exitOutcome(code, label string) (manifest.Outcome, string) {
	n, err := strconv.Atoi(code)
	if err == nil && n == 0 {
		return manifest.OutcomeApplied, label + code
	}
	return manifest.OutcomeFailed, label + code
}

// payloadType is gjson.GetBytes(pl, "type") (its text, and whether it
// exists) read where Codex writes it, as the payload's first key, without
// gjson's copy of the result; a payload spelled otherwise is left to gjson.
// It is read for every line of a rollout.
func payloadType(pl []byte) (string, bool) {
	if t, exists, ok := payloadTypeFast(pl); ok {
		return t, exists
	}
	r := gjson.GetBytes(pl, "type")
	return r.Str, r.Exists()
}

// payloadTypeFast is payloadType's reading of a first key "type" with a
// string value; ok is false for a payload spelled otherwise. It reads no
// further than that value, so pl may run on past the payload (FieldFrom).
func payloadTypeFast(pl []byte) (typ string, exists, ok bool) {
	if i := jsonl.SkipSpace(pl, 0); i < len(pl) && pl[i] == '{' {
		if k := jsonl.SkipSpace(pl, i+1); k < len(pl) && pl[k] == '"' {
			if kend := jsonl.StringEnd(pl, k); kend > 0 && jsonl.KeyIs(pl[k:kend], "type") {
				if c := jsonl.SkipSpace(pl, kend); c < len(pl) && pl[c] == ':' {
					if v := jsonl.SkipSpace(pl, c+1); v < len(pl) && pl[v] == '"' {
						if vend := jsonl.StringEnd(pl, v); vend > 0 {
							if raw := pl[v:vend]; bytes.IndexByte(raw, '\\') < 0 {
								return intern(raw[1 : len(raw)-1]), true, true
							}
							s, _ := jsonl.Text(pl[v:vend])
							return s, true, true
						}
					}
				}
			}
		}
	}
	return "", false, false
}

// intern returns b as a string, without allocating for the types every
// rollout repeats on most of its lines.
func intern(b []byte) string {
	switch string(b) {
	case "response_item":
		return "response_item"
	case "event_msg":
		return "event_msg"
	case "turn_context":
		return "turn_context"
	case "session_meta":
		return "session_meta"
	case "message":
		return "message"
	case "reasoning":
		return "reasoning"
	case "function_call":
		return "function_call"
	case "function_call_output":
		return "function_call_output"
	case "custom_tool_call":
		return "custom_tool_call"
	case "custom_tool_call_output":
		return "custom_tool_call_output"
	case "token_count":
		return "token_count"
	case "agent_message":
		return "agent_message"
	case "agent_reasoning":
		return "agent_reasoning"
	case "user_message":
		return "user_message"
	}
	return string(b)
}
