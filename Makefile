# Quire — make targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/quire
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X quire/node.Version=$(VERSION)
LISTEN ?= 127.0.0.1:8080
DATA ?= ./data
TEST_TIMEOUT ?= 20m

.PHONY: help build run test vet fmt-check bench deps clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/quire
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

run: build ## start the server on 127.0.0.1:8080 with data in ./data
	@mkdir -p $(DATA)
	@echo "Quire $(VERSION) on http://$(LISTEN), data in $(DATA)"
	@echo "Get an admin token in another terminal:"
	@echo "  TOKEN=\$$($(BIN) token --data-dir $(DATA) --user admin --groups Admins)"
	@echo "  curl -H \"Authorization: \$$TOKEN\" http://$(LISTEN)/sites"
	$(BIN) serve --listen $(LISTEN) --data-dir $(DATA) --public-url http://$(LISTEN)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Engines the action pipeline's tests run for real: program -> Debian package.
ENGINES := tesseract:tesseract-ocr clamd:clamav-daemon ocrmypdf:ocrmypdf pdftotext:poppler-utils pdftoppm:poppler-utils soffice:libreoffice-writer-nogui

deps: ## install the engines the tests use (Debian packages; as root, or says what to install)
	@missing=""; for e in $(ENGINES); do command -v $${e%%:*} >/dev/null 2>&1 || missing="$$missing $${e#*:}"; done; \
	[ -f /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ] || [ -f /usr/share/tesseract-ocr/4.00/tessdata/eng.traineddata ] || missing="$$missing tesseract-ocr-eng"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	missing=$$(echo $$missing | tr ' ' '\n' | sort -u | tr '\n' ' '); \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else \
		echo "missing engines, install with: sudo apt-get install $$missing"; \
		if [ "$$CI" = true ]; then exit 1; fi; \
	fi

test: deps fmt-check vet ## gofmt, go vet and all tests with the race detector
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

bench: build ## benchmarks as ratios against baselines measured in the same run (BENCHFLAGS="-quick -out F")
	$(GO) run ./bench $(BENCHFLAGS)

clean: ## remove build output
	rm -rf bin
