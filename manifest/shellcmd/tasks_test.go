package shellcmd

import (
	"path"
	"strings"
	"testing"
)

// TestLinters: each spelling of a linter or formatter that fixes files is
// a write bounded by the places it names (the tree where it runs when it
// names none), through the wrappers that run it; a mode that only checks
// writes nothing; golangci-lint run alone is a task, which its
// configuration decides.
func TestLinters(t *testing.T) {
	runCases(t, []parseCase{
		{`golangci-lint run --fix ./...`, "write \"golangci-lint run --fix\" spec=\"*.go\" spec=\"*.go/*\" +recursive +bound\nvague \"golangci-lint run --fix ./...\""},
		{`golangci-lint run --timeout=30m --fix ./pkg/... ./cmd`, "write \"golangci-lint run --fix\" spec=\"pkg/*.go\" spec=\"pkg/*.go/*\" spec=\"cmd/*.go\" spec=\"cmd/*.go/*\" +recursive +bound\nvague \"golangci-lint run --timeout=30m --fix ./pkg/... ./cmd\""},
		{`golangci-lint run -c ci.yml --fix`, "write \"golangci-lint run --fix\" spec=\"*.go\" spec=\"*.go/*\" +recursive +bound\nvague \"golangci-lint run -c ci.yml --fix\""},
		{`golangci-lint run --fix=false ./...`, ``},
		{`golangci-lint fmt`, "write \"golangci-lint fmt\" spec=\"*.go\" spec=\"*.go/*\" +recursive +bound\nvague \"golangci-lint fmt\""},
		{`golangci-lint fmt --diff ./...`, ``},
		{`golangci-lint run ./pkg/... --timeout 5m`, `task "golangci-lint run ./pkg/... --timeout 5m" "." args="golangci-lint run ./pkg/... --timeout 5m"`},
		{`golangci-lint run "$PKG"`, `task "golangci-lint run \"$PKG\"" "." args="golangci-lint run $"`},
		{`golangci-lint config verify && golangci-lint linters`, ``},
		{`mise exec -- golangci-lint run --fix`, "write \"golangci-lint run --fix\" spec=\"*.go\" spec=\"*.go/*\" +recursive +bound\nvague \"golangci-lint run --fix\""},
		{`npx eslint --fix`, "write \"eslint --fix\" spec=\"*\" +recursive +bound\nvague \"eslint --fix\""},
		{`pnpm exec prettier --write src`, `write "prettier --write" "src" +recursive`},
		{`bunx prettier -w .`, `write "prettier --write" "." +recursive`},
		{`npx prettier --check .`, ``},
		{`uv run ruff check --fix`, "write \"ruff --fix\" spec=\"*.py\" spec=\"*.py/*\" spec=\"*.pyi\" spec=\"*.pyi/*\" spec=\"*.ipynb\" spec=\"*.ipynb/*\" +recursive +bound\nvague \"ruff check --fix\""},
		{`uv run ruff format --check`, ``},
		{`poetry run black .`, `write "black" "." +recursive`},
		{`black --check .`, ``},
		{`cargo fmt -- --check`, ``},
		{`cargo clippy --fix --allow-dirty`, "write \"cargo clippy\" spec=\"*.rs\" spec=\"*.rs/*\" +recursive +bound\nvague \"cargo clippy --fix --allow-dirty\""},
		{`cargo clippy`, ``},
		{`go fix ./...`, "write \"go fix\" spec=\"*.go\" spec=\"*.go/*\" +recursive +bound\nvague \"go fix ./...\""},
		{`gofumpt -w .`, "write \"gofumpt -w\" spec=\"*.go\" spec=\"*.go/*\" +recursive +bound\nvague \"gofumpt -w .\""},
		{`gofumpt -l .`, ``},
		{`yarn eslint --fix`, `task "yarn eslint --fix" "." args="yarn eslint --fix"`},
		{`gmake lint`, `task "gmake lint" "." args="gmake lint"`},
		{`make -j 4 -k`, `task "make -j 4 -k" "." args="make -j 4 -k"`},
		{`mise tasks run lint`, `task "mise tasks run lint" "." args="mise tasks run lint"`},
		{`mise lint && mise r test ::: fmt`, "task \"mise lint\" \".\" args=\"mise lint\"\ntask \"mise r test ::: fmt\" \".\" args=\"mise r test ::: fmt\""},
		{`cd svc && just fmt`, `task "just fmt" "svc" args="just fmt"`},
		{`task lint -- --fix`, `task "task lint -- --fix" "." args="task lint -- --fix"`},
		{`just --list; task --list; npm run; mise tasks; make --dry-run lint`, ``},
	})
}

