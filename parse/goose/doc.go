// Package goose reads Goose (Block's agent) sessions, in both of the
// places Goose kept them (docs/formats/goose.md): the SQLite database
// <data>/sessions/sessions.db of Goose 1.10 and later, whose sessions are
// read as record streams (store.go), and the legacy <name>.jsonl files of
// earlier versions (a metadata line, then one message per line), which
// are read as they are. The parser (parser.go) pairs each tool request
// with its response and turns the developer extension's tools into
// operations: text_editor write, str_replace (its diff form too), insert,
// undo_edit and whole-file views, the newer write and edit, and shell,
// with every outcome a response tells.
package goose
