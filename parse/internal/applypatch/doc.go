// Package applypatch parses the Codex apply_patch envelope
// ("*** Begin Patch" … "*** End Patch") exactly as Codex accepts it, including
// its lenient rules (whitespace-padded markers, a heredoc wrapper passed as the
// patch, a first chunk without "@@"), and extracts patches from the shell
// commands that Codex intercepts as apply_patch.
//
// Parse returns a *ParseError carrying the 1-based line of the patch text at
// fault; the messages match Codex's own so that they can be compared with a
// transcript's recorded failure.
package applypatch
