# stackimage: see README.md. `make test` is what CI runs.
GO        ?= go
GOFLAGS   ?=
TAGS      ?= unicorn
PKGS      := ./...
SAMPLE    ?= fixtures/snapshots/chain-arm64-O1-deepest.json

.PHONY: all build test vet fmt-check deps fixture-deps bench-deps bench-bins run bench bench-aggregate fuzz accuracy fixtures cross e2e e2e-deps faults loadtest

all: build

# build puts the program, every command and the service (stackimage
# serve) in one, in bin/. It is built without cgo: statically linked, it
# starts without the dynamic loader (0.79 of `stackimage version`'s time),
# which every short command pays.
build:
	CGO_ENABLED=0 $(GO) build -o bin/stackimage ./cmd/stackimage

# deps installs what the tests need on Debian when it is missing: a C
# compiler (gcc, libc6-dev) for cgo and -race; the Unicorn C library for
# emu/ (cgo, behind the unicorn build tag); lldb-16, the external check
# that our Mach-O cores read the same in lldb; llvm (llvm-symbolizer),
# which symtab's golden test asks for an image no golden file covers;
# llvm-16 (llvm-dwarfdump-16), the oracle of unwind/dwarfcfi's
# regression binaries; chromium, which the service's /ui/ test drives
# headless; debuginfod-find, the client the service's debuginfod test
# runs; and clang-16 and lld-16, with which emu's tests build programs
# generated afresh from new seeds (under `make test` these tests fail
# without them; a plain `go test` skips or logs).
deps:
	@command -v gcc >/dev/null && pkg-config --exists unicorn 2>/dev/null && command -v lldb-16 >/dev/null && \
	  command -v llvm-symbolizer >/dev/null && command -v llvm-dwarfdump-16 >/dev/null && [ -x /usr/bin/chromium ] && \
	  command -v debuginfod-find >/dev/null && command -v clang-16 >/dev/null && command -v ld64.lld-16 >/dev/null || { \
	  echo "installing gcc, libunicorn-dev, lldb-16, llvm, llvm-16, chromium, debuginfod, clang-16 and lld-16"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev libunicorn-dev pkg-config lldb-16 llvm llvm-16 chromium debuginfod clang-16 lld-16; }

# fixture-deps adds the compilers `make fixtures` needs, and dsymutil-16
# (llvm-16) for the fixtures' dSYMs.
fixture-deps: deps
	@command -v clang-16 >/dev/null && command -v ld64.lld-16 >/dev/null && command -v dsymutil-16 >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-16 lld-16 llvm-16; }

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet -tags $(TAGS) $(PKGS)

# cross checks that everything but emu/ is pure Go and cross-compiles.
cross:
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build ./...
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build ./...
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build ./...

# RACE_PKGS are the packages that start goroutines or share state
# through package sync: `make test` runs their tests again under the race
# detector (internal/layercheck's TestRaceCoversConcurrency keeps the
# list whole), with -short, which leaves out the comparisons over the
# whole darwin cmd/go that take minutes without it (their concurrency is
# the short tests'), and a longer timeout: the detector slows the rest
# several times.
RACE_PKGS := ./aggregate/ ./aggregate/chunkstore/ ./debuginfo/ ./image/ ./serve/ ./symbolize/ ./symindex/ ./symstore/ ./symtab/ \
	./swiftdemangle/ ./demangle/ ./unwind/compactunwind/ ./unwind/dwarfcfi/ ./internal/hostile/ ./internal/lazyregexp/ \
	./internal/plcrashgen/ ./internal/parallel/ ./symbolicator/ ./symstore/indexcache/ ./walker/

# test has installed what the tests compare with (deps), so a test that
# needs one fails rather than skips when it is missing (internal/testtool).
test: deps fmt-check vet cross
	STACKIMAGE_REQUIRE_TOOLS=1 $(GO) test -tags $(TAGS) $(GOFLAGS) $(PKGS)
	STACKIMAGE_REQUIRE_TOOLS=1 $(GO) test -race -short -timeout 30m $(GOFLAGS) $(RACE_PKGS)
	$(MAKE) e2e
	$(MAKE) faults

