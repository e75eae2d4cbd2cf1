package parse

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
)

// firstSessionID returns the sessionId of a Claude transcript's first
// lines.
func firstSessionID(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, buf)
	h := readHead(buf[:n])
	a, ok := agent.Named(manifest.AgentClaude)
	if !ok {
		return ""
	}
	return h.id(a)
}

// companions returns the subagent transcripts of a Claude Code session
// file (formats/claude.md §1.4): <session>/subagents/agent-*.jsonl, and the
// legacy agent-*.jsonl beside it whose lines carry the session's id. A file
// that is not a Claude main transcript has none.
func companions(name string) []string {
	return (&companionFinder{}).find(name)
}

// companionFinder finds the companions of many sessions, listing each
// directory's legacy agent-*.jsonl files and reading each one's session id
// once: a project directory holds many sessions, and a home many projects.
type companionFinder struct {
	legacy map[string][]string // directory -> its agent-*.jsonl files
	ids    map[string]string   // agent file -> its session id
}

func (cf *companionFinder) find(name string) []string {
	if name == "-" || strings.HasPrefix(filepath.Base(name), "agent-") {
		return nil
	}
	if cf.legacy == nil {
		cf.legacy, cf.ids = map[string][]string{}, map[string]string{}
	}
	dir := filepath.Dir(name)
	stem := strings.TrimSuffix(filepath.Base(name), ".jsonl")
	var out []string
	sub, _ := filepath.Glob(filepath.Join(dir, stem, "subagents", "agent-*.jsonl"))
	out = append(out, sub...)
	legacy, listed := cf.legacy[dir]
	if !listed {
		legacy, _ = filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
		cf.legacy[dir] = legacy
	}
	// The session's own id is read only when there is a legacy file to
	// match it with (most homes have none).
	if len(legacy) > 0 {
		if id := firstSessionID(name); id != "" {
			for _, l := range legacy {
				lid, ok := cf.ids[l]
				if !ok {
					lid = firstSessionID(l)
					cf.ids[l] = lid
				}
				if lid == id {
					out = append(out, l)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
