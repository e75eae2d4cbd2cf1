// Package recover turns file operations back into files on the host.
//
// Reconstruct replays each file's applied operations in transcript order
// with the agent's own semantics (Codex's apply_patch applier, ported
// faithfully and checked against Codex's conformance scenarios), using the
// transcript's content evidence as checkpoints and recording drift where the
// two disagree. Plan compares the result with the host copy, merging
// three ways when the host has moved on. Apply writes through an FS whose
// real implementation is confined to the destination roots and writes
// atomically, and whose dry-run implementation writes nothing; a failed
// apply is rolled back so the host is left as it was.
//
// The package never prints and never reads transcripts: it takes the
// sessions and operations that package parse produced.
package recover
