package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzRead reads any bytes as a manifest, as apply reads whatever an agent
// or a pipeline hands it. Every input is an error or a manifest, and a
// manifest is one the Writer writes back as it was read:
//   - the sessions are reported once, before any file;
//   - writing what was read and reading it again gives the same sessions,
//     operations and files, and writing those gives the same bytes.
//
// Reading writes nothing: the Reader has no filesystem to write to, and the
// callbacks here only collect.
func FuzzRead(f *testing.F) {
	ops, sessions, files, reds := sampleManifest()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, op := range ops {
		_ = w.Op(op)
	}
	_ = w.Close(sessions, files, reds)
	f.Add(buf.Bytes())
	for _, doc := range []string{
		`{"session": "task1", "cwd": "/workspace", "exports": [{"path": "/workspace/report.txt", "content": "all tests passed\n", "type": "file"}, {"path": "dist/app.bin", "content": "AAEC/w==", "encoding": "base64"}, {"path": "old.txt", "type": "delete"}]}`,
		`{"exports": [{"path": "../x", "content": "1"}, {"path": "/etc/x", "type": "adr"}], "session": "s", "cwd": "/w"}`,
		`{"schema": "sandbox.manifest/v1", "files": [], "sessions": []}`,
	} {
		f.Add([]byte(doc))
	}
	// The manifests the export scripts and docs show.
	for _, pat := range []string{"../cmd/testdata/script/*.txtar", "../docs/manifest.md"} {
		names, _ := filepath.Glob(pat)
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			for _, part := range bytes.Split(data, []byte("\n-- ")) {
				if i := bytes.Index(part, []byte("\n{")); i >= 0 && len(part) < 32<<10 {
					f.Add(part[i+1:])
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readAll(data)
		if err != nil {
			return
		}
		if got.SessionsCalls != 1 || got.FileBeforeSessions {
			t.Fatalf("sessions reported %d times, before a file: %v", got.SessionsCalls, got.FileBeforeSessions)
		}
		var once bytes.Buffer
		w := NewWriter(&once)
		for _, op := range got.Ops {
			if err := w.Op(op); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(got.Sessions, got.Files, nil); err != nil {
			t.Fatal(err)
		}
		again, err := readAll(once.Bytes())
		if err != nil {
			t.Fatalf("the Writer wrote what the Reader refuses: %v\n%s", err, once.Bytes())
		}
		if !sameJSON(again.Ops, got.Ops) || !sameJSON(again.Files, got.Files) || !sameJSON(nonNil(again.Sessions), nonNil(got.Sessions)) {
			t.Fatalf("read back differently:\n%s", once.Bytes())
		}
		var twice bytes.Buffer
		w = NewWriter(&twice)
		for _, op := range again.Ops {
			_ = w.Op(op)
		}
		_ = w.Close(again.Sessions, again.Files, nil)
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatalf("written twice, the manifest differs:\n%s\n%s", once.Bytes(), twice.Bytes())
		}
	})
}

// sameJSON compares values as the manifest stores them: two readings of
// one document may differ in Go (a nil slice and an empty one) but never
// in JSON.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && (bytes.Equal(ja, jb) || reflect.DeepEqual(a, b))
}

func nonNil(s []Session) []Session {
	if s == nil {
		return []Session{}
	}
	return s
}
