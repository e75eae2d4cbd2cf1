package parse

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/agent"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/jsonl"
)

// transcriptFile is a JSONL transcript of the corpus or the fixtures, read
// whole, with its agent.
type transcriptFile struct {
	path  string
	data  []byte
	agent manifest.Agent
}

// jsonlTranscripts reads the JSONL transcripts the globs name (opencode's
// excepted: a database or export, not lines) and at least min of them.
func jsonlTranscripts(t *testing.T, least int, globs ...string) []transcriptFile {
	t.Helper()
	var out []transcriptFile
	for _, glob := range globs {
		m, _ := filepath.Glob(glob)
		for _, f := range m {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			agent, ok := detect(data[:min(len(data), 64<<10)])
			if ok && agent != manifest.AgentOpencode {
				out = append(out, transcriptFile{f, data, agent})
			}
		}
	}
	if len(out) < least {
		sharedMissing(t, "../../shared/corpus")
		t.Fatalf("%d transcripts: the corpus was not found", len(out))
	}
	return out
}

var allJSONL = []string{"../fixtures/corpus/*/*.jsonl", "../fixtures/sample/*.jsonl", "../../shared/corpus/*/*.jsonl", "../../shared/corpus/*/*/*.jsonl"}

// TestCutAnywhereIsTruncated cuts every real and fixture JSONL transcript
// here in the middle of a line, at many places, and requires each cut to
// read as truncated: the end state that tells the user the session was
// still writing when it died, whatever part of a record the cut left whole
// (a record's nested objects are read as records after damage).
func TestCutAnywhereIsTruncated(t *testing.T) {
	cuts := 0
	files := jsonlTranscripts(t, 90, allJSONL...)
	for _, tf := range files {
		f, data, ag := tf.path, tf.data, tf.agent
		for k := 1; k <= 24; k++ {
			at := len(data) * k / 25
			// Only a cut inside a record: the line's start to the cut is
			// neither empty nor a whole object.
			ls := bytes.LastIndexByte(data[:at], '\n') + 1
			le := bytes.IndexByte(data[at:], '\n')
			if le < 0 {
				le = len(data)
			} else {
				le += at
			}
			part := bytes.TrimSpace(data[ls:at])
			whole := bytes.TrimSpace(data[ls:le])
			if len(part) == 0 || len(part) == len(whole) || !json.Valid(whole) || ls == 0 {
				continue
			}
			s, err := parseAs(context.Background(), ag, bytes.NewReader(data[:at]), agent.Transcript{Name: "cut.jsonl"}, emit.Handler{Op: func(manifest.Op) {}})
			if err != nil {
				t.Fatalf("%s cut at %d: %v", f, at, err)
			}
			cuts++
			if s.EndState != manifest.EndTruncated {
				var ws []string
				for _, w := range s.Warnings {
					ws = append(ws, w.String())
				}
				t.Errorf("%s cut at byte %d (line %d, %q…): end state %s, warnings:\n%s", f, at, bytes.Count(data[:at], []byte("\n"))+1,
					part[:min(len(part), 60)], s.EndState, strings.Join(ws, "\n"))
			}
		}
	}
	if cuts < 500 {
		t.Fatalf("only %d cuts of %d files: the transcripts were not found", cuts, len(files))
	}
	t.Logf("%d cuts of %d files", cuts, len(files))
}

