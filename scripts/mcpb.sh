#!/usr/bin/env bash
# mcpb.sh packs a Claude Desktop bundle (.mcpb) per release archive in DIST
# (default dist/, from `make release`): packaging/mcpb/manifest.json with
# the release's version and platform, and the archive's cordon and
# cordon-helper under server/. The official mcpb CLI, pinned in
# packaging/mcpb/package-lock.json, validates each manifest and packs it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/package-version.sh

DIST=$(realpath -m "${DIST:-dist}")
tools=packaging/mcpb
[ -x "$tools/node_modules/.bin/mcpb" ] ||
  (cd "$tools" && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)
mcpb=$(realpath "$tools/node_modules/.bin/mcpb")

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
shopt -s nullglob
archives=("$DIST"/cordon_*.tar.gz "$DIST"/cordon_*.zip)
[ ${#archives[@]} -gt 0 ] || { echo "mcpb: no release archives in $DIST (make release)"; exit 1; }
for archive in "${archives[@]}"; do
  name=$(basename "$archive"); name=${name%.tar.gz}; name=${name%.zip}
  os=${name%_*}; os=${os##*_}
  case $os in windows) platform=win32 exe=.exe ;; *) platform=$os exe= ;; esac
  bundle="$stage/$name"
  mkdir -p "$bundle/server" "$stage/unpack"
  case $archive in
    *.zip) unzip -q "$archive" -d "$stage/unpack" ;;
    *) tar -xzf "$archive" -C "$stage/unpack" ;;
  esac
  cp "$stage/unpack/$name/cordon$exe" "$stage/unpack/$name/cordon-helper$exe" "$bundle/server/"
  jq --arg v "$PACKAGE_VERSION" --arg p "$platform" --arg exe "$exe" '
    .version = $v | .compatibility.platforms = [$p]
    | .server.entry_point += $exe | .server.mcp_config.command += $exe' \
    packaging/mcpb/manifest.json >"$bundle/manifest.json"
  "$mcpb" validate "$bundle/manifest.json" >/dev/null
  "$mcpb" pack "$bundle" "$DIST/$name.mcpb" >/dev/null
  echo "mcpb: $DIST/$name.mcpb"
done
# The bundles are release assets too: the sums file covers them.
(cd "$DIST" && LC_ALL=C sha256sum -- cordon_* >SHA256SUMS)
