# stackimage: see README.md. `make test` is what CI runs.
GO        ?= go
GOFLAGS   ?=
TAGS      ?= unicorn
PKGS      := ./...
SAMPLE    ?= fixtures/snapshots/arm64-O1-deepest.json

.PHONY: all build test vet fmt-check deps fixture-deps run bench fuzz accuracy fixtures cross

all: build

build:
	$(GO) build -o bin/stackimage ./cmd/stackimage

# deps installs what the tests need on Debian when it is missing: the Unicorn
# C library for emu/ (cgo, behind the unicorn build tag).
deps:
	@pkg-config --exists unicorn 2>/dev/null || { \
	  echo "installing libunicorn-dev"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libunicorn-dev pkg-config; }

# fixture-deps adds the compilers `make fixtures` needs.
fixture-deps: deps
	@command -v clang-16 >/dev/null && command -v ld64.lld-16 >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-16 lld-16; }

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

test: deps fmt-check vet cross
	$(GO) test -tags $(TAGS) $(GOFLAGS) $(PKGS)

run: build
	./bin/stackimage symbolicate $(SAMPLE) --symbols fixtures/bin

# fixtures rebuilds the emulation fixtures from fixtures/src (binaries and
# MANIFEST.json are committed, so tests never need the toolchain).
fixtures: fixture-deps
	fixtures/build.sh
