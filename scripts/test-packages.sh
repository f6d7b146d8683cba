#!/usr/bin/env bash
# test-packages.sh proves the npm packages work with no network: it builds
# this platform's release archive, packs the packages from it
# (scripts/npm-packages.sh), installs the `cordon` wrapper and this
# platform's package from the tarballs with npm --offline into an empty
# project, then runs `npx cordon --version` and an MCP client
# (test/interop/launch.mjs, the official TypeScript SDK) through
# `npx cordon serve`: initialize, tools/list, a bash call that writes
# inside the workspace and is refused outside it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/package-version.sh
[ -d test/interop/node_modules/@modelcontextprotocol/sdk ] ||
  (cd test/interop && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)

work=$(mktemp -d) outside=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$work" "$outside"' EXIT
platform=$(go env GOOS)/$(go env GOARCH)
PLATFORMS=$platform DIST="$work/dist" ./scripts/release.sh >/dev/null
DIST="$work/dist" ./scripts/npm-packages.sh >/dev/null

os=$(node -p process.platform) cpu=$(node -p process.arch)
project="$work/a project"
mkdir -p "$project" "$work/workspace" "$work/state"
echo '{"private": true}' >"$project/package.json"
(cd "$project" && npm install --offline --no-audit --no-fund \
  "$work/dist/cordon-$PACKAGE_VERSION.tgz" \
  "$work/dist/cordonhq-cordon-$os-$cpu-$PACKAGE_VERSION.tgz" >/dev/null)

got=$(cd "$project" && npx --offline cordon --version)
case "$got" in
  "cordon $VERSION "*) ;;
  *) echo "test-packages: npx cordon --version says '$got', want cordon $VERSION"; exit 1 ;;
esac
node test/interop/launch.mjs --workspace "$work/workspace" --outside "$outside/escaped" --cwd "$project" -- \
  npx --offline cordon serve --workspace "$work/workspace" --state-dir "$work/state"
echo "test-packages: npx cordon from the packed tarballs, offline: $got"
