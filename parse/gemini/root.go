package gemini

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// projectRoot returns the project root Gemini CLI recorded beside a session
// file on the host (onDisk): the .project_root marker of the project's
// temporary directory, <dir>/chats/session-*.jsonl or, for a subagent,
// <dir>/chats/<parent>/<id>.jsonl. Empty when there is none; the parser
// then learns the root from the session itself.
func projectRoot(transcript string, onDisk bool) string {
	if !onDisk {
		return ""
	}
	dir := filepath.Dir(transcript)
	for range 2 {
		if filepath.Base(dir) == "chats" {
			return readRoot(filepath.Join(filepath.Dir(dir), ".project_root"))
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// readRoot reads a .project_root marker: one absolute path, and nothing
// that could not be one.
func readRoot(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	root := strings.TrimSpace(string(b))
	if !path.IsAbs(root) || strings.ContainsAny(root, "\x00\n") {
		return ""
	}
	return path.Clean(root)
}
