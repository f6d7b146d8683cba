# cordon: `make run` sets everything up and shows cordon working;
# `make test` runs the whole test suite.
GO      ?= go
BIN     := bin/cordon
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all deps build run test test-short lint cross bench bench-smoke soak install clean release test-release \
	mcpb packages server-json test-mcpb test-packages test-server-json image test-image \
	helm test-deploy k8s-e2e

all: build

# deps installs what the sandbox needs on Debian/Ubuntu: bubblewrap.
deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  echo "installing bubblewrap"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap; fi; }

# build makes bin/cordon and, beside it, the lean bin/cordon-helper that
# confines each command (cordon falls back to re-executing itself). Built as
# a release is (cordon_release): a broken internal invariant refuses the
# call instead of panicking, which only `go test` builds do.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags cordon_release -ldflags '$(LDFLAGS)' -o bin/ ./cmd/cordon ./cmd/cordon-helper

# run builds cordon, shows the sandbox it found, proves containment and
# prints the line to paste into an MCP client.
run: deps build
	@echo "== cordon status (the whole report: ./$(BIN) status; as JSON: --json)"; ./$(BIN) status | sed -n '1,13p' | awk '{ if (length($$0) > 150) $$0 = substr($$0, 1, 149) "…"; print }' || true
	@echo; echo "== cordon test"; ./$(BIN) test
	@echo; echo "== a write outside the workspace, confined:"; \
	  ./$(BIN) exec --mode workspace-write -- sh -c 'echo hi > /etc/cordon-demo' || true
	@echo; echo "== add cordon to your MCP client (one of them: ./$(BIN) client-config NAME):"; \
	  ./$(BIN) client-config

# The escape suite runs alone, after the rest: it plants a Docker socket at
# /run/docker.sock while it runs, and a sandbox of another package that
# saw the socket when it built its argv failed closed when the socket was
# gone by the time bwrap bound over it.
test: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 40m $$($(GO) list ./... | grep -v '/test/escape$$')
	$(GO) test -race -count=1 -timeout 20m ./test/escape/

# test-short is the loop to run while working (a few minutes): every
# package's unit tests without -race, and of the real-sandbox suites one
# smoke test each — a command confined on both backends, a denial, the MCP
# server end to end. `make test` is what CI runs.
SHORT_SMOKE := TestBackendReadOnly$$|TestBackendWorkspaceWrite$$|TestBashBasics$$|TestBashDenial$$|TestToolsList$$|TestFlagsAnywhere$$
test-short:
	$(GO) vet ./...
	$(GO) test -count=1 -short ./approval/ ./fsfence/ ./sessionlog/ ./internal/... ./tools/ ./docs/ ./packaging/
	$(GO) test -count=1 -run '$(SHORT_SMOKE)' ./sandbox/ ./mcpserver/ ./cmd/cordon/

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...

# readme rewrites the README's tables of the protected names and the
# read-deny list from their data (sandbox/protected_names.txt,
# sandbox/readdeny.go).
.PHONY: readme
readme:
	CORDON_UPDATE_README=1 $(GO) test -count=1 -run '^TestReadmeListsMatchTheData$$' ./sandbox/

cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

bench: build
	./bench/table.sh
	$(GO) test -run '^$$' -bench . -benchtime 200x ./sandbox/
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkTable$$' -benchtime 2000x ./mcpserver/ ./fsfence/
	./bench/exec.sh
	./bench/grep.sh

# bench-smoke runs every benchmark once, on small inputs: CI proves they
# still work without paying for the long runs.
bench-smoke: build
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkTable$$' -benchtime 1x ./...
	N=1 ./bench/table.sh
	N=2 ./bench/exec.sh
	FILES=2000 N=1 ./bench/grep.sh

# soak runs SOAK_SESSIONS HTTP sessions of mixed calls for SOAK against a
# real `cordon serve --http`, ends them all and checks that nothing of
# theirs is left (processes, descriptors), then SIGKILLs the server under
# load: no confined process may survive it, and every session log must
# still verify. CI runs it briefly (SOAK=30s).
SOAK ?= 1m
SOAK_SESSIONS ?= 32

soak: deps
	CORDON_SOAK=$(SOAK) CORDON_SOAK_SESSIONS=$(SOAK_SESSIONS) $(GO) test -count=1 -timeout 30m -run '^TestSoak$$' -v ./cmd/cordon/

install:
	CGO_ENABLED=0 $(GO) install -trimpath -tags cordon_release -ldflags '$(LDFLAGS)' ./cmd/cordon ./cmd/cordon-helper

clean:
	rm -rf bin dist

# release builds the release archives and SHA256SUMS into dist/:
# reproducible, so two runs on one commit give the same bytes.
release:
	./scripts/release.sh

# test-release builds the release twice and compares the bytes, then runs
# the linux/amd64 archive's cordon: it must name its version and commit.
test-release:
	./scripts/test-release.sh

