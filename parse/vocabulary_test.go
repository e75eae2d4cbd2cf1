package parse

import (
	"slices"
	"testing"

	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// TestLostVocabulary: the agents' vocabularies, merged as they register,
// begin with the one a lost line was searched with before each agent
// declared its own (the keys in the same order, since a line's names are
// listed key by key), so a lost line of the first five agents names the
// same files; agents added since only add words.
func TestLostVocabulary(t *testing.T) {
	v := jsonl.Learnt()
	ordered := map[string][2][]string{
		"PathKeys":    {v.PathKeys, {"file_path", "filePath", "notebook_path", "absolute_path", "path"}},
		"CommandKeys": {v.CommandKeys, {"command", "cmd"}},
		"ToolKeys":    {v.ToolKeys, {"name", "tool"}},
		"WorkdirKeys": {v.WorkdirKeys, {"workdir"}},
	}
	for k, p := range ordered {
		if len(p[0]) < len(p[1]) || !slices.Equal(p[0][:len(p[1])], p[1]) {
			t.Errorf("%s = %q, want it to begin with %q", k, p[0], p[1])
		}
	}
	sets := map[string][2][]string{
		"CallTypes+HolderTypes": {append(slices.Clone(v.CallTypes), v.HolderTypes...), {"tool_use", "function_call",
			"custom_tool_call", "local_shell_call", "functionCall", "toolCall", "assistant", "response_item", "message"}},
		"WriteTools": {v.WriteTools, {"write", "edit", "multiedit", "notebookedit", "bash", "powershell", "shell",
			"container.exec", "shell_command", "exec_command", "exec", "apply_patch", "patch", "create_file", "delete_file",
			"local_shell_call", "write_file", "replace", "run_shell_command", "bashExecution"}},
		"WriteTypes":   {v.WriteTypes, {"local_shell_call"}},
		"PatchTools":   {v.PatchTools, {"apply_patch", "patch"}},
		"ArgumentKeys": {v.ArgumentKeys, {"arguments"}},
	}
	for k, p := range sets {
		for _, w := range p[1] {
			if !slices.Contains(p[0], w) {
				t.Errorf("%s = %q, want it to hold %q", k, p[0], w)
			}
		}
	}
}
