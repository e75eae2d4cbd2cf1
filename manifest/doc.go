// Package manifest is the data model shared by every part of sandbox: the
// sessions found in transcripts, the file operations they hold, the content
// evidence that pins a file's state, and the export manifest that carries them
// between machines.
//
// It depends on nothing inside the project; parse produces these values and
// recover consumes them.
package manifest