# The release's other forms, built from the archives in dist/ (`make
# release` first, or they build it): mcpb packs a Claude Desktop bundle per
# archive with the official mcpb CLI (pinned in packaging/mcpb); packages
# packs the `cordon` npm wrapper and a @cordonhq/cordon-<os>-<cpu> package
# per archive; server-json writes the MCP Registry entry, naming the
# bundles by their SHA-256.
dist/SHA256SUMS:
	./scripts/release.sh

mcpb: dist/SHA256SUMS
	./scripts/mcpb.sh

packages: dist/SHA256SUMS
	./scripts/npm-packages.sh

server-json: mcpb
	./scripts/server-json.sh

# Each test builds this platform's release into a temporary directory and
# needs no network once npm ci has run (packaging/mcpb, test/interop):
# test-mcpb validates and unpacks the bundle and drives its command with an
# MCP client; test-packages installs the npm tarballs offline and drives
# `npx cordon serve` the same way; test-server-json validates server.json
# against the registry's published schema (vendored in packaging/).
test-mcpb:
	./scripts/test-mcpb.sh

test-packages:
	./scripts/test-packages.sh

test-server-json:
	./scripts/test-server-json.sh

# image builds the container image into dist/image: an OCI layout (oci/),
# a `docker load` tarball (cordon-image.tar) and its digest. The base is a
# Debian minbase root file system from debootstrap (needs root and the
# Debian mirror the first time, then cached in ~/.cache/cordon-image);
# cordon, cordon-helper and user cordon (uid 10001) are layered on it with
# go-containerregistry (scripts/image). Reproducible: the same commit and
# base give the same digest.
image:
	./scripts/image.sh

# test-image builds the image twice and compares digests, then runs it in
# a private dockerd (Debian's docker.io) under Docker's default seccomp
# profile, as uid 10001, with --cap-drop ALL, no-new-privileges and a
# read-only root: cordon test, an MCP session over HTTP with a refused
# write outside the workspace, and the bwrap diagnosis.
test-image:
	./scripts/test-image.sh

# fuzz-smoke runs every fuzz target in the repository for FUZZTIME each
# (one `go test -fuzz` per target: -fuzz takes one target per package).
# Targets are found by name, so a new Fuzz* function needs no edit here. A
# failing input is saved under the package's testdata/fuzz/ and fails the
# run. FUZZMINIMIZETIME caps the shrinking of each new input: Go's default,
# 60s, can eat a short run (FuzzRead spent 8 of its 10 s minimizing).
# Go 1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" as the -fuzztime deadline passes, having found nothing
# (go.dev/issue/75804, fixed in Go 1.27): that one outcome is reported and
# let through.
FUZZTIME ?= 10s
FUZZMINIMIZETIME ?= 1s

.PHONY: fuzz-smoke
fuzz-smoke:
	@targets=$$(grep -rHo --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*' . \
	  | sed 's|^\(.*\)/[^/]*_test\.go:func |\1 |' | sort -u); \
	test -n "$$targets" || { echo "fuzz-smoke: no fuzz targets found"; exit 1; }; \
	log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	echo "$$targets" | while read -r pkg fn; do \
	  echo "== $$fn ($$pkg, $(FUZZTIME))"; \
	  if $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) "$$pkg" >"$$log" 2>&1; then cat "$$log"; continue; fi; \
	  cat "$$log"; \
	  if ! grep -q 'Failing input written to' "$$log" && \
	     grep -A1 -- "^--- FAIL: $$fn " "$$log" | sed -n 2p | grep -qx '    context deadline exceeded'; then \
	    echo "fuzz-smoke: $$fn: no failing input, only Go's deadline race (go.dev/issue/75804); not a failure"; \
	  else \
	    echo "fuzz-smoke: $$fn failed"; exit 1; \
	  fi; \
	done

# The Kubernetes kit (deploy/): test-deploy renders the manifests and the
# Helm chart and checks them against the real cordon (flags, probes on its
# real endpoints, PodSecurity "restricted"), runs helm lint, and puts the
# HAProxy gateway (Debian's haproxy) in front of two real replicas driven by
# an MCP client in both protocol eras. helm builds Helm once from the Go
# module proxy into HELM_CACHE; `make test` finds it there too.
HELM_VERSION ?= v3.22.1
HELM_CACHE ?= $(HOME)/.cache/cordon-deploy
HELM := $(HELM_CACHE)/helm-$(HELM_VERSION)/helm

helm: $(HELM)

$(HELM):
	GOBIN=$(dir $(HELM)) CGO_ENABLED=0 $(GO) install -trimpath helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

test-deploy: $(HELM)
	HELM=$(HELM) $(GO) test -count=1 -timeout 20m ./deploy/

# k8s-e2e runs the kit on a real one-node cluster on this machine (root):
# the control plane and CoreDNS built from the Go module proxy, and a
# gateway image of Debian's HAProxy (cached; ~20 minutes the first time),
# Debian's etcd, containerd and CNI plugins, cordon's image (make image),
# then deploy, containment, the gateway on the host and in the cluster
# (the Helm chart's), a roll with a call in flight, and a teardown that
# leaves nothing behind. About 4 minutes once cached. Not part of make
# test, nor of CI (a fresh machine would spend its first 20 minutes
# building).
k8s-e2e:
	./deploy/e2e/k8s-e2e.sh
