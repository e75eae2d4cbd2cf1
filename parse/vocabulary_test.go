package parse

import (
	"slices"
	"testing"

	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// TestLostVocabulary: the agents' vocabularies, merged as they register,
// are the one a lost line was searched with before each agent declared its
// own (the path keys in the same order, since a line's names are listed
// key by key), so a lost line names the same files.
func TestLostVocabulary(t *testing.T) {
	v := jsonl.Learnt()
	ordered := map[string][2][]string{
		"PathKeys":    {v.PathKeys, {"file_path", "filePath", "notebook_path", "absolute_path", "path"}},
		"CommandKeys": {v.CommandKeys, {"command", "cmd"}},
		"ToolKeys":    {v.ToolKeys, {"name", "tool"}},
		"WorkdirKeys": {v.WorkdirKeys, {"workdir"}},
	}
	for k, p := range ordered {
		if !slices.Equal(p[0], p[1]) {
			t.Errorf("%s = %q, want %q", k, p[0], p[1])
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
		got, want := slices.Clone(p[0]), slices.Clone(p[1])
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
