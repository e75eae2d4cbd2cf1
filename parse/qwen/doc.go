// Package qwen parses Qwen Code sessions (docs/formats/qwen.md): JSON Lines
// in ~/.qwen/projects/<sanitised cwd>/chats/<session id>.jsonl (and a
// subagent's in subagents/<parent>/agent-<id>.jsonl), one record a line,
// each {uuid, parentUuid, sessionId, timestamp, type, cwd, version, …}.
// Qwen Code forked Gemini CLI but records a Claude-Code-like tree: the
// model's calls are functionCall parts of assistant records, and each
// call's outcome is a tool_result record of its own whose toolCallResult
// names the call and its status.
//
// Operations are the file-changing calls: write_file (a whole file,
// written with the line endings and BOM of the file it replaces), edit
// (Qwen's string replacement, replayed with its own matching rules:
// manifest.RuleQwen), the legacy replace (Gemini's), whole-file read_file
// results as evidence, and the commands of run_shell_command that write. A
// call without a result is of unknown outcome; a cancelled one was
// declined (or stopped while running, for a command); an error failed, as
// does a command whose output ends in a non-zero "Exit Code:".
package qwen
