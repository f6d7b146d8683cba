#!/usr/bin/env bash
# test-mcpb.sh proves the Claude Desktop bundle: it builds this platform's
# release archive and its .mcpb (scripts/mcpb.sh), unpacks the bundle with
# the official mcpb CLI, validates its manifest with it, checks the
# manifest names every tool cordon serves, and starts the manifest's own
# command (${__dirname} and ${user_config.workspace} filled in as Claude
# Desktop does) under an MCP client: initialize, tools/list, a bash call
# confined to the workspace. A manifest the CLI must reject proves the
# validation can fail.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/package-version.sh
[ -d test/interop/node_modules/@modelcontextprotocol/sdk ] ||
  (cd test/interop && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)

work=$(mktemp -d) outside=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$work" "$outside"' EXIT
platform=$(go env GOOS)/$(go env GOARCH)
PLATFORMS=$platform DIST="$work/dist" ./scripts/release.sh >/dev/null
DIST="$work/dist" ./scripts/mcpb.sh >/dev/null
mcpb=$(realpath packaging/mcpb/node_modules/.bin/mcpb)

bundle=$(ls "$work"/dist/cordon_*_"${platform%/*}_${platform#*/}".mcpb)
(cd "$work/dist" && sha256sum -c --quiet SHA256SUMS)
unpacked="$work/the bundle"
"$mcpb" unpack "$bundle" "$unpacked" >/dev/null
"$mcpb" validate "$unpacked/manifest.json"

jq -e --arg v "$PACKAGE_VERSION" --arg p "$(node -p process.platform)" \
  '.version == $v and .compatibility.platforms == [$p]' "$unpacked/manifest.json" >/dev/null ||
  { echo "test-mcpb: manifest version or platform is not $PACKAGE_VERSION/$p"; exit 1; }
(cd test/interop && node --input-type=module -e "
  import { TOOLS } from './lib.mjs';
  import { readFileSync } from 'node:fs';
  const listed = JSON.parse(readFileSync(process.argv[1], 'utf8')).tools.map(t => t.name);
  if (listed.join() !== TOOLS.join()) { console.error('test-mcpb: manifest tools', listed.join(), 'differ from the served', TOOLS.join()); process.exit(1); }
" "$unpacked/manifest.json")

mkdir -p "$work/workspace" "$work/state"
mapfile -t argv < <(jq -r --arg dir "$unpacked" --arg ws "$work/workspace" '
  .server.mcp_config | [.command] + .args | .[]
  | gsub("\\$\\{__dirname\\}"; $dir) | gsub("\\$\\{user_config.workspace\\}"; $ws)' "$unpacked/manifest.json")
node test/interop/launch.mjs --workspace "$work/workspace" --outside "$outside/escaped" -- \
  "${argv[@]}" --state-dir "$work/state"

jq 'del(.server.entry_point)' "$unpacked/manifest.json" >"$work/broken.json"
if "$mcpb" validate "$work/broken.json" >/dev/null 2>&1; then
  echo "test-mcpb: mcpb validate accepted a manifest without server.entry_point"; exit 1
fi
echo "test-mcpb: $(basename "$bundle") validates, unpacks and serves"
