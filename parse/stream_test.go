package parse

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/agentsandbox/sandbox/manifest"
)

const sample = "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl"

func drain(t *testing.T, name string) ([]manifest.Op, manifest.Session) {
	t.Helper()
	s, err := OpenStream(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hdr := s.Header()
	if hdr.Cwd != "/workspace" || hdr.ID == "" {
		t.Errorf("%s: header %+v", name, hdr)
	}
	var ops []manifest.Op
	for {
		op, ok := s.Next()
		if !ok {
			break
		}
		op.Provenance.Transcript = ""
		ops = append(ops, op)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return ops, s.Session()
}

// TestCompressed checks that gzip and zstd rollouts, recognised by content
// whatever their names, give exactly the operations of the plain file.
func TestCompressed(t *testing.T) {
	plain, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(plain)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(plain)
	zw.Close()
	files := map[string][]byte{"r.jsonl.gz": gz.Bytes(), "r.jsonl.zst": zs.Bytes(), "renamed.bin": zs.Bytes()}
	want, wantSess := drain(t, sample)
	if len(want) != 6 {
		t.Fatalf("sample has %d ops", len(want))
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, sess := drain(t, p)
		if !reflect.DeepEqual(got, want) || sess.ID != wantSess.ID || sess.Lines != wantSess.Lines {
			t.Errorf("%s: %d ops, session %+v", name, len(got), sess)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello\n"), 0o644)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	for name, want := range map[string]string{
		filepath.Join(dir, "missing.jsonl"): "no such file",
		notes:                               "not a transcript of a known agent",
		empty:                               "empty file",
	} {
		if _, err := OpenStream(context.Background(), name, nil); err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}

func TestDetect(t *testing.T) {
	cases := map[string]manifest.Agent{
		`{"timestamp":"x","type":"session_meta","payload":{}}`:                     manifest.AgentCodex,
		`{"timestamp": "x", "type": "response_item", "payload": {}}`:               manifest.AgentCodex,
		"{\n  \"session\": {\"id\": \"x\"},\n  \"items\": []\n}":                   manifest.AgentCodex,
		`{"id":"a","timestamp":"t","instructions":""}`:                             manifest.AgentCodex,
		`{"parentUuid":null,"sessionId":"s","type":"user"}`:                        manifest.AgentClaude,
		"# Notes\nA line looks like `{\"type\":\"session_meta\",\"payload\":{}}`.": "",
		"plain text": "",
	}
	for in, want := range cases {
		got, ok := detect([]byte(in))
		if got != want || ok != (want != "") {
			t.Errorf("Detect(%.40q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
