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

deps: ## install what the tests need (nothing outside Go yet)
	@true

test: deps fmt-check vet ## gofmt, go vet and all tests with the race detector
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

bench: build ## benchmarks as ratios against baselines measured in the same run (BENCHFLAGS="-quick -out F")
	$(GO) run ./bench $(BENCHFLAGS)

clean: ## remove build output
	rm -rf bin