// TestSpliceAnywhereKeepsTheNextRecord cuts a line of every JSONL
// transcript here at several places and glues the next line to it, as a
// writer that crashed mid-record and was started again leaves it: every
// operation that the transcript without the cut line gives must still be
// read (the glued record is found past the damage), with a warning for
// the line. A cut inside a string reads the glued record's quotes inside
// out; brackets alone can balance them.
func TestSpliceAnywhereKeepsTheNextRecord(t *testing.T) {
	files := jsonlTranscripts(t, 90, allJSONL...)
	ops := func(ag manifest.Agent, data []byte) (map[string]int, manifest.Session) {
		got := map[string]int{}
		s, err := parseAs(context.Background(), ag, bytes.NewReader(data), agent.Transcript{Name: "splice.jsonl"}, emit.Handler{Op: func(op manifest.Op) {
			op.Provenance.Offset, op.Seq = 0, 0
			b, _ := json.Marshal(op)
			got[string(b)]++
		}})
		if err != nil {
			t.Fatal(err)
		}
		return got, s
	}
	splices := 0
	for _, tf := range files {
		f, data, ag := tf.path, tf.data, tf.agent
		lines := bytes.SplitAfter(data, []byte("\n"))
		for k := 1; k+1 < len(lines); k += max(1, len(lines)/6) {
			line := bytes.TrimRight(lines[k], "\r\n")
			if len(line) < 20 || !bytes.HasSuffix(lines[k], []byte("\n")) {
				continue
			}
			without := bytes.Join(append(append([][]byte{}, lines[:k]...), lines[k+1:]...), nil)
			want, _ := ops(ag, without)
			for _, frac := range []int{3, 2} {
				cut := len(line) * (frac - 1) / frac
				spliced := bytes.Join(append(append(append([][]byte{}, lines[:k]...), line[:cut]), lines[k+1:]...), nil)
				got, s := ops(ag, spliced)
				splices++
				for op, n := range want {
					if got[op] < n {
						t.Errorf("%s: line %d cut at byte %d, line %d glued to it: lost %.300s", f, k+1, cut, k+2, op)
					}
				}
				warned := false
				for _, w := range s.Warnings {
					warned = warned || w.Line == k+1
				}
				if !warned {
					t.Errorf("%s: line %d cut at byte %d, line %d glued to it: no warning for line %d", f, k+1, cut, k+2, k+1)
				}
			}
		}
	}
	if splices < 500 {
		t.Fatalf("only %d splices of %d files", splices, len(files))
	}
	t.Logf("%d splices of %d files", splices, len(files))
}

// TestCompressedCutIsTruncated cuts the .gz and .zst of every JSONL
// transcript here at several places: each reads without an error (as the
// plain file cut short does, inspect included) and ends truncated; the
// decompressor's unexpected EOF is the file's end, cut off.
func TestCompressedCutIsTruncated(t *testing.T) {
	files := jsonlTranscripts(t, 60, "../fixtures/corpus/*/*.jsonl", "../../shared/corpus/*/*.jsonl")
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	cuts := 0
	for _, tf := range files {
		f, data := tf.path, tf.data
		if len(data) < 4096 {
			continue
		}
		var gz bytes.Buffer
		gw := gzip.NewWriter(&gz)
		gw.Write(data)
		gw.Close()
		for name, comp := range map[string][]byte{"gz": gz.Bytes(), "zst": zw.EncodeAll(data, nil)} {
			for _, frac := range []int{2, 4} {
				cut := comp[:len(comp)*(frac-1)/frac]
				rc, err := jsonl.Decompress(bytes.NewReader(cut))
				if err != nil {
					t.Fatalf("%s.%s: %v", f, name, err)
				}
				s, err := parseAs(context.Background(), tf.agent, rc, agent.Transcript{Name: "cut.jsonl." + name}, emit.Handler{Op: func(manifest.Op) {}})
				rc.Close()
				cuts++
				if err != nil || s.EndState != manifest.EndTruncated {
					t.Errorf("%s.%s cut at byte %d of %d: end state %s, error %v", f, name, len(cut), len(comp), s.EndState, err)
				}
			}
		}
	}
	if cuts < 100 {
		t.Fatalf("only %d cuts of %d files", cuts, len(files))
	}
	t.Logf("%d cuts of %d files", cuts, len(files))
}

// sharedMissing skips t when the real corpus (../shared/corpus beside the
// project) is not there, as in a clone made elsewhere; under CI=true its
// absence is the failure the caller reports.
func sharedMissing(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); err != nil && os.Getenv("CI") != "true" {
		t.Skip("../shared/corpus is not beside the project (a clone elsewhere): only CI must have it")
	}
}
