package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/fixtures/ocdb"
	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/osenv"
	"github.com/agentsandbox/sandbox/manifest"
	recov "github.com/agentsandbox/sandbox/recover"
)

var manifestSchema *jsonschema.Schema

// checkSchema validates a manifest against docs/manifest.schema.json.
func checkSchema(t *testing.T, data []byte) {
	t.Helper()
	if manifestSchema == nil {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		sch, err := c.Compile("../docs/manifest.schema.json")
		if err != nil {
			t.Fatal(err)
		}
		manifestSchema = sch
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("manifest is not JSON: %v", err)
	}
	if err := manifestSchema.Validate(doc); err != nil {
		t.Fatalf("manifest does not follow the schema: %v", err)
	}
}

// hermeticVars are the variables that name every home a command could
// read or write (HOME, the agents', sandbox's, XDG's), each a temporary
// directory of the test's own.
func hermeticVars(t *testing.T) map[string]string {
	vars := map[string]string{}
	for _, k := range []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "SANDBOX_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
		"GEMINI_CLI_HOME", "PI_CODING_AGENT_DIR", "COPILOT_HOME", "CRUSH_GLOBAL_DATA",
		"QWEN_HOME", "QWEN_RUNTIME_DIR", "GOOSE_PATH_ROOT", "FACTORY_HOME_OVERRIDE"} {
		vars[k] = t.TempDir()
	}
	return vars
}

// hermetic is the environment of a test's commands: the process's, with
// hermeticVars. A command run in it (runApp, or a child process given it)
// reads nothing of the machine's homes, and tests run side by side.
func hermetic(t *testing.T) osenv.Env {
	env := osenv.Process()
	for k, v := range hermeticVars(t) {
		env = env.With(k, v)
	}
	return env
}

// hermeticProcess makes the process's own environment hermetic, for the
// tests that run alone anyway: they measure a real command's memory and
// timing.
func hermeticProcess(t *testing.T) {
	for k, v := range hermeticVars(t) {
		t.Setenv(k, v)
	}
}

// runApp runs sandbox in env, in this process.
func runApp(t *testing.T, env osenv.Env, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := mainIn(env, args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// actions maps each file of a recover report to its action.
func actions(t *testing.T, report string) map[string]string {
	t.Helper()
	var r recov.Report
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("%v: %s", err, report)
	}
	out := map[string]string{}
	for _, f := range r.Files {
		out[f.Path] = string(f.Action)
	}
	return out
}

// TestExportApplyRoundTrip checks, for every corpus and fixture session,
// that applying its export manifest gives what recover gives: the same
// actions and the same tree. Two empty trees prove nothing, so a session
// that recovers no file is skipped, once both reports say that nothing was
// written; and most sessions must compare files, or the test went hollow.
func TestExportApplyRoundTrip(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	files, _ := filepath.Glob("../fixtures/corpus/*/*.jsonl")
	gemini, _ := filepath.Glob("../fixtures/corpus/gemini/*.json") // the legacy single-JSON layout
	files = append(files, gemini...)
	files = append(files, "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl")
	compared := 0
	t.Cleanup(func() {
		if !t.Failed() && compared < len(files)*2/3 {
			t.Errorf("only %d of %d sessions compared a tree with files in it", compared, len(files))
		}
	})
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir := t.TempDir()
			a, b, m := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "m.json")
			rec, stderr, code := runApp(t, env, "recover", "-t", f, "--dest", a, "--json")
			if code != ExitOK && code != ExitPartial {
				t.Fatalf("recover: exit %d: %s", code, stderr)
			}
			if _, stderr, code := runApp(t, env, "export", "-t", f, "-o", m); code != ExitOK {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			data, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			checkSchema(t, data)
			app, stderr, code := runApp(t, env, "apply", m, "--dest", b, "--json")
			if code != ExitOK && code != ExitPartial {
				t.Fatalf("apply: exit %d: %s", code, stderr)
			}
			ra, rb := actions(t, rec), actions(t, app)
			for p, act := range ra {
				// recover pairs a move into one action; apply, file by file, does not.
				if rb[p] != act && !(act == "move" && rb[p] == "create") {
					t.Errorf("%s: recover says %s, apply says %s", p, act, rb[p])
				}
			}
			ta, tb := dirContents(t, a), dirContents(t, b)
			if fmt.Sprint(ta) != fmt.Sprint(tb) {
				t.Errorf("trees differ:\nrecover %v\napply   %v", keys(ta), keys(tb))
			}
			if len(ta) == 0 {
				if wa, wb := written(t, rec), written(t, app); wa != 0 || wb != 0 {
					t.Fatalf("nothing on disk, but recover reports %d written and apply %d", wa, wb)
				}
				t.Skip("the session recovers no file: two empty trees prove nothing")
			}
			compared++
		})
	}
}