# e2e-deps installs what the service's end-to-end test runs: nginx and
# debuginfod-find from Debian, and versitygw (Apache-2.0), an S3 gateway,
# built from source at a fixed version.
VERSITYGW_VERSION ?= v1.8.0
VERSITYGW ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)/versitygw
e2e-deps:
	@command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] && command -v debuginfod-find >/dev/null || { \
	  echo "installing nginx and debuginfod"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx debuginfod; }
	@[ -x "$(VERSITYGW)" ] || { echo "installing versitygw $(VERSITYGW_VERSION)"; \
	  $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION); }

# loadtest measures one `stackimage serve` instance (bin/stackimage) with
# vegeta (a Go load-generating library): the latency curve on stacks of 30 frames over
# 5 images, 100k addresses of cmd/go against llvm-symbolizer on a pipe,
# and the first answer for a cold UUID from a versitygw bucket
# (bench/serveload; docs/serve.md has the figures).
loadtest: bench-deps bench-bins e2e-deps build
	$(GO) run ./bench/serveload -stackimage bin/stackimage -gobin $(GO_DWARF) -versitygw $(VERSITYGW)

# e2e runs three `stackimage serve` instances behind nginx, sharing a
# versitygw bucket, and debuginfod-find against them (serve/e2e_test.go);
# the test builds the command, and starts and stops every process
# itself, on loopback.
e2e: e2e-deps
	VERSITYGW=$(VERSITYGW) NGINX=$$(command -v nginx || echo /usr/sbin/nginx) \
	  $(GO) test -tags e2e -run E2E -count=1 -timeout 10m $(GOFLAGS) ./serve/

# faults runs the service's fault suite (serve/faults*_test.go, about a
# minute): slow and dead HTTP sources, versitygw stopped and restarted
# mid-traffic, objects cut and flipped in its bucket, clients sending a
# byte a second, hostile dumps and zips. Every process is started and
# stopped by the test, on loopback; docs/serve.md ("Under faults") gives
# what each scenario measures.
faults: e2e-deps
	VERSITYGW=$(VERSITYGW) $(GO) test -tags faults -run Faults -count=1 -timeout 5m -v $(GOFLAGS) ./serve/

run: build
	./bin/stackimage symbolicate $(SAMPLE) --symbols fixtures/bin

# fixtures rebuilds the emulation fixtures from fixtures/src (binaries and
# MANIFEST.json are committed, so tests never need the toolchain).
fixtures: fixture-deps
	fixtures/build.sh

CORPUS    ?= ../shared/corpus
DWARF_OBJ ?= $(CORPUS)/symbolic/symbolic-testutils/fixtures/macos/crash.dSYM/Contents/Resources/DWARF/crash

# bench-deps adds the peer the benchmarks compare with (llvm-symbolizer) and
# GNU time, which reports a child's peak memory.
bench-deps:
	@command -v llvm-symbolizer >/dev/null && command -v llvm-gsymutil-16 >/dev/null && [ -x /usr/bin/time ] || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm llvm-16 time; }

# BENCH_BINS holds the darwin builds of cmd/go the comparisons read: one
# without DWARF (-w) and one with uncompressed DWARF, which LLVM 14 can read
# (go build caches them; they are never committed).
BENCH_BINS ?= $(HOME)/.cache/stackimage-bench
GO_NODWARF := $(BENCH_BINS)/go-darwin-arm64-nodwarf
GO_DWARF   := $(BENCH_BINS)/go-darwin-arm64-dwarf
COMPARE    := bin/compare
# LLVMS are the llvm-symbolizers the DWARF comparisons run beside ours, in
# the same run: Debian's default (LLVM 14) and LLVM 16 (make fixture-deps).
LLVMS      := llvm-symbolizer,llvm-symbolizer-16

