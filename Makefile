# Quire — make targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/quire
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X quire/node.Version=$(VERSION)
LISTEN ?= 127.0.0.1:8080
DATA ?= ./data
TEST_TIMEOUT ?= 30m

.PHONY: help build run test vet fmt-check disk-check fuzz fuzz-check bench bench-scale deps hydra clean package cross upgrade-fixture

# Packages: nfpm pinned (v2.46+ needs modules the Go proxy refuses).
NFPM := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.0
DIST ?= dist
PKG_VERSION ?= 0.6.0~git$(shell git rev-parse --short HEAD 2>/dev/null || echo 0)
ARCHES ?= amd64 arm64

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/quire
	@if ! $(GO) list -m -f '{{.Dir}}' github.com/dgraph-io/badger/v4 2>/dev/null | grep -q .; then \
		echo "Downloading Go modules (first build only; about a minute)..."; $(GO) mod download; fi
	@if [ ! -x $(BIN) ]; then echo "Building $(BIN) (the first build compiles every dependency: 1-2 minutes on 2 cores; later builds take seconds)..."; \
	else echo "Building $(BIN)..."; fi
	@CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

run: build ## start the server on 127.0.0.1:8080 with data in ./data
	@mkdir -p -m 750 $(DATA)
	@echo "Quire $(VERSION) on http://$(LISTEN), data in $(DATA)"
	@echo "Get an admin token in another terminal:"
	@echo "  TOKEN=\$$($(BIN) token --data-dir $(DATA) --user admin --groups Admins)"
	@echo "  curl -H \"Authorization: \$$TOKEN\" http://$(LISTEN)/sites"
	$(BIN) serve --listen $(LISTEN) --data-dir $(DATA) --public-url http://$(LISTEN)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# vet compiles the packages it checks with the flags of `make build` and of
# the tests' quire binary (quiretest.QuireBinary: CGO_ENABLED=0, -trimpath;
# Quire has no cgo file), so on a fresh machine the packages are compiled
# once for both instead of twice: a cold `go vet ./...` after a cold build
# took 460 CPU-s with go vet's default flags and 243 CPU-s with these
# (2026-12-03, same load; -ldflags only change the link).
vet:
	CGO_ENABLED=0 $(GO) vet -trimpath ./...

# Programs the tests run for real (the action pipeline's engines, chromium for
# the console, npm for axe-core): program -> Debian package.
ENGINES := curl:curl smbd:samba smbclient:smbclient qemu-aarch64-static:qemu-user-static tesseract:tesseract-ocr clamd:clamav-daemon ocrmypdf:ocrmypdf gs:ghostscript img2pdf:img2pdf pdftotext:poppler-utils pdftoppm:poppler-utils pdfinfo:poppler-utils qpdf:qpdf soffice:libreoffice-writer-nogui chromium:chromium pdfsig:poppler-utils openssl:openssl npm:npm wine:wine

# axe-core, the accessibility checker the console's Chromium tests inject
# (npm, into build/tools; the tests skip it where it is missing, outside CI).
AXE_VERSION := 4.14.1
AXE := build/tools/node_modules/axe-core/axe.min.js
ENGINES += swaks:swaks cadaver:cadaver litmus:litmus

# Tesseract's language data the OCR action reads (a site's processing.languages
# names them; osd finds a scan's orientation): tesseract-ocr-<lang>.
OCR_LANGS := eng deu fra ita spa nld osd

