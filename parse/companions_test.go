package parse

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCompanionsShareADirectory: sessions of one project directory, read
// by one finder (which lists the directory and reads each legacy agent
// file's id once), each get their own legacy agent files and no other's.
func TestCompanionsShareADirectory(t *testing.T) {
	dir := t.TempDir()
	line := func(id string) string {
		return `{"type":"user","sessionId":"` + id + `","cwd":"/w","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-11-20T09:00:00Z"}` + "\n"
	}
	files := map[string]string{
		"s1.jsonl": line("11111111-1111-1111-1111-111111111111"), "s2.jsonl": line("22222222-2222-2222-2222-222222222222"),
		"agent-a.jsonl": line("11111111-1111-1111-1111-111111111111"), "agent-b.jsonl": line("22222222-2222-2222-2222-222222222222"),
		"agent-c.jsonl": line("11111111-1111-1111-1111-111111111111"), "s3.jsonl": line("33333333-3333-3333-3333-333333333333"),
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cf companionFinder
	p := func(n ...string) []string {
		var out []string
		for _, x := range n {
			out = append(out, filepath.Join(dir, x))
		}
		return out
	}
	for _, c := range []struct {
		session string
		want    []string
	}{
		{"s1.jsonl", p("agent-a.jsonl", "agent-c.jsonl")},
		{"s2.jsonl", p("agent-b.jsonl")},
		{"s3.jsonl", nil},
		{"s1.jsonl", p("agent-a.jsonl", "agent-c.jsonl")},
	} {
		got := cf.find(filepath.Join(dir, c.session))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.session, got, c.want)
		}
		if alone := companions(filepath.Join(dir, c.session)); !reflect.DeepEqual(alone, c.want) {
			t.Errorf("%s alone: %q, want %q", c.session, alone, c.want)
		}
	}
}