bench-bins:
	@mkdir -p $(BENCH_BINS)
	GOOS=darwin GOARCH=arm64 $(GO) build -ldflags=-w -o $(GO_NODWARF) cmd/go
	GOOS=darwin GOARCH=arm64 $(GO) build -ldflags=-compressdwarf=false -o $(GO_DWARF) cmd/go
	$(GO) build -o $(COMPARE) ./bench/compare

# BIGDSYM_UNITS is the size of the generated program whose dSYM (over
# 200 MB) the last comparison reads; it is built once into the user's cache
# directory (docs/bench-bigdsym.md). BIGDSYM_RUNS: runs of each program.
BIGDSYM_UNITS ?= 110
BIGDSYM_RUNS  ?= 3
# GSYM_RUNS: runs of each build and batch in the GSYM comparison.
GSYM_RUNS     ?= 5

# bench runs the in-process benchmarks, then stackimage against
# llvm-symbolizer as whole processes on the same addresses, and prints the
# ratios (docs/bench.md explains each comparison and its target); last on a
# generated real-size dSYM (docs/bench-bigdsym.md).
bench: bench-deps fixture-deps bench-bins
	$(GO) test -run='^$$' -bench=. -benchmem ./symtab/ ./walker/ ./snapshot/ ./debuginfo/ ./cmd/stackimage/ \
	  ./symbolize/ ./symstore/ ./unwind/... ./minidump/ ./machocore/ ./breakpadsym/ ./swiftdemangle/ ./hangreport/ ./symindex/
	@echo "== symbol table in process, one core: lookup/N calls Lookup per address, batch/N LookupBatch (target: 10M lookups/s at 1M symbols)"
	$(GO) test -run='^$$' -bench='BenchmarkSynthetic/(lookup|batch)' -cpu 1 -count 3 ./symtab/
	@echo "== symbol table, cmd/go without DWARF (target: 5x faster)"
	$(COMPARE) -bin $(GO_NODWARF)
	@echo "== symbol table, cmd/go with compressed DWARF (LLVM 14 loads but cannot read it)"
	$(COMPARE)
	@echo "== first answer with debug info, cmd/go with uncompressed DWARF (target: 0.5x the wall time, no more memory)"
	$(COMPARE) -mode dwarf -bin $(GO_DWARF) -n 1 -runs 10 -llvm $(LLVMS)
	@echo "== 100k addresses with debug info, cmd/go with uncompressed DWARF (target: 3x faster than each LLVM)"
	$(COMPARE) -mode dwarf -bin $(GO_DWARF) -runs 3 -llvm $(LLVMS)
	@echo "== the same from a symindex file"
	$(COMPARE) -mode index -bin $(GO_DWARF) -runs 3
	@if [ -f "$(DWARF_OBJ)" ]; then echo "== debug info with inlines, crash.dSYM"; $(COMPARE) -mode dwarf -bin "$(DWARF_OBJ)" -llvm $(LLVMS); \
	else echo "bench: $(DWARF_OBJ) absent, DWARF comparison not run"; fi
	@if command -v clang-16 >/dev/null && command -v ld64.lld-16 >/dev/null && command -v dsymutil-16 >/dev/null; then \
	  dwarf=$$($(GO) run ./bench/bigdsym -units $(BIGDSYM_UNITS)) && \
	  $(GO) run ./bench/compare -mode bigdsym -bin "$$dwarf" -runs $(BIGDSYM_RUNS) -llvm $(LLVMS); \
	else echo "bench: clang-16, ld64.lld-16 or dsymutil-16 missing (make fixture-deps installs them): big-dSYM comparison not run"; fi
	@echo "== symindex against LLVM's GSYM: size, build, 100k lookups, first answer (docs/symindex.md)"
	@if command -v clang-16 >/dev/null && command -v ld64.lld-16 >/dev/null && command -v dsymutil-16 >/dev/null; then \
	  dwarf=$$($(GO) run ./bench/bigdsym -units $(BIGDSYM_UNITS)) && \
	  $(GO) run ./bench/gsym -runs $(GSYM_RUNS) -bin $(GO_DWARF) -bin "$$dwarf"; \
	else $(GO) run ./bench/gsym -runs $(GSYM_RUNS) -bin $(GO_DWARF); fi

