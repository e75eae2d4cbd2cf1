// Package droid parses Factory Droid sessions (docs/formats/droid.md): JSON
// Lines in ~/.factory/sessions/<sanitised cwd>/<session id>.jsonl (or
// directly in sessions/, an earlier layout). The first record is
// session_start, with the session id and working directory; the others
// that matter are message records whose inner message is Anthropic-shaped:
// an assistant's tool_use blocks, answered by tool_result blocks (paired
// by id) in a later user message.
//
// Operations are the file-changing tool calls: Create and Write (a whole
// file), Edit and MultiEdit (exact string replacements, in Droid's
// old_str/new_str/change_all spelling or Claude Code's), ApplyPatch
// (Codex's patch format, with the per-file content its result may give as
// evidence), the commands of Execute that write, and NotebookEdit (a
// change the replay cannot make). A whole-file Read is a partial view of
// the file only: Droid's read output is not known well enough to pin a
// file. A result with is_error failed, or was rejected when its text says
// the user or a hook refused it; a call without a result is of unknown
// outcome. No real Droid transcript is public: the shapes read here come
// from readers of Droid's files, and the grading says so.
//
// A subagent (a Worker started by Task) writes a session file of its own,
// whose session_start names the calling session (callingSessionId): it is
// read as any session, with the caller as the one it came from.
package droid
