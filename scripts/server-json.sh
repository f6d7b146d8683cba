#!/usr/bin/env bash
# server-json.sh writes DIST/server.json (default dist/), cordon's MCP
# Registry entry for this release: packaging/mcp-registry/server.json with
# the release's version, plus one mcpb package per Claude Desktop bundle in
# DIST (`make mcpb`), named by its release download URL and its SHA-256.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/package-version.sh

DIST=$(realpath -m "${DIST:-dist}")
RELEASE_URL=${RELEASE_URL:-https://github.com/cordonhq/cordon/releases/download/$VERSION}
mkdir -p "$DIST"
bundles='[]'
shopt -s nullglob
for bundle in "$DIST"/cordon_*.mcpb; do
  bundles=$(jq --arg url "$RELEASE_URL/$(basename "$bundle")" \
    --arg sha "$(sha256sum <"$bundle" | cut -d' ' -f1)" --arg v "$PACKAGE_VERSION" \
    '. + [{registryType: "mcpb", identifier: $url, version: $v, fileSha256: $sha, transport: {type: "stdio"}}]' \
    <<<"$bundles")
done
jq --arg v "$PACKAGE_VERSION" --argjson bundles "$bundles" '
  .version = $v
  | .packages = [.packages[] | .version = $v] + $bundles' \
  packaging/mcp-registry/server.json >"$DIST/server.json"
echo "server-json: $DIST/server.json ($(jq length <<<"$bundles") bundles)"