// TestJSLinters: Biome, dprint, standard, xo, stylelint and oxlint fix the
// places they are given, or the tree where they run, only in the modes
// that write; through npx and bunx, and a package named with its version.
func TestJSLinters(t *testing.T) {
	runCases(t, []parseCase{
		{`biome check --write`, "write \"biome check --write\" spec=\"*\" +recursive +bound\nvague \"biome check --write\""},
		{`biome check --fix src`, `write "biome check --fix" "src" +recursive`},
		{`biome check --apply-unsafe src/a.tsx`, `write "biome check --apply-unsafe" "src/a.tsx" +recursive`},
		{`cd web && biome check --apply ./src`, `write "biome check --apply" "web/src" +recursive`},
		{`biome lint --write --max-diagnostics 50 src`, `write "biome lint --write" "src" +recursive`},
		{`biome format --write --line-width 100 "src/**/*.ts"`, "write \"biome format --write\" spec=\"src/**/*.ts\" +recursive\nvague \"\\\"src/**/*.ts\\\"\""},
		{`biome migrate --write`, "write \"biome migrate --write\" spec=\"biome.json\" spec=\"biome.json/*\" spec=\"biome.jsonc\" spec=\"biome.jsonc/*\" +recursive +bound\nvague \"biome migrate --write\""},
		{`biome init`, `write "biome init" "biome.json"`},
		{`biome check && biome check --error-on-warnings src && biome ci . && biome lint && biome format src && biome migrate`, ``},
		{`biome format --write --stdin-file-path=a.ts < a.ts`, ``},
		{`biome format --apply src`, ``}, // format has no --apply
		{`npx @biomejs/biome format --write .`, `write "biome format --write" "." +recursive`},
		{`bunx @biomejs/biome@1.9.4 check --apply`, "write \"biome check --apply\" spec=\"*\" +recursive +bound\nvague \"biome check --apply\""},
		{`bun x biome lint --fix src`, `write "biome lint --fix" "src" +recursive`},
		{`pnpm exec biome check --write src`, `write "biome check --write" "src" +recursive`},
		{`npx prettier@3 --write a.ts`, `write "prettier --write" "a.ts" +recursive`},
		{`dprint fmt`, "write \"dprint fmt\" spec=\"*\" +recursive +bound\nvague \"dprint fmt\""},
		{`dprint fmt -c dprint.json src/a.ts`, `write "dprint fmt" "src/a.ts" +recursive`},
		{`dprint check && dprint fmt --stdin a.ts < a.ts`, ``},
		{`standard --fix`, "write \"standard --fix\" spec=\"*\" +recursive +bound\nvague \"standard --fix\""},
		{`npx xo --fix src`, `write "xo --fix" "src" +recursive`},
		{`stylelint --fix -c .stylelintrc 'src/**/*.css'`, "write \"stylelint --fix\" spec=\"src/**/*.css\" +recursive\nvague \"'src/**/*.css'\""},
		{`oxlint -c oxlintrc.json --fix-suggestions src`, `write "oxlint --fix" "src" +recursive`},
		{`standard && xo src && stylelint a.css && oxlint -D correctness src && stylelint --fix --stdin < a.css`, ``},
	})
}

// TestBun: bun run X and bun X run the package.json script X, a task the
// replay reads; a file is a script run, read by the replay; bun's own
// commands write nothing; bun -e is code and bun exec a script.
func TestBun(t *testing.T) {
	runCases(t, []parseCase{
		{`bun run lint:fix`, `task "bun run lint:fix" "." args="bun run lint:fix"`},
		{`bun lint:fix`, `task "bun lint:fix" "." args="bun lint:fix"`},
		{`bun run lint -- --fix`, `task "bun run lint -- --fix" "." args="bun run lint -- --fix"`},
		{`bun --cwd web run --bun lint`, `task "bun --cwd web run --bun lint" "." args="bun --cwd web run --bun lint"`},
		{`bun biome check --write`, `task "bun biome check --write" "." args="bun biome check --write"`},
		{`cd "$D" && bun run lint:fix`, "write \"bun lint:fix\"\nvague \"bun run lint:fix\""},
		{`cd "$D" && bun run lint`, ``},
		{`bun run x.ts`, `run "bun" "x.ts" "."`},
		{`bun scripts/gen.ts out.txt`, `run "bun" "scripts/gen.ts" "." "out.txt"`},
		{`bun --cwd web run --watch src/index.ts`, `run "bun" "web/src/index.ts" "web"`},
		{`bun -e 'require("fs").writeFileSync("a", "b")'`, "write \"bun script\" spec=\"a\" spec=\"a/*\" +recursive +bound\nvague \"bun -e 'require(\\\"fs\\\").writeFileSync(\\\"a\\\", \\\"b\\\")'\""},
		{`bun exec 'rm -rf dist'`, `delete "rm -r" "dist" +recursive`},
		{"bun - <<'EOF'\nrequire('fs').rmSync('dist')\nEOF", "write \"bun script\" spec=\"dist\" spec=\"dist/*\" +recursive +bound\nvague \"bun <<'EOF' require('fs').rmSync('dist')…\""},
		{`bun install && bun add -d x && bun test && bun run && bun --version && bun build src/index.ts --outdir dist`, ``},
	})
}

