package volume

import (
	"archive/tar"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/harness"
)

// tarOf is a tar stream of entries: name -> content ("->x" makes a link
// to x, a name ending in / a folder).
func tarOf(t testing.TB, entries ...[2]string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e[0], Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e[1]))}
		switch {
		case strings.HasSuffix(e[0], "/"):
			h.Typeflag, h.Size, h.Mode = tar.TypeDir, 0, 0o755
		case strings.HasPrefix(e[1], "->"):
			h.Typeflag, h.Size, h.Linkname = tar.TypeSymlink, 0, e[1][2:]
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = tw.Write([]byte(e[1]))
		}
	}
	_ = tw.Close()
	return b.Bytes()
}

// TestReadBack: HOME's entries land in the root, links that would lead out
// of it are not followed, and the project's changes (changed, new,
// deleted; unchanged files left out) are returned against what was copied
// in.
func TestReadBack(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	_ = os.Mkdir(outside, 0o755)
	_ = os.Mkdir(filepath.Join(dir, "home"), 0o755)
	root, err := os.OpenRoot(filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	was := &Sent{Files: map[string]Entry{
		"same.txt": {Type: "file", SHA256: SHA("same\n")},
		"edit.txt": {Type: "file", SHA256: SHA("old\n")},
		"gone.txt": {Type: "file", SHA256: SHA("bye\n")},
	}}
	stream := tarOf(t,
		[2]string{"home/", ""}, [2]string{"home/.claude/projects/x.jsonl", "{}\n"},
		[2]string{"home/out", "->" + outside}, [2]string{"home/out/planted", "no"},
		[2]string{"home/../escape", "no"},
		[2]string{"project/same.txt", "same\n"}, [2]string{"project/edit.txt", "new\n"}, [2]string{"project/add.txt", "add\n"},
		[2]string{"project/link", "->/etc/passwd"}, [2]string{"project/.sandbox/journal/x/journal.jsonl", "not the project's"})
	files, skipped, err := ReadBack(bytes.NewReader(stream), root, was)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := root.ReadFile(".claude/projects/x.jsonl"); string(b) != "{}\n" {
		t.Errorf("HOME's transcript: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("a link in HOME led a write outside it: %v", entries)
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "out/planted") {
		t.Errorf("skipped %v", skipped)
	}
	got := map[string]string{}
	for _, f := range files {
		got[f.Path] = string(f.Final.State)
	}
	// home/../escape is /escape: neither HOME nor the project.
	want := map[string]string{"/workspace/edit.txt": "content", "/workspace/add.txt": "content", "/workspace/gone.txt": "absent"}
	if len(got) != len(want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	for p, st := range want {
		if got[p] != st {
			t.Errorf("%s: %q, want %q", p, got[p], st)
		}
	}
}

// FuzzReadBack: whatever the volume's stream holds (the agent controls
// it), reading it back never panics, never writes outside HOME's root,
// and returns only project paths under /workspace.
func FuzzReadBack(f *testing.F) {
	f.Add(tarOf(f, [2]string{"home/a", "x"}, [2]string{"project/b", "y"}))
	f.Add(tarOf(f, [2]string{"home/l", "->/"}, [2]string{"home/l/x", "y"}, [2]string{"project/../../z", "q"}))
	f.Add(tarOf(f, [2]string{"home/d/", ""}, [2]string{"home/d", "file over a folder"}, [2]string{"home/d/", ""}))
	f.Fuzz(func(t *testing.T, stream []byte) {
		dir := t.TempDir()
		_ = os.Mkdir(filepath.Join(dir, "home"), 0o755)
		_ = os.Mkdir(filepath.Join(dir, "outside"), 0o755)
		root, err := os.OpenRoot(filepath.Join(dir, "home"))
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		was := &Sent{Files: map[string]Entry{"b": {Type: "file", SHA256: SHA("y")}}}
		files, _, _ := ReadBack(bytes.NewReader(stream), root, was)
		for _, f := range files {
			if !strings.HasPrefix(f.Path, harness.GuestWorkspace+"/") || path.Clean(f.Path) != f.Path {
				t.Fatalf("a project path %q", f.Path)
			}
		}
		for _, d := range []string{dir, filepath.Join(dir, "outside")} {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if d == dir && (e.Name() == "home" || e.Name() == "outside") {
					continue
				}
				t.Fatalf("%s was written outside HOME", filepath.Join(d, e.Name()))
			}
		}
	})
}
