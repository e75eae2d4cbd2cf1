package jsonl

// The tests of this package search lost lines with the vocabulary of the
// formats they are written in (Claude Code, Codex, Gemini CLI, pi,
// opencode), as the agents teach it when they register (Learn); the
// registry's own is held to the same lines by parse's tests.
func init() {
	Learn(Vocabulary{PathKeys: []string{"file_path", "filePath", "notebook_path", "absolute_path", "path"},
		CommandKeys: []string{"command", "cmd"}, WorkdirKeys: []string{"workdir"}, ToolKeys: []string{"name", "tool"},
		CallTypes:   []string{"tool_use", "function_call", "custom_tool_call", "local_shell_call", "functionCall", "toolCall"},
		HolderTypes: []string{"assistant", "response_item", "message"},
		WriteTools: []string{"write", "edit", "multiedit", "notebookedit", "bash", "powershell", "shell", "container.exec",
			"shell_command", "exec_command", "exec", "apply_patch", "patch", "create_file", "delete_file", "local_shell_call",
			"write_file", "replace", "run_shell_command", "bashexecution"},
		WriteTypes: []string{"local_shell_call"}, PatchTools: []string{"apply_patch", "patch"}, ArgumentKeys: []string{"arguments"}})
}