// project is a file system for ReadTask: each file's content by path.
type project map[string]string

func (p project) read(name string) (string, bool) {
	s, ok := p[name]
	return s, ok
}

// TestReadTask: a task's definition decides what it writes; each effect
// says which line of which file writes; a task that cannot be read falls
// back on its name.
func TestReadTask(t *testing.T) {
	files := project{
		"/p/mise.toml": `[tasks.lint]
run = "golangci-lint run ./..."

[tasks.fmt]
run = "gofmt -l ."

[tasks."lint:all"]
depends = ["lint", "gen"]
run = ["echo done", "go vet ./..."]

[tasks.gen]
run = "go generate ./internal/..."
dir = "{{config_root}}/tools"
`,
		"/p/.golangci.yaml": "version: \"2\"\nissues:\n  fix: true\n",
		"/p/Makefile": `GOLANGCI ?= golangci-lint
LINT = $(GOLANGCI) run
.PHONY: lint fmt check
all: check

lint: fmt
	@$(LINT) --fix ./pkg/...
fmt:
	-gofmt -w \
	  .
check:
	gofmt -l .
	$(MAKE) -n fmt
clean:
	rm -rf dist
`,
		"/p/package.json":             `{"scripts":{"lint":"eslint .","lint:fix":"npm run lint -- --fix","pretest":"prettier --write src","test":"jest"}}`,
		"/p/justfile":                 "set shell := [\"bash\", \"-c\"]\nsrc := 'cmd'\n\ndefault: check\n\ncheck:\n    gofmt -l .\n\n# formats\nfmt: check\n    @gofmt -w {{src}}\n\nscript:\n    #!/usr/bin/env python3\n    open('gen.txt', 'w').write('x')\n",
		"/p/Taskfile.yml":             "version: '3'\ntasks:\n  default:\n    deps: [fmt]\n  fmt:\n    cmds:\n      - gofmt -l .\n      - cmd: black {{.CLI_ARGS}}\n  lint:\n    cmds:\n      - task: fmt\n      - ruff check .\n",
		"/q/mise-tasks/lint/_default": "#!/bin/sh\n#MISE description=\"Lint\"\n#MISE depends=[\"lint:go\", \"lint:gofmt\"]\n",
		"/q/mise-tasks/lint/go":       "#!/bin/sh\ngolangci-lint config verify\nif [ \"$CI\" = \"true\" ]; then\n  echo skipped\nelse\n  golangci-lint run --timeout=30m --fix ./...\nfi\n",
		"/q/mise-tasks/lint/gofmt":    "#!/bin/sh\nfiles=\"$(gofmt -l -s .)\"\n",
		"/q/.golangci.yaml":           "issues:\n  fix: false\n",
		"/r/.golangci.toml":           "[issues]\nfix = true\n",
		"/s/.golangci.json":           `{"issues": {"fix": true}}`,
		"/b/package.json":             `{"scripts":{"lint":"biome check --error-on-warnings","lint:fix":"biome check --write","prebuild":"biome format --write src","build":"tsc"}}`,
	}
	cases := []struct {
		dir, cmd, want string
	}{
		{"/p", "mise run lint", `write "mise run lint runs golangci-lint run ./... (mise.toml [tasks.lint]), which fixes files (issues.fix is true in .golangci.yaml)" spec="/p/*.go" spec="/p/*.go/*" +recursive +bound`},
		{"/p/sub", "mise lint", `write "mise lint runs golangci-lint run ./... (../mise.toml [tasks.lint]), which fixes files (issues.fix is true in .golangci.yaml)" spec="/p/*.go" spec="/p/*.go/*" +recursive +bound`},
		{"/p", "mise run fmt", ``},
		{"/p", "mise run fmt -- -w", ``}, // gofmt -l . -w: -w after an operand is one
		{"/p", "npm run lint -- --fix", `write "npm run lint -- --fix runs eslint . --fix (package.json scripts.lint)" "/p" +recursive`},
		{"/p", "mise run lint:all", "write \"mise run lint:all runs golangci-lint run ./... (mise.toml [tasks.lint]), which fixes files (issues.fix is true in .golangci.yaml)\" spec=\"/p/*.go\" spec=\"/p/*.go/*\" +recursive +bound\nwrite \"mise run lint:all runs go generate ./internal/... (mise.toml [tasks.gen])\" spec=\"/p/tools/internal/*\" spec=\"/p/tools/internal/*/*\" +recursive +bound"},
		{"/p", "mise run nosuch:fix", `write "mise run nosuch:fix (no definition read: its name says it formats or fixes)" spec="/p/*" +recursive +bound`},
		{"/p", "mise run nosuch", ``},
		{"/q", "mise run lint", `write "mise run lint runs golangci-lint run --timeout=30m --fix ./... (mise-tasks/lint/go)" spec="/q/*.go" spec="/q/*.go/*" +recursive +cond +bound`},
		{"/q", "golangci-lint run ./...", ``},
		{"/r/x", "golangci-lint run ./a/...", `write "golangci-lint run ./a/... fixes files (issues.fix is true in ../.golangci.toml)" spec="/r/x/a/*.go" spec="/r/x/a/*.go/*" +recursive +bound`},
		{"/s", "golangci-lint run --no-config", ``},
		{"/s", "golangci-lint run", `write "golangci-lint run fixes files (issues.fix is true in .golangci.json)" spec="/s/*.go" spec="/s/*.go/*" +recursive +bound`},
		{"/s", "golangci-lint run -c /q/.golangci.yaml", ``},
		{"/p", "make lint", "write \"make lint runs gofmt -w . (Makefile fmt)\" spec=\"/p/*.go\" spec=\"/p/*.go/*\" +recursive +bound\nwrite \"make lint runs golangci-lint run --fix ./pkg/... (Makefile lint)\" spec=\"/p/pkg/*.go\" spec=\"/p/pkg/*.go/*\" +recursive +bound"},
		{"/p", "make", ``},
		{"/p", "make -j 4 GOFLAGS=-x fmt", `write "make -j 4 GOFLAGS=-x fmt runs gofmt -w . (Makefile fmt)" spec="/p/*.go" spec="/p/*.go/*" +recursive +bound`},
		{"/p", "make clean", `delete "make clean runs rm -rf dist (Makefile clean)" "/p/dist" +recursive`},
		{"/p", "make -C /p fmt", `write "make -C /p fmt runs gofmt -w . (Makefile fmt)" spec="/p/*.go" spec="/p/*.go/*" +recursive +bound`},
		{"/p", "npm run lint:fix", `write "npm run lint:fix runs npm run lint -- --fix (package.json scripts.lint:fix), which runs eslint . --fix (package.json scripts.lint)" "/p" +recursive`},
		{"/p", "npm run lint", ``},
		{"/p", "npm test", `write "npm test runs prettier --write src (package.json scripts.pretest)" "/p/src" +recursive`},
		{"/p", "pnpm test", ``},
		{"/p", "yarn prettier --write x.ts", `write "yarn prettier --write x.ts runs prettier --write x.ts (its program prettier)" "/p/x.ts" +recursive`},
		{"/p", "just", ``},
		{"/p", "just fmt", `write "just fmt runs gofmt -w cmd (justfile fmt)" spec="/p/cmd/*.go" spec="/p/cmd/*.go/*" +recursive +bound`},
		{"/p", "just script", `write "just script runs open('gen.txt', 'w').write('x') (justfile script)" spec="/p/gen.txt" spec="/p/gen.txt/*" spec="/p/x" spec="/p/x/*" +recursive +bound`},
		{"/p", "task", ``},
		{"/p", "task fmt -- a.py", `write "task fmt -- a.py runs black a.py (Taskfile.yml tasks.fmt)" "/p/a.py" +recursive`},
		{"/p", "task lint", ``},
		{"/b", "bun run lint:fix", `write "bun run lint:fix runs biome check --write (package.json scripts.lint:fix)" spec="/b/*" +recursive +bound`},
		{"/b/web", "bun lint:fix", `write "bun lint:fix runs biome check --write (../package.json scripts.lint:fix)" spec="/b/*" +recursive +bound`},
		{"/b", "bun --cwd web run lint:fix", `write "bun --cwd web run lint:fix runs biome check --write (../package.json scripts.lint:fix)" spec="/b/*" +recursive +bound`},
		{"/b", "bun run lint", ``},
		{"/b", "bun run lint -- --write src", `write "bun run lint -- --write src runs biome check --error-on-warnings --write src (package.json scripts.lint)" "/b/src" +recursive`},
		{"/b", "bun run build", `write "bun run build runs biome format --write src (package.json scripts.prebuild)" "/b/src" +recursive`},
		{"/b", "bun biome check --fix", `write "bun biome check --fix runs biome check --fix (its program biome)" spec="/b/*" +recursive +bound`},
		{"/b", "bun run --filter app lint:fix", `write "bun run --filter app lint:fix (no definition read: its name says it formats or fixes)" spec="/b/*" +recursive +bound`},
		{"/b", "bun run x.ts", ``},
		{`C:\proj`, "make fmt", `write "make fmt (no definition read: its name says it formats or fixes)" spec="*" +recursive +bound`},
	}
	for _, c := range cases {
		args := strings.Fields(c.cmd)
		got := strings.TrimSpace(strings.ReplaceAll(describe(ReadTask(args, c.dir, files.read)), "\n  ", "\n"))
		if got != c.want {
			t.Errorf("ReadTask(%q in %s):\ngot:\n%s\nwant:\n%s", c.cmd, c.dir, got, c.want)
		}
	}
}

