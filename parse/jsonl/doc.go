// Package jsonl reads JSON Lines transcripts as a stream of records, fast and
// without losing anything around physical damage.
//
// Lines may be of any length (memory is bounded by the longest line). Each
// line is checked for the damage real transcripts show: blank lines, NUL
// padding left by a crash, a truncated last line, two records glued on one
// line ("}{"), a line that is not a JSON object. Damage becomes a Warning with
// the file, the 1-based line and the byte offset; reading goes on, and every
// intact record before and after the damage is returned.
//
// The check is structural (strings, escapes and nesting), not a full JSON
// validation, so that lines a reader will skip cost one pass over memory.
// Callers that act on a record validate it fully.
package jsonl
