package parse

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/fixtures/respell"
	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/parse/discover"
)

const (
	claudeLine = `{"parentUuid":null,"sessionId":"s1","cwd":"/w","type":"user","message":{"role":"user","content":"hi"},"timestamp":"2026-11-20T09:00:00.000Z"}`
	codexLine  = `{"timestamp":"2026-11-20T09:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}`
)

// Detection is by a majority of the records that look like one agent's: a
// Codex-shaped line inside a Claude Code session (a pasted record, a test
// fixture the agent wrote) leaves it a Claude Code session, and the other
// way round; whitespace, key order, escapes and a byte order mark do not
// matter.
func TestDetectMajority(t *testing.T) {
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	cases := map[string]manifest.Agent{
		lines(claudeLine, codexLine, claudeLine):                                       manifest.AgentClaude,
		lines(codexLine, claudeLine, codexLine):                                        manifest.AgentCodex,
		lines(codexLine, claudeLine, claudeLine, claudeLine):                           manifest.AgentClaude,
		lines(`{"type":"file-history-snapshot","snapshot":{}}`, codexLine, claudeLine): manifest.AgentClaude,
		lines(codexLine, `{"record_type":"state"}`, claudeLine):                        manifest.AgentCodex,
		"\ufeff" + lines(claudeLine):                                                   manifest.AgentClaude,
		`{ "sessionId" : "s1", "type" : "user" }` + "\r\n":                             manifest.AgentClaude,
		`{"payload":{},"t\u0079pe":"\u0073ession_meta"}`:                               manifest.AgentCodex,
		`{"id":"a","instructions":"","timestamp":"t"}`:                                 manifest.AgentCodex,
		"\ufeff{\n  \"session\": {\"id\": \"x\"},\n  \"items\": []\n}":                 manifest.AgentCodex,
		lines(claudeLine) + claudeLine[:40]:                                            manifest.AgentClaude, // cut short
		lines(`{"type":"summary"}`, `{"a":1}`):                                         "",
	}
	for in, want := range cases {
		got, ok := detect([]byte(in))
		if got != want || ok != (want != "") {
			t.Errorf("Detect(%.60q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// generated writes a generated session of about size bytes.
func generated(agent string, seed int64, size int64) []byte {
	var b bytes.Buffer
	write := gen.Rollout
	switch agent {
	case "claude":
		write = gen.Claude
	case "gemini":
		write = gen.Gemini
	case "pi":
		write = gen.Pi
	case "copilot":
		write = gen.Copilot
	case "qwen":
		write = gen.Qwen
	case "goose":
		write = gen.Goose
	case "droid":
		write = gen.Droid
	}
	write(&b, gen.Options{Size: size, Seed: seed, Files: 8, PatchEvery: 3, LongLine: int(size / 4)})
	return b.Bytes()
}

// Probe reads the same agent, id, cwd and time span from every spelling of
// a transcript, from one whose head and tail it reads (larger than both)
// as from a small one.
func TestProbeSpellings(t *testing.T) {
	for _, agent := range agents {
		for _, size := range []int64{16 << 10, 512 << 10} {
			data := generated(agent, 7, size)
			var want Info
			for i, v := range append([]respell.Variant{{Name: "original"}}, respell.Variants...) {
				dir := t.TempDir()
				name := filepath.Join(dir, "session.jsonl")
				if err := os.WriteFile(name, respell.Respell(data, v), 0o644); err != nil {
					t.Fatal(err)
				}
				cands, _, err := (&discover.Finder{}).From(name, nil)
				if err != nil || len(cands) != 1 {
					t.Fatalf("%v, %d candidates", err, len(cands))
				}
				got, err := Probe(&cands[0])
				if err != nil {
					t.Fatalf("%s %d %s: %v", agent, size, v.Name, err)
				}
				got.Last = got.Last.UTC()
				if i == 0 {
					want = got
					// A legacy Goose session says its id only in its file's name.
					if (got.ID == "") != (agent == "goose") || got.Cwd == "" || got.First.IsZero() || !got.Last.After(got.First) {
						t.Fatalf("%s %d: probe of the original: %+v", agent, size, got)
					}
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %d %s: probe %+v, want %+v", agent, size, v.Name, got, want)
				}
			}
		}
	}
}

// parsed is what a transcript's parse comes to, for comparing spellings.
type parsed struct {
	Session []string
	Ops     []string
}

func parseAll(t testing.TB, data []byte) parsed {
	s, err := OpenStream(context.Background(), "session.jsonl", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var p parsed
	for {
		op, ok := s.Next()
		if !ok {
			break
		}
		d := fmt.Sprintf("%d %s %s %q %s %q line=%d call=%s", op.Seq, op.Kind, op.Tool, op.Paths, op.Outcome, op.OutcomeEvidence,
			op.Provenance.Line, op.Provenance.CallID)
		if op.Content != nil {
			d += fmt.Sprintf(" content=%q", *op.Content)
		}
		for _, e := range op.Edits {
			d += fmt.Sprintf(" edit=%q->%q", e.Old, e.New)
		}
		if op.PatchText != "" {
			d += fmt.Sprintf(" patch=%q", op.PatchText)
		}
		for _, e := range op.Evidence {
			d += fmt.Sprintf(" evidence=%s:%s:%q", e.Kind, e.Path, e.Content)
		}
		p.Ops = append(p.Ops, d)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	sess := s.Session()
	p.Session = []string{string(sess.Agent), sess.ID, sess.AgentVersion, sess.Cwd, sess.Start.String(), sess.End.String(),
		string(sess.EndState), fmt.Sprint(sess.Lines)}
	for _, w := range sess.Warnings {
		p.Session = append(p.Session, fmt.Sprintf("%d %s", w.Line, w.Message))
	}
	return p
}

// agents are the generators FuzzRespelled chooses from.
var agents = []string{"codex", "claude", "gemini", "pi", "copilot", "qwen", "goose", "droid"}

// FuzzRespelled parses a generated session and one of its respellings and
// requires the same session and operations: kinds, paths, outcomes, the
// content and evidence they carry. The input chooses the generator (agent,
// seed, size) and the spelling.
func FuzzRespelled(f *testing.F) {
	for v := range respell.Variants {
		for a := range agents {
			f.Add(uint8(a), int64(v+100*a), uint8(v), uint16(20+20*(a%2)))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, seed int64, variant uint8, kib uint16) {
		agent := agents[int(which)%len(agents)]
		data := generated(agent, seed, int64(kib%64+1)<<10)
		v := respell.Variants[int(variant)%len(respell.Variants)]
		want, got := parseAll(t, data), parseAll(t, respell.Respell(data, v))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s seed %d, %d KiB, %s: the respelled session parses differently", agent, seed, kib%64+1, v.Name)
			diff(t, "session", want.Session, got.Session)
			diff(t, "op", want.Ops, got.Ops)
		}
	})
}

func diff(t testing.TB, what string, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%d %ss, want %d", len(got), what, len(want))
	}
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			t.Errorf("%s %d:\n  want %.300s\n  got  %.300s", what, i, want[i], got[i])
			return
		}
	}
}