// TestReadTaskBounded: a task that runs itself, tasks that run each other
// without end, and files too large to read end, and say so.
func TestReadTaskBounded(t *testing.T) {
	files := project{
		"/p/Makefile":       "a:\n\t$(MAKE) b\nb:\n\t$(MAKE) a\n",
		"/p/mise.toml":      "[tasks.x]\ndepends = [\"x\", \"y\"]\nrun = \"mise run x\"\n[tasks.y]\ndepends = [\"x\"]\n",
		"/big/package.json": `{"scripts":{"fix":"` + strings.Repeat("x", MaxScript) + `"}}`,
	}
	for _, cmd := range []string{"make a", "mise run x"} {
		r := ReadTask(strings.Fields(cmd), "/p", files.read)
		if len(r.Effects) == 0 || !strings.Contains(r.Effects[0].Verb, "too deep") {
			t.Errorf("ReadTask(%q) = %s, want a write of the tree, too deep", cmd, describe(r))
		}
	}
	r := ReadTask([]string{"npm", "run", "fix"}, "/big", files.read)
	if got := describe(r); !strings.Contains(got, "no definition read") {
		t.Errorf("a package.json over MaxScript: %s, want the name's reading", got)
	}
}

// FuzzTaskFiles: a task's files, whatever they hold, are read without a
// panic, and what they make a task do is said in the task's words, at
// absolute places under no other root than the files'.
func FuzzTaskFiles(f *testing.F) {
	f.Add("lint:\n\tgolangci-lint run --fix ./...\n", "[tasks.lint]\nrun = [\"gofmt -w .\", {task = \"x\"}]\ndepends=[\"lint\"]\n", `{"scripts":{"lint":"eslint --fix ."}}`, "tasks:\n  lint:\n    cmds: [{task: lint}, 'ruff format']\n", "lint: fmt\n    gofmt -w {{x}}\n", "issues:\n  fix: true\n", "lint")
	f.Add("$(", "[tasks", "{", "&a [*a, *a]", "#!", "issues: {fix: yes}", "")
	f.Fuzz(func(t *testing.T, makefile, misetoml, pkg, taskfile, justfile, golangci, name string) {
		files := project{"/p/Makefile": makefile, "/p/mise.toml": misetoml, "/p/package.json": pkg,
			"/p/Taskfile.yml": taskfile, "/p/justfile": justfile, "/p/.golangci.yml": golangci,
			"/p/mise-tasks/" + path.Clean("x/"+name): makefile}
		if strings.ContainsAny(name, "\x00\n") {
			return
		}
		for _, runner := range []string{"make", "mise run", "npm run", "task", "just", "golangci-lint run"} {
			args := append(strings.Fields(runner), name)
			if name == "" {
				args = strings.Fields(runner)
			}
			r := ReadTask(args, "/p/sub", files.read)
			what := strings.Join(args, " ")
			for _, e := range r.Effects {
				if e.Kind != Run && !strings.HasPrefix(e.Verb, what) {
					t.Errorf("%s: effect %q does not say the command", what, e.Verb)
				}
				for _, p := range append(append(e.Paths, e.Specs...), e.Patterns...) {
					if !strings.HasPrefix(p, "/") {
						t.Errorf("%s: a place that is not absolute: %q", what, p)
					}
				}
			}
		}
	})
}
