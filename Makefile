# imgflow — build, run the sample workflow, test.
GO    ?= go
BIN   := bin/imgflow
FLATCAR_VARS := --var version=4152.2.3 --var vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd

# Tools `make deps` installs (packer 1.9.5, Azurite) come first on PATH for
# every recipe, so the tests run them rather than older system copies.
export PATH := $(CURDIR)/.tools/bin:$(PATH)

# -trimpath for every go command: imgflow's packages are compiled under
# the module's path rather than this directory's, so the Go build cache
# serves them to any copy of the repository (the README examples' test
# builds imgflow in one: without it, a recompile of all of imgflow each
# time) and to the build tools (-trimpath too).
export GOFLAGS := -trimpath $(GOFLAGS)

# imgflow calls no C, so it is linked without cgo: a static binary has no
# dynamic loader to run and no libc to map, which on a machine where each
# page fault is dear takes ~10 ms off every command (BENCHMARKS.md,
# "Start-up and plan"). Every build and the local tests share that one
# variant in the Go build cache; the race detector needs cgo, so CI's
# tests (CI=true) build with it, and only the binary stays static there.
ifneq ($(CI),true)
export CGO_ENABLED := 0
endif

.PHONY: build install run test deps vet fmt-check tidy-check lint docs ci-files clean

# The version imgflow reports (imgflow version) and the CI files it
# generates pin (imgflow ci): the tag at HEAD or the Go pseudo-version of
# HEAD.
VERSION ?= $(shell scripts/version.sh)
LDFLAGS := -X main.version=$(VERSION)

# Says what it does first: on a fresh machine the build compiles every
# dependency (the Azure SDK among them) for minutes without a word.
# A line every 30 s while go build runs: a first build is minutes of
# silence otherwise.
build:
	@echo "building $(BIN) (go build; the first time compiles imgflow's dependencies: a few minutes on two cores)"
	@( while sleep 30; do echo "  still compiling $(BIN) ..."; done ) & ticker=$$!; \
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/imgflow; rc=$$?; kill $$ticker; exit $$rc

# Puts imgflow on PATH: go install writes it to $(go env GOBIN), else
# $(go env GOPATH)/bin, the directory to have on PATH.
install:
	CGO_ENABLED=0 $(GO) install -ldflags "$(LDFLAGS)" ./cmd/imgflow
	@echo "installed $$(command -v imgflow || echo "imgflow in $$($(GO) env GOPATH)/bin: add that directory to PATH")"

# The README's first command: publish a sample Flatcar release on the
# embedded local target (state in .imgflow/). Run it twice: the second run
# changes nothing.
run: build
	$(BIN) run workflows/flatcar.star $(FLATCAR_VARS)
	$(BIN) state

# Tools the tests need, installed when missing (qemu-img for the VHD tests,
# packer 1.9.5 for the runner tests against real output, Azurite, actionlint
# for the generated GitHub workflows).
deps:
	@scripts/deps.sh
	@echo "tools: $$(packer version 2>/dev/null || echo 'packer still building') / $$(qemu-img --version | head -1)"

vet:
	$(GO) vet ./...

# go.mod and go.sum say exactly what the code imports.
tidy-check:
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Workflows, libraries and release files: formatted as buildifier does,
# and lint-clean (buildifier's warnings plus imgflow's checks).
lint: build
	$(BIN) fmt -check workflows lib releases
	$(BIN) lint workflows lib releases

