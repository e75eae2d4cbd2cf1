// Package codex parses OpenAI Codex CLI rollouts (all three layouts: the
// wrapper lines of 2025-09 onwards, the legacy JSONL with record_type lines,
// and the early single-JSON rollout-*.json) into a manifest.Session and its
// file operations.
//
// Every carrier of an apply_patch is recognised (custom and function tool
// calls, shell argv and heredocs, shell_command, exec_command,
// local_shell_call, code-mode exec, Responses-API apply_patch_call items);
// other shell commands that write files become shell operations. The
// outcome of each call is decided from patch_apply_end when the rollout has
// it and from the tool output otherwise (formats/codex.md §3.9); content the
// rollout holds (an Add's content, a delete's pre-image, an update's diff)
// is attached as evidence.
package codex
