// Package claude parses Claude Code session transcripts
// (~/.claude/projects/<dir>/<session>.jsonl and its subagent files) into a
// manifest.Session and its file operations.
//
// A tool call is a tool_use block of an assistant line, paired by id with
// the tool_result of a later user line; an operation is made when the
// result arrives, so operations come in the order the tools ran. Write,
// Edit, MultiEdit and NotebookEdit become operations with their content
// evidence (originalFile, content, updated_file); a Bash command that
// writes files becomes a shell operation; a full-file Read and the
// file-history backups named by file-history-snapshot lines become
// observations. Success follows formats/claude.md §3.6: a rejected, denied,
// cancelled or errored call is never replayed.
package claude