// written is a recover or apply report's count of files written.
func written(t *testing.T, report string) int {
	t.Helper()
	var r recov.Report
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("%v: %s", err, report)
	}
	return r.Summary.Written
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestConcurrentExportAdd checks that processes adding at once lose nothing.
func TestConcurrentExportAdd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := hermetic(t).With("SANDBOX_EXPORTS", filepath.Join(dir, "exports.json"))
	const workers, each = 8, 5
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := filepath.Join(dir, fmt.Sprintf("w%d-f%d.txt", w, i))
				os.WriteFile(p, []byte(p), 0o644)
				a := newAppIn(env, nil, io.Discard, io.Discard)
				a.setupLog()
				if err := a.runExportAdd([]string{p}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(dir, "exports.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc manifest.SimpleForm
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Exports) != workers*each {
		t.Errorf("%d exports, want %d", len(doc.Exports), workers*each)
	}
	for _, e := range doc.Exports {
		if e.Content != e.Path {
			t.Errorf("%s: content %q", e.Path, e.Content)
		}
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(n string) ([]byte, error) {
			if v, ok := m[n]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		}
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		env   map[string]string
		files map[string]string
		kind  string
	}{
		{nil, nil, ""},
		{map[string]string{"DOCKER_SANDBOX": "1"}, nil, "docker"},
		{map[string]string{"CODEX_SANDBOX_MODE": "workspace-write"}, nil, "codex"},
		{nil, map[string]string{"/.dockerenv": ""}, "docker"},
		{nil, map[string]string{"/run/.containerenv": ""}, "podman"},
		{nil, map[string]string{"/proc/1/cgroup": "0::/system.slice/docker-abc.scope\n"}, "docker"},
		{nil, map[string]string{"/proc/1/cgroup": "0::/\n", "/proc/1/comm": "bwrap\n"}, "bubblewrap"},
	}
	for _, c := range cases {
		d := harness.Detect(env(c.env), files(c.files))
		if d.Kind != c.kind || d.Inside != (c.kind != "") {
			t.Errorf("%v %v: got %+v, want %q", c.env, c.files, d, c.kind)
		}
	}
	_ = context.Background
}

// TestOpencodeExportApply checks that an opencode session's export manifest
// follows the schema and applies to the same tree and actions as recover.
func TestOpencodeExportApply(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	script, err := os.ReadFile("../fixtures/opencode/sessions.sql")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "opencode.db")
	if err := ocdb.Build(db, string(script)); err != nil {
		t.Fatal(err)
	}
	a, b, m := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "m.json")
	rec, stderr, code := runApp(t, env, "recover", "--from", db, "--session", "ses_7a1c2f", "--dest", a, "--json")
	if code != ExitPartial {
		t.Fatalf("recover: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runApp(t, env, "export", "--from", db, "--session", "ses_7a1c2f", "-o", m); code != ExitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"agent": "opencode"`) {
		t.Fatal("the manifest does not name the agent")
	}
	checkSchema(t, data)
	app, stderr, code := runApp(t, env, "apply", m, "--dest", b, "--json")
	if code != ExitPartial {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	ra, rb := actions(t, rec), actions(t, app)
	if len(ra) != 5 || fmt.Sprint(ra) != fmt.Sprint(rb) {
		t.Errorf("recover says %v, apply says %v", ra, rb)
	}
	if ta, tb := dirContents(t, a), dirContents(t, b); len(ta) != 4 || fmt.Sprint(ta) != fmt.Sprint(tb) {
		t.Errorf("trees differ:\nrecover %v\napply   %v", keys(ta), keys(tb))
	}
}

// TestSchemaNamesEveryAgent: the manifest's schema takes every registered
// agent's name (an agent added to the registry is added to the schema).
func TestSchemaNamesEveryAgent(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/manifest.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	enum := gjson.GetBytes(b, `$defs.session.properties.agent.enum`)
	var names []string
	for _, v := range enum.Array() {
		names = append(names, v.Str)
	}
	if len(names) == 0 {
		t.Fatalf("no agent enum found in the schema")
	}
	for _, a := range agentNames() {
		if !slices.Contains(names, a) {
			t.Errorf("docs/manifest.schema.json: the session's agent enum %q lacks %q", names, a)
		}
	}
}
