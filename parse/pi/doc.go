// Package pi parses pi coding agent sessions (docs/formats/pi.md): JSON
// Lines, a "session" header with the working directory, then entries that
// form a tree by id and parentId (version 2 and 3; version 1 files are a
// plain list). The last entry is the session's current position; entries
// off the path from it to the root are on abandoned branches. Their tool
// calls happened on disk, so they are kept (as Claude Code's rewound
// branches are) and reported.
//
// Operations are the write, edit and bash tool calls (and the user's own
// "!" bash commands) paired with their results.
package pi
