package gemini

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tailscale/hujson"
	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/parse/agent"
)

// Retention implements agent.Retainer: with general.sessionRetention
// enabled in settings.json, Gemini CLI deletes chats older than its maxAge
// (30d when not set) at start-up.
func (Agent) Retention(home string) (agent.Retention, bool) {
	p := filepath.Join(home, "settings.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return agent.Retention{}, false
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return agent.Retention{Problem: fmt.Sprintf("%s is not valid JSON (%v): whether Gemini CLI deletes its sessions cannot be told", p, err)}, false
	}
	r := gjson.GetBytes(std, "general.sessionRetention")
	if !r.Get("enabled").Bool() {
		return agent.Retention{}, false
	}
	age, ok := parseAge(r.Get("maxAge").String())
	if !ok {
		age = 30 * 24 * time.Hour
		return agent.Retention{After: age, Setting: "general.sessionRetention in " + p + " (maxAge not set: 30d)"}, true
	}
	return agent.Retention{After: age, Setting: "general.sessionRetention.maxAge in " + p}, true
}

// parseAge reads an age as Gemini CLI writes one: a number and h, d or
// w, as its settings document them.
func parseAge(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n <= 0 {
		return 0, false
	}
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
	if unit == 0 {
		return 0, false
	}
	return time.Duration(n) * unit, true
}