deps: ## install the engines the tests use (Debian packages; as root, or says what to install)
	@missing=""; for e in $(ENGINES); do command -v $${e%%:*} >/dev/null 2>&1 || missing="$$missing $${e#*:}"; done; \
	for l in $(OCR_LANGS); do [ -f /usr/share/tesseract-ocr/5/tessdata/$$l.traineddata ] || [ -f /usr/share/tesseract-ocr/4.00/tessdata/$$l.traineddata ] || missing="$$missing tesseract-ocr-$$l"; done; \
	[ -x /usr/lib/wine/wine64 ] || missing="$$missing wine64"; \
	perl -MNet::SSLeay -e1 2>/dev/null || missing="$$missing libnet-ssleay-perl"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	missing=$$(echo $$missing | tr ' ' '\n' | sort -u | tr '\n' ' '); \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else \
		echo "missing engines, install with: sudo apt-get install $$missing"; \
		if [ "$$CI" = true ]; then exit 1; fi; \
	fi
	@if [ ! -f $(AXE) ]; then \
		if command -v npm >/dev/null 2>&1; then echo "installing axe-core $(AXE_VERSION) into build/tools"; \
			npm install --silent --no-audit --no-fund --prefix build/tools axe-core@$(AXE_VERSION) >/dev/null || exit 1; \
		else echo "npm missing: the console's accessibility checks need axe-core (apt-get install npm)"; \
			if [ "$$CI" = true ]; then exit 1; fi; fi; fi

# The OpenID provider the sign-in tests run for real (console/hydra_test.go):
# ory/hydra v2.3.0 from the module proxy, built from its own module in
# tools/hydra (hydra's go.mod replaces gobuffalo/pop with ory's fork, so
# `go install github.com/ory/hydra/v2@v2.3.0` refuses; tools/hydra pins the
# fork), with SQLite (cgo) for its in-memory database. Built once.
HYDRA := build/tools/hydra
hydra: $(HYDRA) ## build the OpenID provider the tests sign in through (ory/hydra v2.3.0)
$(HYDRA): tools/hydra/go.mod tools/hydra/go.sum
	@echo "building ory/hydra v2.3.0 into $(HYDRA) (the first time compiles it: several minutes on 2 cores)"
	@mkdir -p $(dir $(HYDRA))
	cd tools/hydra && CGO_ENABLED=1 $(GO) build -trimpath -tags sqlite,sqlite_omit_load_extension -o $(CURDIR)/$(HYDRA) github.com/ory/hydra/v2

# The slowest test packages first: go test runs -p (the core count) test
# binaries at once in the order the packages are named, so naming the
# longest first keeps both cores busy to the end instead of leaving a long
# package running alone at the tail. Order measured per package (wall,
# -race, 2026-12-02 testtimes, after the storage and server/documents test
# setup went concurrent): node, console, server, server/documents,
# server/flow, pipeline, the root package, storage, server/content.
TEST_FIRST := ./node ./console ./server ./server/documents ./server/flow ./pipeline . ./storage ./server/content ./packaging
# Test binaries run at once (go test's default is the core count). 3 on 2
# cores was measured on the same tree (2026-12-02): 22:55 wall against
# 19:27 at 2 (the node package 932 s instead of 620 s), so the default stays.
TEST_P ?= $(shell nproc)

# The tests' servers refuse writes when their disk has less than the store's
# reserve (storage.MinReserve, about 195 MiB) free, as a real server must; a
# nearly full build machine then fails cluster tests far from the cause (CI
# saw 194.9 MiB free on 2026-12-02; a whole run took 2.5 GB at its peak on
# 2026-12-02). disk-check says so up front, and prints
# the free space so a failing run shows it.
TEST_MIN_FREE_MB ?= 4096
disk-check:
	@cache=$$($(GO) env GOCACHE); mkdir -p "$$cache"; \
	for d in "$${TMPDIR:-/tmp}" "$$cache"; do \
		free=$$(df -Pk "$$d" | awk 'NR==2 {print $$4}'); \
		echo "disk: $$((free / 1024)) MiB free under $$d"; \
		if [ "$$free" -lt $$(($(TEST_MIN_FREE_MB) * 1024)) ]; then \
			echo "make test needs $(TEST_MIN_FREE_MB) MiB free under $$d (the tests' servers refuse writes below their reserve); free some space"; exit 1; fi; \
	done

