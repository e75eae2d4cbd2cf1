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
//
// It also reads the top-level fields of a JSON object in one pass (Object,
// Doc), and keeps sets of 64-bit id hashes (HashSet), for the parsers
// whose records carry whole files (a tool call's arguments, a message):
// gjson finds a key by reading every byte before it, and such a record was
// looked into a dozen times. A value found is read exactly as gjson reads
// it, so what a field means is unchanged. Strings handed out in place
// (Within, Raw) are valid while the record is: during the callback, or
// until the next record is read; Str and Text copy.
package jsonl
