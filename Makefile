# memtray: `make run` starts it, `make test` runs every test. Both install
# what is missing first (build/deps.sh).

SHELL   := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO      ?= go
# Version (valid for Debian: 1.2.3, 1.2.3+git<date>.<n>.<sha>, or
# 0.0.0~git<date>.<sha> before the first tag), commit and build date, from
# build/version.sh; `memtray version` prints them.
VERSION    ?= $(shell build/version.sh 2>/dev/null || echo 0.0.0~dev)
COMMIT     ?= $(shell build/version.sh commit 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell build/version.sh date 2>/dev/null || echo unknown)
VERSION    := $(VERSION)
COMMIT     := $(COMMIT)
BUILD_DATE := $(BUILD_DATE)
CLIPKG  := github.com/memtray/memtray/backend/cli
LDFLAGS := -s -w -X $(CLIPKG).Version=$(VERSION) -X $(CLIPKG).Commit=$(COMMIT) -X $(CLIPKG).BuildDate=$(BUILD_DATE)
BIN     := bin/memtray
ARGS    ?=

.PHONY: all deps build desktop frontend run test test-short bench eval eval-sessions eval-rows fuzz soak clean model types config-doc appimage test-appimage
.PHONY: package deb windows linux-cli release test-package
.PHONY: load faults

all: build

deps:
	@build/deps.sh

build: deps frontend
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./app

# The UI (Svelte + Vite) into frontend/dist, which the binary embeds.
frontend: deps
	cd frontend && npm run build --silent

# The desktop app (Wails window and tray; the CLI too): the UI, then the
# binary with the desktop tags (on Linux always webkit2_41: without it
# WebKitGTK sends every request as a body-less GET).
DESKTOP_TAGS := desktop,production,webkit2_41
desktop: frontend
	@build/deps.sh desktop
	$(GO) build -trimpath -tags $(DESKTOP_TAGS) -ldflags '$(LDFLAGS)' -o $(BIN) ./app

# The AppImage, dist/memtray-<version>-x86_64.AppImage: the desktop binary in
# an AppDir, squashed (mksquashfs) and appended to our runtime
# (cmd/appimage-runtime); its path is the last line printed.
# `make test-appimage` runs it under Xvfb with FUSE and extract-and-run.
appimage: desktop
	@build/deps.sh package
	@OUT=$(DIST) build/appimage.sh $(BIN) $(VERSION)

test-appimage:
	build/test-appimage.sh

# With a display, `make run` opens the desktop app (window and tray, the
# daemon in-process); without one it serves headless and prints the UI address.
run:
	@if [ -n "$${DISPLAY}$${WAYLAND_DISPLAY}" ]; then \
	  $(MAKE) --no-print-directory desktop && $(BIN) app $(ARGS); \
	else \
	  $(MAKE) --no-print-directory build && $(BIN) serve $(ARGS); \
	fi

test:
	@build/deps.sh test
	@unformatted=$$(gofmt -l app backend cmd frontend assets); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	# macOS builds the .dmg: its code and tests must at least compile there
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...
	build/test-desktop.sh
	build/test-appimage.sh
	node --test build/
	cd frontend && npm run check --silent && npm test --silent
	$(MAKE) --no-print-directory build
	cd frontend && npm run e2e --silent

# The real agent clients through memtray (issue 24; not in `make test`, the
# clients are about 800 MB): installs the pinned Claude Code and Codex from npm
# into $${XDG_CACHE_HOME:-~/.cache}/memtray-test-clients (once), runs each in a
# temporary HOME through `memtray setup` and `memtray serve` against fake
# upstreams on 127.0.0.1, and prints a table of checks (cmd/clientcheck;
# docs/development.md). CLIENTCHECK_ARGS adds flags (-client codex, -runs 9, -keep).
# build/record-clients.sh re-records the fixtures `make test` replays.
.PHONY: test-clients
CLIENTCHECK_ARGS ?=
test-clients: build
	$(GO) run ./cmd/clientcheck -memtray $(BIN) $(CLIENTCHECK_ARGS)

test-short: deps
	$(GO) test -short -count=1 ./...