# build first: the tests that run quire as a user does (quiretest.QuireBinary:
# quire serve children, the README's blocks) build it with the same flags, so
# its packages come from the cache instead of compiling inside one test's
# deadline on a fresh machine (484 s in one node test with a cold cache).
#
# TEST_FLAGS: vet ran whole just before (the vet target), so go test's own
# pass of a subset of its checks is off; the test binaries are linked
# without DWARF (-w: ~1.6 of a package's ~5.7 CPU-s link under -race;
# panics and the race detector's reports keep their stacks, which come
# from the symbol and line tables -w keeps).
#
# A few third-party packages that only compute, on data the call that
# runs them made or was handed, are compiled without the race detector's
# instrumentation (-race=false); Quire's own code and every other package
# stay instrumented, and the happens-before edges of channels and locks
# (the runtime's and package sync's) stay tracked, so a race in our code
# is still found where our code writes or reads. What such a package no longer reports is a race whose both sides
# are inside it, or whose other side is in it: each is listed with why
# our code gives it nothing another goroutine writes meanwhile.
# - Bleve's segment code (zapx) and its FST builder (vellum, with its
#   query automata): each segment built or merged clears a 10,000-entry
#   vellum registry per field, and under -race those loads and stores were
#   most of the cost of indexing in every test that writes documents
#   (index/DESIGN.md, "Persister nap for a small index"). A segment is
#   built from one batch's analysed documents, which nothing changes
#   after the batch is handed to Bleve (zapx's sync/atomic counters,
#   statistics only, become atomic instructions the detector does not see).
# - Bleve's text analysis: its tokenizers, token filters and analyzers
#   (bleve/v2/analysis/...), the Unicode word segmenter they run
#   (blevesearch/segment) and the stemmers (go-porterstemmer,
#   snowballstem): each call turns one field's bytes into a token stream
#   it allocates; the analyzers themselves are built once and only read.
#   Quire's own analysis code (index: the token cap, the chains) stays
#   instrumented. Under -race the segmenter and the Porter stemmer were
#   the two largest owners of server/content's test CPU (17% and 13% of
#   the samples, perf) and 11% and 2% of index's.
# - golang.org/x/image (thumbnail and OCR scaling, TIFF/BMP/WebP decoders,
#   the watermark's font rasteriser): each image is decoded, scaled and
#   drawn within one call on images that call made; the one object shared
#   between goroutines, the parsed watermark font, is only read (a face is
#   made per drawing).
# Measured (race-built test binaries with and without these, alternated
# on the shared 2-core machine, user + system CPU-s): see the commit.
TEST_NORACE := github.com/blevesearch/zapx/v17 github.com/blevesearch/vellum/... \
	github.com/blevesearch/bleve/v2/analysis/... github.com/blevesearch/segment \
	github.com/blevesearch/go-porterstemmer github.com/blevesearch/snowballstem/... \
	golang.org/x/image/...
TEST_FLAGS ?= -vet=off -ldflags=-w $(foreach p,$(TEST_NORACE),-gcflags=$(p)=-race=false)
# TEST_GORACE: the race runtime's options for the test binaries, before
# any the caller's GORACE sets (a later option wins). atexit_sleep_ms=0:
# by default a race-built program that exits with goroutines still alive
# sleeps 1 s first, for races those goroutines might still make; a test
# binary exits once every test has ended and stopped what it started, so
# what is left are idle loops (a closed server's keep-alive timers, a
# client's idle connections) and the second was idle wall in each of the
# 35 test binaries: about 35 s of package wall, 17 s of make test's at
# -p 2. Races made while the tests run are found as before.
TEST_GORACE ?= atexit_sleep_ms=0
test: deps $(HYDRA) fmt-check vet fuzz-check disk-check build ## gofmt, go vet and all tests with the race detector
	GORACE="$(TEST_GORACE) $$GORACE" QUIRE_HYDRA=$(CURDIR)/$(HYDRA) $(GO) test -race -count=1 $(TEST_FLAGS) -p $(TEST_P) -timeout $(TEST_TIMEOUT) $(TEST_FIRST) ./...

