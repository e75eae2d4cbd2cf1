package applypatch

import (
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	cases := []struct{ patch, want string }{
		{"bad", "invalid patch: The first line of the patch must be '*** Begin Patch'"},
		{"*** Begin Patch\n*** Add File: a\n+x", "invalid patch: The last line of the patch must be '*** End Patch'"},
		{"*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch", "invalid patch hunk on line 2: '*** Frobnicate File: foo' is not a valid hunk header."},
		{"*** Begin Patch\n*** Update File: foo\n*** End Patch", "invalid patch hunk on line 2: Update file hunk for path 'foo' is empty"},
		{"*** Begin Patch\n*** Update File: foo\n@@\n-a\n@@\n*** End Patch", "Update hunk does not contain any lines"},
		{"*** Begin Patch\n*** Update File: foo\n-a\n+b\nxyz\n@@ two\n x\nbad\n*** End Patch", "Expected update hunk to start with a @@ context marker, got: 'xyz'"},
		{"*** Begin Patch\n*** Update File: foo\n@@\nbad\n*** End Patch", "Unexpected line found in update hunk: 'bad'"},
	}
	for _, c := range cases {
		_, err := Parse(c.patch)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error = %v, want %q", c.patch, err, c.want)
		}
	}
}

func TestParseLenient(t *testing.T) {
	for _, open := range []string{"<<EOF", "<<'EOF'", `<<"EOF"`} {
		p, err := Parse(open + "\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\nEOF\n")
		if err != nil || len(p.Hunks) != 1 || p.Hunks[0].Contents != "hi\n" {
			t.Errorf("%s: %v %+v", open, err, p)
		}
	}
	if _, err := Parse("<<END\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEND"); err == nil {
		t.Error("only the literal EOF delimiter is lenient")
	}
}

func TestParseShapes(t *testing.T) {
	p, err := Parse("  *** Begin Patch \r\n*** Update File: src/a.go\r\n*** Move to: src/b.go\r\n@@ func main() {\r\n-\told()\r\n+\tnew()\r\n\r\n@@\r\n+tail\r\n*** End of File\r\n*** Delete File: gone\r\n*** Add File: empty\r\n *** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hunks) != 3 {
		t.Fatalf("hunks = %+v", p.Hunks)
	}
	u := p.Hunks[0]
	if u.MovePath != "src/b.go" || len(u.Chunks) != 2 || *u.Chunks[0].Context != "func main() {" || !u.Chunks[1].EOF {
		t.Errorf("update = %+v", u)
	}
	if got := u.Chunks[0].OldLines; len(got) != 2 || got[0] != "\told()" || got[1] != "" {
		t.Errorf("old lines = %q", got)
	}
	if p.Hunks[2].Contents != "" || p.Hunks[2].Line != 12 {
		t.Errorf("empty add = %+v", p.Hunks[2])
	}
	// A pure rename (an Update whose only content is a move) is accepted.
	if _, err := Parse("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch"); err != nil {
		t.Errorf("pure rename: %v", err)
	}
}

func TestInvocation(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"
	cases := []struct {
		name        string
		argv        []string
		ok, interc  bool
		cd          string
		wantPatchIn bool
	}{
		{"argv", []string{"apply_patch", patch}, true, true, "", true},
		{"applypatch", []string{"applypatch", patch}, true, true, "", true},
		{"extra arg", []string{"apply_patch", patch, "x"}, false, false, "", false},
		{"bash heredoc", []string{"bash", "-lc", "apply_patch <<'PATCH'\n" + patch + "PATCH\n"}, true, true, "", true},
		{"space before delim", []string{"/bin/zsh", "-c", "apply_patch << 'PATCH'\n" + patch + "PATCH"}, true, true, "", true},
		{"unquoted delim", []string{"sh", "-c", "applypatch <<EOF\n" + patch + "EOF"}, true, true, "", true},
		{"cd &&", []string{"bash", "-lc", "cd 'my dir' && apply_patch <<'EOF'\n" + patch + "EOF"}, true, true, "my dir", true},
		{"cd ; (not intercepted)", []string{"bash", "-lc", "cd sub; apply_patch <<'EOF'\n" + patch + "EOF"}, true, false, "sub", true},
		{"pipe (not intercepted)", []string{"bash", "-lc", "echo hi | apply_patch <<'EOF'\n" + patch + "EOF"}, true, false, "", true},
		{"trailing command", []string{"bash", "-lc", "apply_patch <<'EOF'\n" + patch + "EOF\necho done"}, true, false, "", true},
		{"powershell", []string{"powershell.exe", "-NoProfile", "-Command", "apply_patch <<'EOF'\n" + patch + "EOF"}, true, true, "", true},
		{"cmd", []string{"cmd.exe", "/c", "apply_patch <<'EOF'\n" + patch + "EOF"}, true, true, "", true},
		{"raw patch", []string{patch}, false, false, "", false},
		{"plain command", []string{"bash", "-lc", "ls -la"}, false, false, "", false},
	}
	for _, c := range cases {
		inv, ok := FromArgv(c.argv)
		if ok != c.ok || inv.Intercepted != c.interc || inv.Cd != c.cd || (c.wantPatchIn && !strings.Contains(inv.Patch, "*** Add File: a")) {
			t.Errorf("%s: got %+v ok=%v", c.name, inv, ok)
		}
	}
}