# The README's second command: everything, set-up included.
#
# Go tests run package by package (scripts/gotest.sh), TEST_JOBS at a time, each
# under its own go test -timeout: TEST_TIMEOUT for most, the limits in
# TEST_TIMEOUTS for the slow ones (listed slowest first; they start first).
# The limits are sized for the race detector on a 2-core machine that
# other builds keep busy (load 20-30): at least twice what each package
# took there (BENCHMARKS.md), many times what it takes on an idle one. A package past
# its limit fails with the limit and the test it was in; a line every
# minute says which packages are still running and where.
#
# TEST_FLAGS: every test runs every time (-count=1): many run programs
# go test's cache cannot see (packer, Azurite, qemu-img, bash), so a
# cached pass would not say they still work. In CI (CI=true, as .ci/run
# and GitHub Actions set it) the same tests run under the race detector:
# the uploads, copies, leases, parallel steps and the emulator's servers
# are where the concurrency lives. The race detector costs 2-8 times the
# CPU (go test -count=1 per package, with / without -race: cloud/azure
# 222 / 46 s, cloud/local 88 / 11 s, builtins 28 / 13 s, at load 4-14),
# which two cores cannot fit in a few minutes: a local `make test` runs
# every test without it, `make test CI=true` is CI's run.
TEST_TIMEOUT  ?= 5m
TEST_TIMEOUTS ?= ./workflows=20m ./cloud/azure=15m ./cmd/imgflow=12m \
                 ./cloud/local=12m ./cloud/overlay=8m ./cloud=5m ./packer=5m \
                 ./journal=5m ./builtins=5m ./cloud/conformance=5m \
                 ./cmd/imgflow-emulator=5m ./artifacts=5m
#
# TEST_JOBS: without the race detector the big packages spend most of
# their time waiting (Azurite and node starting, leases running out,
# packer starting its plugins, go build in the doc examples): cmd/imgflow
# used under half a core, cloud/azure a quarter. Three at a time keeps
# both cores busy; under -race the tests themselves fill them, so CI
# runs two.
ifeq ($(CI),true)
TEST_FLAGS    ?= -race -count=1
TEST_JOBS     ?= 2
else
TEST_FLAGS    ?= -count=1
TEST_JOBS     ?= 3
endif
# bin/test keeps the test binaries: a package whose test binary is up to
# date is not linked again (scripts/gotest.sh -b).
# packer builds in the background from `deps` on (minutes on a fresh
# machine); the packages whose tests run it wait for it, the others go first.
# The workflows' Starlark tests run in the Go tests, `imgflow test` on the
# repository's workflows among them (cmd/imgflow's
# TestTestCommandOnTheRepositoryWorkflows), not again after them.
PACKER_TESTS  := ./workflows ./cmd/imgflow ./packer ./artifacts
test: export DEPS_PACKER = background
test: deps fmt-check tidy-check vet build lint
	GO=$(GO) scripts/gotest.sh -j $(TEST_JOBS) -t $(TEST_TIMEOUT) -b bin/test -w 'scripts/packer.sh --wait' $(addprefix -a ,$(PACKER_TESTS)) \
		-s ./cloud/conformance:TestAzure $(TEST_TIMEOUTS) -- $(TEST_FLAGS)

# Regenerate the CI definitions of the shipped releases under ci/ (a test
# fails when they are out of date).
# They live in imgflow's own repository, so their jobs build imgflow from
# the commit they run on (--imgflow-version checkout), never a version
# that the files would have to name before it exists.
RELEASES := $(basename $(notdir $(wildcard releases/*.star)))
CI_FLAGS := --imgflow-version checkout
ci-files: build
	@for r in $(RELEASES); do \
		$(BIN) ci github $(CI_FLAGS) releases/$$r.star -o ci/github/release-$$r.yml && \
		$(BIN) ci azure-pipelines $(CI_FLAGS) releases/$$r.star -o ci/azure-pipelines/release-$$r.yml || exit 1; \
	done

# Regenerate the builtin reference in WORKFLOWS.md.
docs: build
	$(BIN) doc --update WORKFLOWS.md

clean:
	rm -rf bin .imgflow

# Benchmarks: never part of `make test`; results and the machine in
# BENCHMARKS.md.
.PHONY: bench-deps bench-vhd bench-datapath

# What the VHD benchmark needs besides the tests' tools: azcopy (npm) and
# its libsecret, GNU time.
bench-deps:
	@bench/deps.sh

# VHD upload to Azurite, imgflow vs azcopy on the same files, and
# Azurite's own ingest ceiling (about 25 minutes; -runs sets the runs).
bench-vhd: bench-deps
	$(GO) run ./bench/vhd

# The data path's Go benchmarks: sparse digest, chunking (cloud/transfer),
# zero detection (vhd).
bench-datapath:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./cloud/transfer/ ./vhd/
