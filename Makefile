# cordon: `make run` sets everything up and shows cordon working;
# `make test` runs the whole test suite.
GO      ?= go
BIN     := bin/cordon
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all deps build run test test-short lint cross bench install clean

all: build

# deps installs what the sandbox needs on Debian/Ubuntu: bubblewrap.
deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  echo "installing bubblewrap"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap; fi; }

# build makes bin/cordon and, beside it, the lean bin/cordon-helper that
# confines each command (cordon falls back to re-executing itself).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/cordon ./cmd/cordon-helper

# run builds cordon, shows the sandbox it found, proves containment and
# prints the line to paste into an MCP client.
run: deps build
	@echo "== cordon status"; ./$(BIN) status || true
	@echo; echo "== cordon test"; ./$(BIN) test
	@echo; echo "== a write outside the workspace, confined:"; \
	  ./$(BIN) exec --mode workspace-write -- sh -c 'echo hi > /etc/cordon-demo' || true
	@echo; echo "== add cordon to your MCP client:"; \
	  echo "  Claude Code:    claude mcp add cordon -- $(CURDIR)/$(BIN) serve --workspace \"\$$PWD\""; \
	  echo "  Claude Desktop: {\"mcpServers\": {\"cordon\": {\"command\": \"$(CURDIR)/$(BIN)\", \"args\": [\"serve\", \"--workspace\", \"/path/to/project\"]}}}"

test: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...

cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 200x ./sandbox/
	./bench/exec.sh

install:
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/cordon ./cmd/cordon-helper

clean:
	rm -rf bin
