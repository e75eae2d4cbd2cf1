package cmd

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptsStateExitCodes keeps the scripts honest about failures: a
// command expected to fail says with which exit code (exits N sandbox …),
// since "! exec" accepts any failure, a crash included. The only "! exec"
// allowed is in a paragraph whose comment says "Exit code left open" and
// why (a code under discussion).
func TestScriptsStateExitCodes(t *testing.T) {
	t.Parallel()
	scripts, _ := filepath.Glob("testdata/script/*.txtar")
	if len(scripts) == 0 {
		t.Fatal("no scripts")
	}
	for _, name := range scripts {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		// The script is what comes before the first file of the archive.
		if i := bytes.Index(data, []byte("\n-- ")); i >= 0 {
			data = data[:i]
		}
		open := false
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			switch {
			case line == "":
				open = false // a paragraph ends
			case strings.HasPrefix(line, "#") && strings.Contains(line, "Exit code left open"):
				open = true
			case strings.HasPrefix(line, "! exec ") && !open:
				t.Errorf("%s:%d: %q accepts any failure: say which with exits N", name, n, line)
			}
		}
	}
}
