// Package copilot parses GitHub Copilot CLI sessions
// (docs/formats/copilot.md): JSON Lines in
// ~/.copilot/session-state/<session id>/events.jsonl, one event a line,
// each {type, data, id, timestamp, parentId}. The first is session.start,
// with the working directory in data.context.cwd.
//
// Operations are the file-changing tool calls, each a tool.execution_start
// paired by its toolCallId with a tool.execution_complete: create (a whole
// file), edit (an exact, unique string replacement, with the unified diff
// Copilot recorded as evidence), apply_patch (Codex's patch format), and
// the commands of bash and powershell that write. A call without its
// complete is of unknown outcome; a refused one (error code rejected or
// denied) is rejected; a shell call that exited non-zero failed.
// Subagents write into the same file, so their calls are read as the main
// agent's are.
package copilot
