package parse

import (
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/claude"
	"github.com/agentsandbox/sandbox/parse/codex"
	"github.com/agentsandbox/sandbox/parse/copilot"
	"github.com/agentsandbox/sandbox/parse/crush"
	"github.com/agentsandbox/sandbox/parse/cursor"
	"github.com/agentsandbox/sandbox/parse/droid"
	"github.com/agentsandbox/sandbox/parse/gemini"
	"github.com/agentsandbox/sandbox/parse/goose"
	"github.com/agentsandbox/sandbox/parse/opencode"
	"github.com/agentsandbox/sandbox/parse/pi"
	"github.com/agentsandbox/sandbox/parse/qwen"
)

// The agents sandbox reads, in the order help texts list them, homes are
// searched, and ties in detection are broken. Adding an agent is its
// package (see docs/architecture.md) and one line here.
func init() {
	agent.Register(
		codex.Agent{},
		claude.Agent{},
		opencode.Agent{},
		gemini.Agent{},
		pi.Agent{},
		copilot.Agent{},
		cursor.Agent{},
		crush.Agent{},
		goose.Agent{},
		qwen.Agent{},
		droid.Agent{},
	)
}
