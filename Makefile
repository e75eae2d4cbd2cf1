# Targets for developers; CI runs .ci/run.
GO ?= go
PKGS := ./...
BENCH ?= .
BENCHCOUNT ?= 6
FUZZEXECS ?=

.PHONY: build install test race lint fuzz cover bench bench-big pgo docs demo groundtruth

# -buildvcs=true: sandbox version names the commit even where GOFLAGS
# turns VCS stamping off.
build:
	$(GO) build -buildvcs=true -o bin/sandbox ./cmd/sandbox

# Into $(go env GOBIN), else $(go env GOPATH)/bin.
install:
	$(GO) install -buildvcs=true ./cmd/sandbox

test:
	$(GO) test $(PKGS)

race:
	$(GO) test -race -count=1 $(PKGS)

lint:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

# Run every fuzz target a fixed number of executions (.ci/fuzz; FUZZEXECS=N
# runs each N times instead); crashers land in testdata/fuzz.
fuzz:
	FUZZEXECS=$(FUZZEXECS) bash .ci/fuzz

# Coverage of the whole suite: every package's statements, by every test
# (docs/testing.md). A block run by any test binary counts as covered.
cover:
	mkdir -p cover
	$(GO) test -count=1 -coverpkg=./... -coverprofile=cover/cover.out $(PKGS)
	awk 'NR > 1 { n[$$1] = $$2; if ($$3 > 0) hit[$$1] = 1 } \
		END { for (b in n) { split(b, loc, ":"); f = loc[1]; sub("github.com/agentsandbox/sandbox/", "", f); \
			tot[f] += n[b]; if (b in hit) cov[f] += n[b] } \
		for (f in tot) printf "%-30s %5.1f%%  %4d of %4d statements\n", f, 100 * cov[f] / tot[f], cov[f], tot[f] }' cover/cover.out | sort

# Benchmarks, BENCHCOUNT runs each, into bench/new.txt (the object storage
# ones start a local MinIO and fill a bucket once: see docs/performance.md); compared with
# bench/old.txt by benchstat when there is one (mv bench/new.txt bench/old.txt
# to make a baseline).
bench:
	mkdir -p bench
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(BENCHCOUNT) ./parse/... ./recover ./cmd ./harness ./vault ./review | tee bench/new.txt
	@if [ -f bench/old.txt ]; then $(GO) run golang.org/x/perf/cmd/benchstat@latest bench/old.txt bench/new.txt; \
	else $(GO) run golang.org/x/perf/cmd/benchstat@latest bench/new.txt; fi

# The figures of docs/performance.md (issue 15): the built binary on a
# generated 1 GiB Codex rollout and Claude Code session and on an 8 MiB
# rollout with one 200 MiB line, each beside wc -l on the same page-cached
# file, then `sessions` over a generated home of 12,000 transcripts
# (3.9 GB) beside cat of all its files. benchbig alternates each command
# with its yardstick for BIGRUNS rounds and prints the minimum and median
# wall clock, the median CPU, the peak RSS and the ratio to the yardstick
# (of the medians, and of the minimums), with the load average: a shared
# machine's speed drifts from minute to minute, and alternating keeps the
# drift out of the ratio. The home is pointed to by HOME, CODEX_HOME and
# CLAUDE_CONFIG_DIR for that command only.
BIGRUNS ?= 3
bench-big: build
	mkdir -p bench
	test -f bench/rollout-1g.jsonl || $(GO) run ./fixtures/cmd/genrollout -size 1G -o bench/rollout-1g.jsonl
	test -f bench/claude-1g.jsonl || $(GO) run ./fixtures/cmd/genrollout -agent claude -size 1G -o bench/claude-1g.jsonl
	test -f bench/copilot-1g.jsonl || $(GO) run ./fixtures/cmd/genrollout -agent copilot -size 1G -o bench/copilot-1g.jsonl
	test -f bench/crush-1g.jsonl || $(GO) run ./fixtures/cmd/genrollout -agent crush -size 1G -o bench/crush-1g.jsonl
	test -f bench/qwen-1g.jsonl || $(GO) run ./fixtures/cmd/genrollout -agent qwen -size 1G -o bench/qwen-1g.jsonl
	test -f bench/goose-1g.jsonl || $(GO) run ./fixtures/cmd/genrollout -agent goose -size 1G -o bench/goose-1g.jsonl
	test -f bench/droid-1g.jsonl || $(GO) run ./fixtures/cmd/genrollout -agent droid -size 1G -o bench/droid-1g.jsonl
	test -f bench/long-200m.jsonl || $(GO) run ./fixtures/cmd/genrollout -size 8M -long-line 200M -o bench/long-200m.jsonl
	test -d bench/home || $(GO) run ./fixtures/cmd/genhome -o bench/home
	$(GO) run ./fixtures/cmd/benchbig -bin bin/sandbox -dir bench -runs $(BIGRUNS)

# The profile Go's compiler optimises sandbox with (profile-guided
# optimisation: cmd/sandbox/default.pgo, which go build finds by itself):
# `recover --dry-run --json` on a generated transcript of PGOSIZE of each
# agent, profiled by the cmd benchmark (no generator in it), the four
# merged: Codex and Claude Code read ten times, the others three (the
# profile weighs each by its time, and a large transcript is most often
# one of the first two). Remake it when the hot paths change
# (docs/performance.md).
PGOSIZE ?= 256M
pgo:
	mkdir -p bench/pgo
	for a in codex:10 claude:10 gemini:3 pi:3; do n=$${a#*:}; a=$${a%:*}; \
		test -f bench/pgo/$$a.jsonl || $(GO) run ./fixtures/cmd/genrollout -agent $$a -size $(PGOSIZE) -o bench/pgo/$$a.jsonl || exit 1; \
		BENCH_TRANSCRIPT=bench/pgo/$$a.jsonl $(GO) test ./cmd -run '^$$' -bench "RecoverDryRunJSON/$$a\$$" -benchtime $${n}x \
			-o bench/pgo/cmd.test -cpuprofile bench/pgo/$$a.prof || exit 1; \
	done
	$(GO) tool pprof -proto bench/pgo/codex.prof bench/pgo/claude.prof bench/pgo/gemini.prof bench/pgo/pi.prof > cmd/sandbox/default.pgo

docs:
	$(GO) test ./cmd -run TestReference -update

demo:
	$(GO) run ./cmd/sandbox recover --transcript fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl --dest /tmp/sandbox-demo --dry-run

# The ground truth (docs/recover.md): every usable Entire checkpoint of the
# clones named in GTREPOS (git directories with an entire/checkpoints/v1
# branch; default the bundle CI replays) replayed onto its parent commit and
# compared with the commit, each grade's precision printed, every file
# written as a JSON line to bench/groundtruth.jsonl.
GTREPOS ?= fixtures/groundtruth/testdata/entireio-cli.bundle
groundtruth:
	mkdir -p bench
	$(GO) run ./fixtures/cmd/groundtruth $(foreach r,$(GTREPOS),-repo $(r)) -o bench/groundtruth.jsonl
