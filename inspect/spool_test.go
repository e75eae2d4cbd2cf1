package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/discover"
)

// spoolCorpus is every transcript here that inspect reads: the fixtures'
// corpus, the real sessions of ../shared/corpus (Claude Code's with their
// subagents' transcripts beside them), and the sample.
func spoolCorpus(t *testing.T) []string {
	var files []string
	for _, glob := range []string{"../fixtures/corpus/*/*.json*", "../fixtures/sample/*.jsonl", "../../shared/corpus/*/*.json*", "../../shared/corpus/*/*/*.jsonl"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 60 {
		t.Fatalf("%d transcripts: the corpus was not found", len(files))
	}
	return files
}

// hermetic points every home the code could read at temporary folders.
func hermetic(t *testing.T) {
	t.Helper()
	for _, v := range []string{"HOME", "SANDBOX_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "PI_CODING_AGENT_DIR", "COPILOT_HOME",
		"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMPDIR"} {
		t.Setenv(v, t.TempDir())
	}
}

// TestSpoolEvent round-trips every timeline event of every transcript here
// through the spool's encoding: the same JSON, the same instant and zone
// offset.
func TestSpoolEvent(t *testing.T) {
	hermetic(t)
	n := 0
	for _, f := range spoolCorpus(t) {
		cands, _, err := (&discover.Finder{}).From(f, nil)
		if err != nil || len(cands) == 0 {
			continue
		}
		sel, _, err := parse.Select(cands, parse.Filter{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sel {
			col, err := parse.Collect(context.Background(), &sel[i])
			if err != nil {
				continue
			}
			for _, e := range col.Events {
				sameEvent(t, e)
				n++
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d events", n)
	}
	loc := time.FixedZone("", 5*3600+30*60)
	sameEvent(t, manifest.Event{})
	sameEvent(t, manifest.Event{Kind: "call", Time: time.Date(2026, 1, 2, 3, 4, 5, 6, loc), Ended: time.Date(2026, 1, 2, 3, 4, 5, 7, time.UTC),
		Line: -1, Todos: []manifest.Todo{}, Output: "é\x00\n", OutputCut: true, Sidechain: true})
	sameEvent(t, manifest.Event{Todos: []manifest.Todo{{Text: "a", Status: "done"}, {}}})
}

func sameEvent(t *testing.T, e manifest.Event) {
	t.Helper()
	b := appendEvent(nil, &e)
	var got manifest.Event
	if err := readEvent(b, &got); err != nil {
		t.Fatalf("%+v: %v", e, err)
	}
	w, _ := json.Marshal(e)
	g, _ := json.Marshal(got)
	_, wo := e.Time.Zone()
	_, gomin := got.Time.Zone()
	if !bytes.Equal(w, g) || !got.Time.Equal(e.Time) || wo != gomin || !got.Ended.Equal(e.Ended) || (got.Todos == nil) != (e.Todos == nil) {
		t.Fatalf("spooled event:\n%s\nwant\n%s", g, w)
	}
}

// FuzzSpoolEvent: whatever the bytes, reading an event fails or succeeds,
// never panics; and any event built from them round-trips.
func FuzzSpoolEvent(f *testing.F) {
	f.Add(appendEvent(nil, &manifest.Event{Kind: "call", Tool: "t", Time: time.Unix(1e9, 5), Todos: []manifest.Todo{{Text: "x"}}}), "a", int64(3))
	f.Add([]byte{0xff, 0xff, 0xff}, "", int64(-1))
	f.Fuzz(func(t *testing.T, b []byte, s string, n int64) {
		var e manifest.Event
		_ = readEvent(b, &e)
		e = manifest.Event{Kind: manifest.EventKind(s), Tool: s, Text: s + s, Line: int(n), Time: time.Unix(n, n%1e9), Output: string(b)}
		if n%2 == 0 {
			e.Todos = []manifest.Todo{{Text: s, Status: string(b)}}
		}
		sameEvent(t, e)
	})
}

// TestSpoolUnlinked: the spool file is gone from the directory as soon as
// it is made, so nothing is left behind, whatever ends the process.
func TestSpoolUnlinked(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	sp, err := NewSpool()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	done := sp.session()
	sp.add(&manifest.Event{Kind: "turn", Text: "hello", Line: 2})
	sp.add(&manifest.Event{Kind: "turn", Text: "first", Line: 1})
	done("s", nil, time.Unix(100, 0))
	if err := sp.finish(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	var texts []string
	for e := range sp.all() {
		texts = append(texts, e.Text+"@"+e.Time.UTC().Format(time.RFC3339)+"/"+e.Session)
	}
	if strings.Join(texts, " ") != "first@1970-01-01T00:01:40Z/s hello@1970-01-01T00:01:40Z/s" || sp.err != nil {
		t.Errorf("read back %q, %v", texts, sp.err)
	}
}
