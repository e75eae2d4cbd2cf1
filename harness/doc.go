// Package harness is the runtime that launches agents in sandboxes (Docker,
// Podman, bubblewrap, or explicitly none) with a per-session workspace on
// the host as their HOME, so their transcripts and files survive the
// sandbox, the agent can resume its conversation, and every exit leaves a
// durable record of what happened (DESIGN.md, "Harness runtime").
//
// State lives under $SANDBOX_HOME (default $XDG_STATE_HOME/sandbox, i.e.
// ~/.local/state/sandbox): sessions/<id>/{session.json, home/,
// logs/runtime.jsonl, logs/output.log, manifest.json}.
package harness