# Long benchmarks (search latency at 1k/10k/100k, insert throughput, start-up,
# the chromem-go baseline): about 10 minutes, not part of `make test`. The
# 100k fixtures are built once and cached under $$TMPDIR.
bench: deps
	$(GO) test -run '^$$' -bench 'Search$$' -benchtime 300x -timeout 60m ./backend/search/
	$(GO) test -run '^$$' -bench 'VectorSearch|TextSearch|Hybrid|VectorChromem|Put$$' -benchtime 200x -timeout 60m ./backend/store/
	$(GO) test -run '^$$' -bench 'PutBatch|Open' -benchtime 5x -timeout 60m ./backend/store/
	$(GO) test -run '^$$' -bench 'BuiltinEmbed' -cpu 1 ./backend/embed/
	$(GO) test -run '^$$' -bench 'LoadBuiltin' -benchtime 5x ./backend/embed/wordvec/
	MEMTRAY_FILTER_SET=$$( [ -f $(SHARED)/eval/filter-dev.jsonl ] && echo $(abspath $(SHARED))/eval/filter-dev.jsonl ) \
	  $(GO) test -run '^$$' -bench 'Pipeline' -benchtime 2000x ./backend/ingest/
	$(GO) test -run '^$$' -bench 'Redact' ./backend/redact/
	$(GO) test -run '^$$' -bench 'Proxy' -benchtime 2000x ./backend/capture/
	$(GO) test -run '^$$' -bench 'Sweep' -benchtime 1x -timeout 60m ./backend/steward/
	$(GO) test -run '^$$' -bench 'ListPage' -benchtime 20x -timeout 60m ./backend/daemon/

# TypeScript types of the API, generated from the Go types (a test fails when stale).
types:
	$(GO) run ./cmd/tsgen -o frontend/src/lib/api/types.ts

# docs/configuration.md, generated from the config struct's field docs (a test fails when stale).
config-doc:
	$(GO) run ./cmd/configdoc -o docs/configuration.md