# fuzz runs every fuzz target for FUZZTIME. Seeds are minimized only
# briefly: some are real files, and byte-by-byte minimization of those
# would take the whole budget.
FUZZTIME ?= 20s
# FUZZJOBS runs that many targets side by side (scripts/fuzz.sh); each
# target's output is kept in FUZZLOG.
FUZZJOBS ?= 1
FUZZLOG  ?= fuzz-logs
FUZZ_TARGETS := \
	archregs:FuzzDecode image:FuzzOpen symtab:FuzzNewFromParts walker:FuzzWalk walker:FuzzInspect \
	snapshot:FuzzParse debuginfo:FuzzIndex demangle:FuzzDemangle demangle:FuzzItanium debuginfo:FuzzRangeLists debuginfo:FuzzFastWalk \
	crashreport:FuzzParseIPS crashreport:FuzzIPSFastMatchesStream crashreport:FuzzParseCrash crashreport:FuzzParseKSCrash crashreport:FuzzReadIPSStacks \
	fixtures:FuzzParseManifest emu:FuzzScanLoadCommands \
	unwind/compactunwind:FuzzParse unwind/dwarfcfi:FuzzParse \
	minidump:FuzzParse machocore:FuzzParse breakpadsym:FuzzParse \
	swiftdemangle:FuzzDemangle hangreport:FuzzParse \
	plcrash:FuzzParse report:FuzzCrashLayout \
	crashreport:FuzzWriteSymbolicatedCrash crashreport:FuzzWriteSymbolicatedIPS \
	symstore:FuzzZipMemberUUIDs symstore:FuzzParseSymbolMap symindex:FuzzOpen aggregate:FuzzReader aggregate:FuzzStreamFileInPlace aggregate:FuzzDecodeFast aggregate:FuzzDecodeChunk \
	internal/jsonscan:FuzzValueEnd internal/leb128:FuzzDecode \
	metrickit:FuzzParse \
	symbolize:FuzzSymbolicateSnapshot symstore:FuzzSameThinImage report:FuzzStreamedJSON \
	atos:FuzzScanWords serve:FuzzSymbolicate symbolicator:FuzzRequest symbolicator:FuzzFrames open:FuzzOpen
fuzz: deps
	@GO="$(GO)" TAGS="$(TAGS)" FUZZTIME="$(FUZZTIME)" FUZZJOBS="$(FUZZJOBS)" FUZZLOG="$(FUZZLOG)" \
	  scripts/fuzz.sh $(FUZZ_TARGETS)

# accuracy single-steps every fixture under Unicorn, walks and symbolicates
# at every instruction boundary and prints how often the walk is the truth
# (docs/accuracy.md records the table).
accuracy: deps
	@echo "commit $$(git rev-parse --short HEAD)"
	$(GO) run -tags unicorn ./cmd/accuracy

# bench-aggregate times stackimage aggregate on 1,000,000 generated stacks
# (as one stream file and as 10,000 .ips files) against pprof's own
# program (the one go tool pprof runs) with -proto merging the same
# stacks as per-device profiles, pair by pair, and checks that pprof -top
# of both profiles is the same
# (docs/aggregate.md). The inputs are made once into AGG_BENCH_DIR.
AGG_BENCH_DIR  ?= $(or $(TMPDIR),/tmp)/stackimage-bench-aggregate
AGG_BENCH_RUNS ?= 3
bench-aggregate: build
	$(GO) run ./bench/aggregate -dir $(AGG_BENCH_DIR) -bin bin/stackimage -symbols fixtures/bin -runs $(AGG_BENCH_RUNS)