# Every fuzz target, as package:FuzzName: `go test -fuzz` takes one target
# per run. fuzz-check (part of `make test`) fails when this list and the
# Fuzz functions in the code differ. The seeds of each run in every
# `go test` as plain tests.
FUZZ_TARGETS := \
	./server:FuzzMatchPhrase \
	./server:FuzzNormalizePath \
	./server:FuzzPagingNumbers \
	./server:FuzzPagingTokens \
	./server:FuzzQueryTranslate \
	./server:FuzzRouteBodies \
	./safepath:FuzzJoin \
	./storage:FuzzListingToken \
	./storage:FuzzNormalizeDate \
	./storage:FuzzNumberEncoding
FUZZTIME ?= 30s

fuzz-check:
	@found=$$(grep -rnoE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . | sed -E 's#^(.*)/[^/]+:[0-9]+:func #\1:#' | sort); \
	listed=$$(printf '%s\n' $(FUZZ_TARGETS) | sort); \
	if [ "$$found" != "$$listed" ]; then echo "FUZZ_TARGETS in the Makefile differs from the Fuzz functions in the code:"; \
		diff <(echo "$$listed") <(echo "$$found"); exit 1; fi

fuzz: fuzz-check ## run each fuzz target for FUZZTIME (default 30s), one after the other
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $$t for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; \
	done

bench: build ## benchmarks as ratios against baselines measured in the same run (BENCHFLAGS="-quick -out F")
	$(GO) run ./bench $(BENCHFLAGS)

SCALE_DATA ?= /var/tmp/quire-scale
bench-scale: build ## as root: the server in memory cgroups (unlimited, 512, 256 MiB) over 1,000,000 documents kept in SCALE_DATA (BENCHFLAGS="-scale-docs 100000")
	$(GO) run ./bench -scale-only -scale-data $(SCALE_DATA) $(BENCHFLAGS)

cross: ## build for windows/amd64 and linux/arm64 (pure Go, CGO off)
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -trimpath -o /dev/null .
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -o /dev/null .

package: ## .deb and .rpm for linux amd64 and arm64, and a Windows zip, in $(DIST)/
	@rm -rf $(DIST) build/pkg && mkdir -p $(DIST) build/pkg
	$(GO) run . config example --data-dir /var/lib/quire --log-format json > build/pkg/quire.toml
	@set -e; for a in $(ARCHES); do \
		echo "linux/$$a"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$a $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o build/pkg/quire . ; \
		for p in deb rpm; do ARCH=$$a PKG_VERSION='$(PKG_VERSION)' $(GO) run $(NFPM) package -f packaging/nfpm.yaml -p $$p -t $(DIST)/ ; done; \
	done
	@echo windows/amd64
	@mkdir -p $(DIST)/windows_amd64
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(DIST)/windows_amd64/quire.exe .
	$(GO) run . config example --data-dir 'C:\ProgramData\Quire\data' --clamd tcp:127.0.0.1:3310 > $(DIST)/windows_amd64/quire.toml
	$(GO) run ./packaging/mkzip -o $(DIST)/quire_$(subst ~,-,$(PKG_VERSION))_windows_amd64.zip \
		$(DIST)/windows_amd64/quire.exe=quire/quire.exe $(DIST)/windows_amd64/quire.toml=quire/quire.toml \
		packaging/windows/README.txt=quire/README.txt packaging/grafana-dashboard.json=quire/grafana-dashboard.json \
		packaging/alerts.yml=quire/alerts.yml
	@ls -l $(DIST)/*.deb $(DIST)/*.rpm $(DIST)/*.zip

# The older release the upgrade tests start from (upgrade/): a commit of
# this repository's history, the one place it is named.
UPGRADE_FROM := 3bdaef727ba46ea1eacfb1bc0f9f49a1fb160137

upgrade-fixture: ## rebuild upgrade/testdata from the release UPGRADE_FROM names (needs git history)
	$(GO) run ./upgrade/mkfixture -commit $(UPGRADE_FROM) -out upgrade/testdata
	@ls -l upgrade/testdata

systemd/quire.service: cli/service.go ## regenerate the unit file from `quire service unit`
	$(GO) run . service unit > $@

clean: ## remove build output
	rm -rf bin build $(DIST)
