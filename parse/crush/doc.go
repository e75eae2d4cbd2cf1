// Package crush reads Crush (charmbracelet/crush) sessions: every session
// of a project lives in one SQLite database, <project>/.crush/crush.db, and
// the projects are listed in projects.json in Crush's global data
// directory (docs/formats/crush.md). A session's rows are read as a record
// stream (store.go), which the parser turns into operations (parser.go):
// write, edit, multiedit and bash, with the whole file before and after
// each edit that Crush records, and every outcome its tool messages tell.
package crush
