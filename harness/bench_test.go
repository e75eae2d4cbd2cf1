package harness

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchSession makes a session whose workspace holds n Claude transcripts
// of about size bytes each, as a long-lived harness session accumulates.
func benchSession(b *testing.B, n, size int) (*Store, int64) {
	b.Helper()
	st := &Store{Root: b.TempDir()}
	if err := st.Save(&Session{ID: "bench", Name: "bench", Runtime: "local", Project: "/", State: StateExited}); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(st.Home("bench"), ".claude", "projects", "-workspace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	line := `{"type":"assistant","sessionId":"%08d-0000-4000-8000-000000000000","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("the agent explains its plan ", 12) + `"}]}}` + "\n"
	var total int64
	for i := 0; i < n; i++ {
		var buf bytes.Buffer
		for buf.Len() < size {
			fmt.Fprintf(&buf, line, i)
		}
		p := filepath.Join(dir, fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		mt := time.Now().Add(time.Duration(i-n) * time.Minute)
		_ = os.Chtimes(p, mt, mt)
		total += int64(buf.Len())
	}
	return st, total
}

// BenchmarkSnapshot: a 16 MiB workspace (64 transcripts) to a checksummed
// tar.gz.
func BenchmarkSnapshot(b *testing.B) {
	st, total := benchSession(b, 64, 256<<10)
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Snapshot("bench", io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestore: the same snapshot, unpacked, checked and moved into
// place.
func BenchmarkRestore(b *testing.B) {
	st, total := benchSession(b, 64, 256<<10)
	var snap bytes.Buffer
	if _, err := st.Snapshot("bench", &snap, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(total)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := st.Restore(bytes.NewReader(snap.Bytes()), RestoreOptions{Name: fmt.Sprintf("r%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindAgentSession: after every run the harness finds the newest
// transcript among many (2000 here).
func BenchmarkFindAgentSession(b *testing.B) {
	st, _ := benchSession(b, 2000, 512)
	sess := &Session{ID: "bench"}
	b.ReportAllocs()
	for b.Loop() {
		sess.AgentSessionID = "x" // so each pass records the change
		st.FindAgentSession(sess)
	}
	if !strings.HasPrefix(sess.AgentSessionID, "00001999") {
		b.Fatalf("found %q, want the newest", sess.AgentSessionID)
	}
}

// BenchmarkEvent: one fsynced runtime-log event.
func BenchmarkEvent(b *testing.B) {
	st := &Store{Root: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Event("bench", "sandbox_stopped", map[string]any{"exit_code": 3, "last_output": []string{"a", "b"}}); err != nil {
			b.Fatal(err)
		}
	}
}
