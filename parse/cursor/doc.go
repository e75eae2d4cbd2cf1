// Package cursor parses Cursor CLI agent transcripts
// (docs/formats/cursor.md): JSON Lines in
// ~/.cursor/projects/<project>/agent-transcripts/<chat id>.jsonl, one model
// turn a line, {"role": "user"|"assistant", "message": {"content": [...]}}.
//
// The transcript records the calls (Write, StrReplace, Delete, Shell) but
// no result, no id and no time: every operation is of unknown outcome (the
// user may have rejected it, it may have failed), replayed only when asked
// (--unknown apply) and never graded exact. The working directory is not
// recorded either: it is found from the project folder's name, which is
// the directory with every other character than a letter or digit made a
// dash, matched against the paths the calls name.
package cursor
