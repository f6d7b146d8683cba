#!/usr/bin/env bash
# test-server-json.sh builds a release's server.json (this platform's
# archive and .mcpb, then scripts/server-json.sh) and validates it, with the
# committed one, against the MCP Registry's published schema
# (go test ./packaging/, which also proves broken copies are refused).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PLATFORMS=$(go env GOOS)/$(go env GOARCH) DIST="$work" ./scripts/release.sh >/dev/null
DIST="$work" ./scripts/mcpb.sh >/dev/null
DIST="$work" ./scripts/server-json.sh
CORDON_SERVER_JSON="$work/server.json" go test -count=1 -run 'TestServerJSON|TestRegistrySchema' ./packaging/
