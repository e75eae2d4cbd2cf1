// Package gemini parses Gemini CLI session files (docs/formats/gemini.md):
// the legacy single-JSON session-*.json, rewritten in place, and the
// current JSON Lines session-*.jsonl, in which a message is appended again
// each time it changes, "$set" records update the metadata (or replace the
// whole message list) and "$rewindTo" records cut the conversation back.
//
// Operations are write_file, replace and the run_shell_command calls that
// write files, each handed on once its call reaches a final status
// (success, error, cancelled), with the content the tool recorded in its
// resultDisplay as evidence. Gemini sessions do not record their working
// directory; it is recovered from the absolute paths in the tools' results,
// checked against the session's projectHash (the sha256 of the project
// root).
package gemini
