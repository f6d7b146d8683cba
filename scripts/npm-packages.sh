#!/usr/bin/env bash
# npm-packages.sh packs cordon's npm packages into DIST (default dist/)
# from the release archives there (`make release`): one
# @cordonhq/cordon-<os>-<cpu> per archive, holding its cordon and
# cordon-helper with npm's os and cpu fields, and the `cordon` wrapper
# (packaging/npm/cordon) that lists them all as optional dependencies, so
# npm installs only the one for the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/package-version.sh

DIST=$(realpath -m "${DIST:-dist}")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
shopt -s nullglob
archives=("$DIST"/cordon_*.tar.gz "$DIST"/cordon_*.zip)
[ ${#archives[@]} -gt 0 ] || { echo "npm-packages: no release archives in $DIST (make release)"; exit 1; }
optional='{}'
for archive in "${archives[@]}"; do
  name=$(basename "$archive"); name=${name%.tar.gz}; name=${name%.zip}
  arch=${name##*_} os=${name%_*}; os=${os##*_}
  case $os in windows) os=win32 exe=.exe ;; *) exe= ;; esac
  case $arch in amd64) cpu=x64 ;; *) cpu=$arch ;; esac
  pkg="@cordonhq/cordon-$os-$cpu"
  dir="$stage/cordon-$os-$cpu"
  mkdir -p "$dir/bin" "$stage/unpack"
  case $archive in
    *.zip) unzip -q "$archive" -d "$stage/unpack" ;;
    *) tar -xzf "$archive" -C "$stage/unpack" ;;
  esac
  cp "$stage/unpack/$name/cordon$exe" "$stage/unpack/$name/cordon-helper$exe" "$dir/bin/"
  jq -n --arg name "$pkg" --arg v "$PACKAGE_VERSION" --arg os "$os" --arg cpu "$cpu" '{
    name: $name, version: $v,
    description: "cordon for \($os)-\($cpu): the binary the cordon package runs",
    homepage: "https://github.com/cordonhq/cordon",
    repository: {type: "git", url: "git+https://github.com/cordonhq/cordon.git"},
    os: [$os], cpu: [$cpu], files: ["bin"], preferUnplugged: true}' >"$dir/package.json"
  (cd "$DIST" && npm pack --quiet "$dir" >/dev/null)
  optional=$(jq --arg name "$pkg" --arg v "$PACKAGE_VERSION" '. + {($name): $v}' <<<"$optional")
done
cp -r packaging/npm/cordon "$stage/cordon"
jq --arg v "$PACKAGE_VERSION" --argjson optional "$optional" \
  '.version = $v | .optionalDependencies = $optional' \
  packaging/npm/cordon/package.json >"$stage/cordon/package.json"
(cd "$DIST" && npm pack --quiet "$stage/cordon" >/dev/null)
ls "$DIST"/*.tgz
