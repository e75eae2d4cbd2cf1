package cmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/sandbox/harness"
)

// TestHarnessResumeAgents runs the fake agent as Gemini CLI, pi and Qwen
// Code, with the local runtime (no Docker or bubblewrap needed) and with
// bubblewrap where it can run (the agent at /workspace, HOME the
// workspace): after a run the harness finds the agent's own session id in
// the workspace, --resume passes it back as that CLI expects (gemini
// --resume ID, pi --session ID, qwen --resume ID), the conversation goes
// on, and recover --session gives the file back.
func TestHarnessResumeAgents(t *testing.T) {
	dir := buildFakeAgent(t)
	runtimes := []string{"local"}
	if _, err := exec.LookPath("bwrap"); err == nil {
		if rt, _ := harness.NewRuntime("bwrap", nil); rt.Available(context.Background()) == nil {
			runtimes = append(runtimes, "bwrap")
		}
	}
	for _, runtime := range runtimes {
		for _, agent := range []string{"gemini", "pi", "qwen"} {
			t.Run(runtime+"/"+agent, func(t *testing.T) {
				bin := filepath.Join(dir, agent)
				if _, err := os.Stat(bin); err != nil {
					if err := os.Link(filepath.Join(dir, "claude"), bin); err != nil && !os.IsExist(err) {
						t.Fatal(err)
					}
				}
				resumeScenario(t, runtime, agent)
			})
		}
	}
}

func resumeScenario(t *testing.T, runtime, agent string) {
	h := newHarnessEnv(t, "--runtime", runtime)
	// The agents' own overrides must not send them out of the workspace.
	h.env = append(h.env, "GEMINI_CLI_HOME=", "PI_CODING_AGENT_DIR=", "COPILOT_HOME=", "CRUSH_GLOBAL_DATA=",
		"QWEN_HOME=", "QWEN_RUNTIME_DIR=", "GOOSE_PATH_ROOT=", "FACTORY_HOME_OVERRIDE=")
	out, errOut, code := h.sandbox(nil, "run", "--name", "a1", "--runtime", runtime, "--", agent, "-p", "remember AURORA-42", "--write", "src/"+agent+".txt=hello from "+agent)
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "first run", out, "I will remember AURORA-42.")
	s := h.session("a1")
	if s.AgentSessionID == "" || s.Agent != agent {
		t.Fatalf("session after the first run: agent %q, id %q", s.Agent, s.AgentSessionID)
	}
	out, errOut, code = h.sandbox(nil, "run", "--name", "a1", "--resume", "--", agent, "-p", "what did I ask you to remember?")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "resume", out, "You asked me to remember AURORA-42.")
	if got := h.session("a1").AgentSessionID; got != s.AgentSessionID {
		t.Errorf("resume changed the agent session: %q, was %q", got, s.AgentSessionID)
	}
	p := filepath.Join(h.project, "src", agent+".txt")
	os.Remove(p)
	out, errOut, code = h.sandbox(nil, "recover", "--session", "a1", "--yes")
	if code != 0 {
		t.Fatalf("recover --session a1: exit %d\n%s%s", code, out, errOut)
	}
	if got := string(readFile(p)); got != "hello from "+agent+"\n" {
		t.Errorf("recovered %s = %q", p, got)
	}
}
