// Package opencode reads opencode sessions (docs/formats/opencode.md): the
// SQLite database opencode.db (tables session, message and part, each row's
// data a JSON document) through the pure-Go modernc.org/sqlite driver, opened
// read-only, and the legacy file store (storage/session/<project>/<id>.json,
// storage/message/<session>/<id>.json, storage/part/<message>/<id>.json).
//
// Both are turned into one record stream per session, one JSON object per
// line, so that a session is parsed like every other transcript — as a
// stream, in bounded memory, with warnings that locate each problem:
//
//	{"oc":"session","id":…,"directory":…,"version":…,"created":MS,"updated":MS,"revert":{…},"src":FILE}
//	{"oc":"message","id":…,"src":FILE,"data":{…the stored message…}}
//	{"oc":"part","id":…,"message_id":…,"src":FILE,"data":{…the stored part…}}
//	{"oc":"part","id":…,"src":FILE,"bad":"not valid JSON (cut short?)"}
//
// Messages come in id order (opencode's ids ascend in time), each followed
// by its parts in id order. A record's line in the stream is what warnings
// and provenance call its line; a legacy record's warnings name its file.
//
// Stream parses such a stream into file operations: write, edit,
// apply_patch (parsed with the project's Codex grammar) and bash (read with
// a real shell parser), each with its outcome from the part's state and the
// content evidence the metadata holds (filediff before/after, the files of
// an apply_patch, or the diff of newer versions).
package opencode
