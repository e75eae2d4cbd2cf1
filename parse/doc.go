// Package parse turns agent transcripts into sessions and file operations.
// It recognises the transcript's agent by content, opens compressed files
// transparently, and parses several files in parallel while keeping each
// file's operations in line order.
//
// Sub-packages hold one parser per agent format (codex), the apply_patch
// grammar (applypatch), the streaming JSON Lines reader (jsonl) and the
// shell-write recogniser (shellcmd).
package parse
