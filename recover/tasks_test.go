package recover

import (
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

// hostOf is a BaseFunc over a host's files.
func hostOf(files map[string]string) BaseFunc {
	return func(p string) ([]byte, bool, bool) {
		s, ok := files[p]
		return []byte(s), ok, true
	}
}

// TestLintedIsStale: a file written, then rewritten by a linter that fixes
// or a task whose definition runs one, is stale, and its note names the
// command and the line of the definition; a task that only checks leaves
// it exact. The definition is read from the transcript first, then from
// the host.
func TestLintedIsStale(t *testing.T) {
	fixOn := map[string]string{"/w/.golangci.yaml": "version: \"2\"\nissues:\n  fix: true\n"}
	miseLint := "[tasks.lint]\nrun = \"golangci-lint run ./...\"\n[tasks.fmt]\nrun = \"gofmt -l .\"\n"
	cases := []struct {
		name  string
		host  map[string]string
		ops   []manifest.Op
		grade Confidence
		why   string
	}{
		{"golangci-lint run --fix", nil,
			[]manifest.Op{writeOp(0, "/w/a.go", "package a\n"), shellOp(1, "golangci-lint run --fix ./...")},
			Stale, "(golangci-lint run --fix: golangci-lint run --fix ./..., "},
		{"golangci-lint fmt of another package", nil,
			[]manifest.Op{writeOp(0, "/w/a.go", "package a\n"), shellOp(1, "golangci-lint fmt ./pkg/...")},
			Exact, ""},
		{"golangci-lint run, fixing on in the host's configuration", fixOn,
			[]manifest.Op{writeOp(0, "/w/a.go", "package a\n"), shellOp(1, "golangci-lint run ./...")},
			Stale, "(golangci-lint run ./... fixes files (issues.fix is true in .golangci.yaml): "},
		{"golangci-lint run, fixing off", map[string]string{"/w/.golangci.yml": "issues:\n  fix: false\n"},
			[]manifest.Op{writeOp(0, "/w/a.go", "package a\n"), shellOp(1, "golangci-lint run ./...")},
			Exact, ""},
		{"mise run lint, its task in the transcript", fixOn,
			[]manifest.Op{writeOp(0, "/w/mise.toml", miseLint), writeOp(1, "/w/a.go", "package a\n"), shellOp(2, "mise run lint")},
			Stale, "(mise run lint runs golangci-lint run ./... (mise.toml [tasks.lint]), which fixes files (issues.fix is true in .golangci.yaml): mise run lint, "},
		{"mise run lint, its task on the host", map[string]string{"/w/mise.toml": miseLint, "/w/.golangci.yaml": fixOn["/w/.golangci.yaml"]},
			[]manifest.Op{writeOp(1, "/w/a.go", "package a\n"), shellOp(2, "mise run lint 2>&1 | tail")},
			Stale, "(mise run lint runs golangci-lint run ./... (mise.toml [tasks.lint])"},
		{"the transcript's definition before the host's", map[string]string{"/w/mise.toml": "[tasks.lint]\nrun = \"gofmt -w .\"\n"},
			[]manifest.Op{writeOp(0, "/w/mise.toml", miseLint), writeOp(1, "/w/a.go", "package a\n"), shellOp(2, "mise run lint")},
			Exact, ""},
		{"a task named fmt that only lists", map[string]string{"/w/mise.toml": miseLint},
			[]manifest.Op{writeOp(1, "/w/a.go", "package a\n"), shellOp(2, "mise run fmt")},
			Exact, ""},
		{"a task named fmt with no definition", nil,
			[]manifest.Op{writeOp(1, "/w/a.go", "package a\n"), shellOp(2, "mise run fmt")},
			Stale, "(mise run fmt (no definition read: its name says it formats or fixes): mise run fmt, "},
		{"make lint runs $(MAKE) fmt", map[string]string{"/w/Makefile": "lint: \n\t$(MAKE) fmt\nfmt:\n\tgofmt -w .\n"},
			[]manifest.Op{writeOp(1, "/w/a.go", "package a\n"), shellOp(2, "make lint")},
			Stale, "make lint runs make fmt (Makefile lint), which runs gofmt -w . (Makefile fmt)"},
		{"written again after the linter", nil,
			[]manifest.Op{writeOp(0, "/w/a.go", "package a\n"), shellOp(1, "golangci-lint run --fix"), writeOp(2, "/w/a.go", "package a // b\n")},
			Exact, ""},
	}
	for _, c := range cases {
		gradeOf(t, c.name, c.ops, c.host, "/w/a.go", c.grade, c.why)
	}
}

// TestFailedLinterIsStale: golangci-lint --fix exits 1 when issues remain,
// having fixed what it could: a failed run changed the files too.
func TestFailedLinterIsStale(t *testing.T) {
	op := shellOp(1, "golangci-lint run --fix ./...")
	op.Outcome = manifest.OutcomeFailed
	res, _ := reconstruct([]manifest.Op{writeOp(0, "/w/a.go", "package a\n"), op}, hostOf(nil), ReconstructOptions{})
	if len(res) != 1 || res[0].Confidence != Stale {
		t.Fatalf("a.go after a failed golangci-lint --fix: %+v, want stale", res[0])
	}
}

// TestBunScriptIsStale: bun run X and bun X run the package.json script X
// (PackmindHub/context-evaluator: lint:fix is biome check --write, which
// rewrote a .tsx file the session wrote); a script that only checks, and
// bun running a file that writes nothing, leave it exact.
func TestBunScriptIsStale(t *testing.T) {
	pkg := `{"scripts":{"lint":"biome check --error-on-warnings","lint:fix":"biome check --write","format":"biome format --write src/other"}}`
	tsx := "export const A = () => <div/>\n"
	cases := []struct {
		name  string
		host  map[string]string
		ops   []manifest.Op
		grade Confidence
		why   string
	}{
		{"bun run lint:fix, its script on the host", map[string]string{"/w/package.json": pkg},
			[]manifest.Op{writeOp(0, "/w/src/app.tsx", tsx), shellOp(1, "bun run lint:fix")},
			Stale, "(bun run lint:fix runs biome check --write (package.json scripts.lint:fix): bun run lint:fix, "},
		{"bun lint:fix from a directory below, its script in the transcript", nil,
			[]manifest.Op{writeOp(0, "/w/package.json", pkg), writeOp(1, "/w/src/app.tsx", tsx), shellOp(2, "cd src && bun lint:fix")},
			Stale, "(bun lint:fix runs biome check --write (../package.json scripts.lint:fix)"},
		{"bun run lint only checks", map[string]string{"/w/package.json": pkg},
			[]manifest.Op{writeOp(0, "/w/src/app.tsx", tsx), shellOp(1, "bun run lint")},
			Exact, ""},
		{"bun run format writes elsewhere", map[string]string{"/w/package.json": pkg},
			[]manifest.Op{writeOp(0, "/w/src/app.tsx", tsx), shellOp(1, "bun run format")},
			Exact, ""},
		{"bunx biome check --apply", nil,
			[]manifest.Op{writeOp(0, "/w/src/app.tsx", tsx), shellOp(1, "bunx @biomejs/biome check --apply")},
			Stale, "(biome check --apply: "},
		{"biome check alone", nil,
			[]manifest.Op{writeOp(0, "/w/src/app.tsx", tsx), shellOp(1, "bunx biome check src && bun x biome ci")},
			Exact, ""},
	}
	for _, c := range cases {
		gradeOf(t, c.name, c.ops, c.host, "/w/src/app.tsx", c.grade, c.why)
	}
}

// gradeOf replays ops onto host and checks the grade of the file at path,
// and that one of its notes holds why ("" for none wanted).
func gradeOf(t *testing.T, name string, ops []manifest.Op, host map[string]string, path string, grade Confidence, why string) {
	t.Helper()
	res, _ := reconstruct(ops, hostOf(host), ReconstructOptions{})
	var got *FileResult
	for _, f := range res {
		if f.Path == path {
			got = f
		}
	}
	if got == nil {
		t.Fatalf("%s: no %s in %v", name, path, res)
	}
	if got.Confidence != grade {
		t.Errorf("%s: %s is %s, want %s (notes %q)", name, path, got.Confidence, grade, got.Notes)
	}
	if why != "" && !strings.Contains(strings.Join(got.Notes, "\n"), why) {
		t.Errorf("%s: notes %q, want one with %q", name, got.Notes, why)
	}
}
