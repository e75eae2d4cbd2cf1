// Package harness will hold the runtime that launches agents in sandboxes
// (Docker, Podman, bubblewrap) with a per-session workspace as their HOME,
// so that their transcripts and files survive the sandbox (DESIGN.md,
// "Harness runtime"). It is empty until that work lands.
package harness
