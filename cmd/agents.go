package cmd

import (
	"strings"

	"github.com/agentsandbox/sandbox/parse/agent"
)

// The CLI knows agents only through the registry (parse/agent): their
// names for --agent and completion, and what help texts say of each.

// agentNames are the registered agents' names, in the registry's order.
func agentNames() []string { return agent.Names() }

// agentTitles lists the agents as people write them: "OpenAI Codex CLI,
// Claude Code, …".
func agentTitles() string {
	var t []string
	for _, a := range agent.All() {
		t = append(t, a.About().Title)
	}
	return andList(t)
}

// agentSessions says what sandbox reads of each agent and where.
func agentSessions() string {
	var t []string
	for _, a := range agent.All() {
		t = append(t, a.About().Sessions)
	}
	return strings.Join(t, ", ")
}

// agentHomes says where each agent's sessions are looked for.
func agentHomes() string {
	var t []string
	for _, a := range agent.All() {
		t = append(t, a.About().Home)
	}
	return strings.Join(t, ", ")
}

// agentResumes says how each agent is resumed.
func agentResumes() string {
	var t []string
	for _, a := range agent.All() {
		t = append(t, a.About().Resume)
	}
	return strings.Join(t, ", ")
}

// knownAgent says whether name is a registered agent.
func knownAgent(name string) bool {
	for _, n := range agentNames() {
		if n == name {
			return true
		}
	}
	return false
}

func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// reflow wraps the prose paragraphs of a help text at 80 columns (those
// that name the agents are built from the registry, so their line breaks
// cannot be written by hand); a paragraph with an indented line (an
// example, a list) is left as it is.
func reflow(text string) string {
	paras := strings.Split(text, "\n\n")
	for i, p := range paras {
		indented := false
		for _, l := range strings.Split(p, "\n") {
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") {
				indented = true
			}
		}
		if indented {
			continue
		}
		var b strings.Builder
		col := 0
		for _, w := range strings.Fields(p) {
			switch {
			case col == 0:
			case col+1+len(w) > 80:
				b.WriteByte('\n')
				col = 0
			default:
				b.WriteByte(' ')
				col++
			}
			b.WriteString(w)
			col += len(w)
		}
		paras[i] = b.String()
	}
	return strings.Join(paras, "\n\n")
}