# Retrieval evaluation on the shared data sets (skipped where absent).
SHARED ?= ../shared
eval: build
	@if [ -f $(SHARED)/eval/recall-dev.json ]; then $(BIN) eval recall $(SHARED)/eval/recall-dev.json; else echo "eval: $(SHARED)/eval/recall-dev.json absent, skipped"; fi
	@if [ -f $(SHARED)/data/locomo/locomo10.json ]; then $(BIN) eval recall --locomo $(SHARED)/data/locomo/locomo10.json; else echo "eval: LoCoMo absent, skipped"; fi
	@if [ -f $(SHARED)/data/longmemeval/longmemeval_s_cleaned_499.json.gz ]; then $(BIN) eval recall --longmemeval $(SHARED)/data/longmemeval/longmemeval_s_cleaned_499.json.gz; else echo "eval: LongMemEval absent, skipped"; fi
	@if [ -f $(SHARED)/eval/filter-dev.jsonl ]; then $(BIN) eval filter --passes 3 $(SHARED)/eval/filter-dev.jsonl; else echo "eval: filter-dev.jsonl absent, skipped"; fi
	@if [ -f $(SHARED)/eval/recall-dev.meta.json ]; then $(BIN) eval merge $(SHARED)/eval/recall-dev.json $(SHARED)/eval/recall-dev.meta.json; else echo "eval: recall-dev.meta.json absent, skipped"; fi
	$(BIN) eval stickiness
	@if [ -f $(SHARED)/eval/secrets-dev.jsonl ]; then $(BIN) eval redact $(SHARED)/eval/secrets-dev.jsonl; else echo "eval: secrets-dev.jsonl absent, skipped"; fi
	@if [ -d $(SHARED)/data/secrets/gitleaks ]; then $(BIN) eval redact --gitleaks $(SHARED)/data/secrets/gitleaks; else echo "eval: gitleaks cases absent, skipped"; fi
	@if ls $(SHARED)/data/claude-code-transcripts/*.jsonl >/dev/null 2>&1; then \
	  d=$$(mktemp -d); for f in $(SHARED)/data/claude-code-transcripts/*.jsonl; do $(BIN) ingest --data-dir $$d $$f; done; \
	  echo "replayed again (must add no memory):"; for f in $(SHARED)/data/claude-code-transcripts/*.jsonl; do $(BIN) ingest --data-dir $$d $$f | grep 'memories written'; done; \
	  $(BIN) stats --data-dir $$d; rm -rf $$d; \
	else echo "eval: Claude Code transcripts absent, skipped"; fi
	@$(MAKE) --no-print-directory eval-sessions

# The labelled real agent sessions (docs/benchmarks.md: real sessions); the command
# itself says "skipped: ... not found" when the set is absent.
eval-sessions: build
	$(BIN) eval sessions $(SHARED)/eval/sessions-dev.json
	@if [ -f $(SHARED)/eval/sessions-dev-more.json ]; then $(BIN) eval sessions $(SHARED)/eval/sessions-dev-more.json; fi

# Every row the write pipeline's changes are measured on (docs/benchmarks.md
# quotes them): both session sets, eval filter, eval recall, LoCoMo and
# LongMemEval; `make eval-rows QUICK=quick` skips the last two.
QUICK ?=
eval-rows: build
	@SHARED=$(SHARED) build/eval-rows.sh $(BIN) $(QUICK)

# Load test (docs/benchmarks.md): `memtray serve` as a subprocess, 64 agent
# sessions streaming through its proxy and straight to a fake provider for
# 60 s while recall, search and steward plans run, then 20 s with a slow
# pipeline (the queue must drop, not block). LOAD_ARGS adds flags, e.g.
# LOAD_ARGS='-duration 5m -sessions 128'; with SOAK_OUT set it writes
# $$SOAK_OUT/load.json. `go test ./cmd/memtray-load` runs a 5 s version.
LOAD_ARGS ?=
load: build
	$(GO) run ./cmd/memtray-load -bin $(BIN) $(LOAD_ARGS)

# The fault tests (docs/benchmarks.md), counted: provider down, slow and
# breaking off; Ollama down and hanging; disk full (needs root for its
# tmpfs, else skipped); store locked; corrupt index; clock jumps. With
# SOAK_OUT set it writes $$SOAK_OUT/faults.json.
faults: deps
	set -o pipefail; $(GO) test -race -count=1 -run '^TestFault' -json ./backend/daemon/ ./backend/cli/ | $(GO) run ./cmd/memtray-load -faults

# Fuzz every parser of outside input in turn (FUZZTIME each).
FUZZTIME ?= 30s
fuzz: deps
	$(GO) test -run '^$$' -fuzz '^FuzzImport$$' -fuzztime $(FUZZTIME) ./backend/store/
	$(GO) test -run '^$$' -fuzz '^FuzzOpenRecordsFile$$' -fuzztime $(FUZZTIME) ./backend/store/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./backend/config/
	$(GO) test -run '^$$' -fuzz '^FuzzParseOllamaHost$$' -fuzztime $(FUZZTIME) ./backend/config/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckVectors$$' -fuzztime $(FUZZTIME) ./backend/embed/
	$(GO) test -run '^$$' -fuzz '^FuzzAPIBodies$$' -fuzztime $(FUZZTIME) ./backend/daemon/
	$(GO) test -run '^$$' -fuzz '^FuzzLoadThesaurus$$' -fuzztime $(FUZZTIME) ./backend/embed/wordvec/
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./backend/embed/wordvec/
	$(GO) test -run '^$$' -fuzz '^FuzzParseBuffer$$' -fuzztime $(FUZZTIME) ./backend/noise/
	$(GO) test -run '^$$' -fuzz '^FuzzSplit$$' -fuzztime $(FUZZTIME) ./backend/chunk/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./backend/transcript/
	$(GO) test -run '^$$' -fuzz '^FuzzParseSessionSet$$' -fuzztime $(FUZZTIME) ./backend/eval/
	$(GO) test -run '^$$' -fuzz '^FuzzParseAnswer$$' -fuzztime $(FUZZTIME) ./backend/judge/
	$(GO) test -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(FUZZTIME) ./backend/redact/
	$(GO) test -run '^$$' -fuzz '^FuzzAnalyze$$' -fuzztime $(FUZZTIME) ./backend/ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzParsePatch$$' -fuzztime $(FUZZTIME) ./backend/ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzSSE$$' -fuzztime $(FUZZTIME) ./backend/capture/
	$(GO) test -run '^$$' -fuzz '^FuzzRequest$$' -fuzztime $(FUZZTIME) ./backend/capture/
	$(GO) test -run '^$$' -fuzz '^FuzzProxy$$' -fuzztime $(FUZZTIME) ./backend/capture/
	$(GO) test -run '^$$' -fuzz '^FuzzClaudeFiles$$' -fuzztime $(FUZZTIME) ./backend/importer/
	$(GO) test -run '^$$' -fuzz '^FuzzHookInput$$' -fuzztime $(FUZZTIME) ./backend/cli/
	$(GO) test -run '^$$' -fuzz '^FuzzParseFrontMatter$$' -fuzztime $(FUZZTIME) ./backend/search/
	$(GO) test -run '^$$' -fuzz '^FuzzToolArgs$$' -fuzztime $(FUZZTIME) ./backend/mcp/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeArgs$$' -fuzztime $(FUZZTIME) ./backend/mcp/
	$(GO) test -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime $(FUZZTIME) ./backend/tidy/
	$(GO) test -run '^$$' -fuzz '^FuzzELFEnd$$' -fuzztime $(FUZZTIME) ./cmd/appimage-runtime/

# Reliability soak (docs/reliability.md): the long runs of the reliability
# checks, then ONE summary table (go run ./cmd/soakreport). Each part writes
# its results into $(SOAK_OUT) as <name>.json, one JSON object per line:
#   {"name":"crash","metric":"kills survived","value":400,"ok":true,"detail":"..."}
# name: the part; metric: the table's row ("kills survived", "faults
# survived", "fuzz executions", "fuzz crashers", "load held", "secrets
# leaked", "memories lost"; rows of one metric from several parts add up,
# any other metric gets a row of its own); value: a number or a short text;
# ok: the part passed; detail: one line. A part run from a script records
# its result with `go run ./cmd/soakreport record -out FILE -name N -metric M
# -value V -ok=BOOL -detail D`. Parts keep going when one fails; the table
# says which, and `make soak` fails then. SOAK_KILLS daemon kills (about 1 s
# each), SOAK_STORE_KILLS per store crash test, FUZZTIME per fuzz target.
SOAK_OUT         ?= bin/soak
SOAK_KILLS       ?= 400
SOAK_STORE_KILLS ?= 200
soak: deps
	@rm -rf $(SOAK_OUT) && mkdir -p $(SOAK_OUT)
# Crash safety (item 3): SIGKILLs of memtray serve amid ingest, adds, imports,
# steward runs and model switches (app/crashtest; writes crash.json) ...
	-SOAK_OUT=$(abspath $(SOAK_OUT)) MEMTRAY_SOAK_KILLS=$(SOAK_KILLS) $(GO) test -count=1 -timeout 6h -v \
	  -run '^TestDaemonCrashKill9$$' ./app/crashtest/ > $(SOAK_OUT)/crash.log 2>&1; tail -n 4 $(SOAK_OUT)/crash.log
# ... and of the store's and the steward's own writers (kill tests of their packages).
	@if MEMTRAY_CRASH_ITERS=$(SOAK_STORE_KILLS) $(GO) test -count=1 -timeout 2h -run '^(TestCrashKill9|TestCrashKill9FirstOpen|TestApplyCrashKill9)$$' \
	  ./backend/store/ > $(SOAK_OUT)/store-crash.log 2>&1; then ok=true n=$$(( 3 * $(SOAK_STORE_KILLS) )); else ok=false n=0; fi; \
	  $(GO) run ./cmd/soakreport record -out $(SOAK_OUT)/store-crash.json -name store-crash -metric "kills survived" \
	  -value $$n -ok=$$ok -detail "kill -9 of a store writer: $(SOAK_STORE_KILLS) each of puts/updates/deletes, batches and first opens (backend/store)"; \
	  if MEMTRAY_STEWARD_CRASH_ITERS=$$(( $(SOAK_STORE_KILLS) / 2 )) $(GO) test -count=1 -timeout 2h -run '^TestApplyCrashKill9$$' \
	  ./backend/steward/ > $(SOAK_OUT)/steward-crash.log 2>&1; then ok=true n=$$(( $(SOAK_STORE_KILLS) / 2 )); else ok=false n=0; fi; \
	  $(GO) run ./cmd/soakreport record -out $(SOAK_OUT)/steward-crash.json -name steward-crash -metric "kills survived" \
	  -value $$n -ok=$$ok -detail "kill -9 of a plan/apply/undo loop: the run is wholly there or not (backend/steward)"
# Bad input (item 5): every target of `make fuzz` for FUZZTIME; executions
# from its output, crashers = new files in testdata/fuzz (writes fuzz.json).
	@find . -path ./frontend/node_modules -prune -o -path '*/testdata/fuzz/*' -type f -print | sort > $(SOAK_OUT)/fuzz-corpus-before.txt
	-$(MAKE) --no-print-directory -i fuzz FUZZTIME=$(FUZZTIME) > $(SOAK_OUT)/fuzz.log 2>&1; grep -E '^(ok|FAIL)' $(SOAK_OUT)/fuzz.log | tail -n 3
	$(GO) run ./cmd/soakreport fuzz -log $(SOAK_OUT)/fuzz.log -before $(SOAK_OUT)/fuzz-corpus-before.txt -out $(SOAK_OUT)/fuzz.json
# Secrets (item 2): every secret of testdata/secrets.jsonl and, when present,
# $(SHARED)/eval/secrets-dev.jsonl through every entrance, then looked for in
# the data dir, the logs, the feed, the API and an export (writes secrets.json).
	@set=""; note="the project's own set (backend/cli/testdata/secrets.jsonl); $(SHARED)/eval/secrets-dev.jsonl absent"; \
	  if [ -f $(SHARED)/eval/secrets-dev.jsonl ]; then set=$(SHARED)/eval/secrets-dev.jsonl; note="the project's own set and $$set"; fi; \
	  if MEMTRAY_SECRETS_SET=$$set $(GO) test -count=1 -v -run '^TestSecretsNeverPersist' ./backend/cli/ > $(SOAK_OUT)/secrets.log 2>&1; \
	  then ok=true; else ok=false; fi; \
	  hits=$$(grep -c ': secret .* found in ' $(SOAK_OUT)/secrets.log); \
	  if [ $$ok = false ] && [ $$hits = 0 ]; then hits="test failed"; fi; \
	  $(GO) run ./cmd/soakreport record -out $(SOAK_OUT)/secrets.json -name secrets -metric "secrets leaked" \
	  -value "$$hits" -ok=$$ok -detail "$$note, through the proxy (Anthropic, OpenAI), MCP, ingest, add, import, hook, edits: $$(grep -ho '[0-9]* items, [0-9]* secrets' $(SOAK_OUT)/secrets.log | paste -sd';' - | sed 's/;/; /g')"; \
	  tail -n 1 $(SOAK_OUT)/secrets.log
# Faults (item 4): every TestFault… with -race, counted (writes faults.json).
	-SOAK_OUT=$(abspath $(SOAK_OUT)) $(MAKE) --no-print-directory faults > $(SOAK_OUT)/faults.log 2>&1; tail -n 1 $(SOAK_OUT)/faults.log
# Load (item 6): 64 sessions for LOAD_ARGS' duration (60 s), then the slow pipeline (writes load.json:
# "load held" and "requests/s").
	-SOAK_OUT=$(abspath $(SOAK_OUT)) $(MAKE) --no-print-directory load > $(SOAK_OUT)/load.log 2>&1; tail -n 1 $(SOAK_OUT)/load.log
	$(GO) run ./cmd/soakreport -dir $(SOAK_OUT) -expect crash,store-crash,steward-crash,fuzz,secrets,faults,load

# Packages (issue "Packaging and install"), into dist/ (docs/install.md):
#   make package   the .deb, the AppImage, the Windows build
#   make release   a clean dist/ with those, the Linux CLI tarball and SHA256SUMS
#   make test-package  builds and checks the .deb and the cross-builds
DIST := dist
deb: desktop
	@build/deps.sh package
	OUT=$(DIST) build/package.sh $(BIN) $(VERSION)

# The Windows desktop app, cross-compiled (no cgo: Wails uses WebView2), as a
# zip of one folder, memtray_<version>_windows_amd64/, holding memtray.exe,
# LICENSES.txt (build/copyright.sh of that exe: the licences of everything
# compiled in, which MIT, BSD and Apache ask a binary to carry) and README.md
# with the docs/ it links to, as the Linux CLI tarball does. Entries are
# sorted and dated at the commit, so one commit zips the same bytes.
WIN_ZIP := memtray_$(VERSION)_windows_amd64
windows: frontend
	@build/deps.sh package
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && mkdir -p $(DIST) "$$d/$(WIN_ZIP)" && \
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -trimpath -tags desktop,production \
	  -ldflags '$(LDFLAGS) -H=windowsgui' -o "$$d/$(WIN_ZIP)/memtray.exe" ./app && \
	build/copyright.sh "$$d/$(WIN_ZIP)/memtray.exe" "memtray.exe beside this file" >"$$d/$(WIN_ZIP)/LICENSES.txt" && \
	build/doc-tree.sh "$$d/$(WIN_ZIP)" && \
	find "$$d/$(WIN_ZIP)" -exec touch -h -d @$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)} {} + && \
	rm -f $(DIST)/$(WIN_ZIP).zip && \
	(cd "$$d" && find $(WIN_ZIP) | LC_ALL=C sort | TZ=UTC zip -q -X -@ $(abspath $(DIST))/$(WIN_ZIP).zip)
	@echo "$(DIST)/$(WIN_ZIP).zip"

# The headless program for any Linux (static: serve, the CLI; the UI in a browser),
# as release tarballs are: one folder, memtray_<version>_linux_amd64/, holding
# the binary, LICENSES.txt (build/copyright.sh of that binary: the licences
# of everything compiled in), and README.md with the docs/ it links to
# (build/doc-tree.sh).
CLI_TGZ := memtray_$(VERSION)_linux_amd64
linux-cli: frontend
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && mkdir -p $(DIST) "$$d/$(CLI_TGZ)" && \
	GOOS=linux GOARCH=amd64 CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o "$$d/$(CLI_TGZ)/memtray" ./app && \
	build/copyright.sh "$$d/$(CLI_TGZ)/memtray" "memtray beside this file" >"$$d/$(CLI_TGZ)/LICENSES.txt" && \
	build/doc-tree.sh "$$d/$(CLI_TGZ)" && chmod 0755 "$$d/$(CLI_TGZ)" && chmod 0644 "$$d/$(CLI_TGZ)/LICENSES.txt" && \
	tar -C "$$d" --owner=0 --group=0 --numeric-owner --mtime=@$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)} --sort=name \
	  -czf $(DIST)/$(CLI_TGZ).tar.gz $(CLI_TGZ)
	@echo "$(DIST)/$(CLI_TGZ).tar.gz"

package: deb appimage windows

release:
	rm -rf $(DIST)
	$(MAKE) --no-print-directory package linux-cli VERSION=$(VERSION) COMMIT=$(COMMIT) BUILD_DATE=$(BUILD_DATE)
	cd $(DIST) && sha256sum $$(ls | grep -v '^SHA256SUMS$$' | LC_ALL=C sort) >SHA256SUMS && sha256sum -c SHA256SUMS
	@ls -l $(DIST)

test-package:
	build/test-package.sh

clean:
	rm -rf bin $(DIST)

# Word vectors for the built-in embedder (issue 9): installs the pinned Debian
# documentation packages and WordNet (apt-get), extracts their prose and
# trains backend/embed/wordvec/model/{wordvec.bin,thesaurus.txt,manifest.json}
# (about 2 minutes, under 2 GB). Same package versions and seed: same bytes.
model:
	@echo "model: trains the word vectors and thesaurus the binary embeds (see docs/development.md)"
	$(GO) run ./cmd/trainvec -install -out backend/embed/wordvec/model
