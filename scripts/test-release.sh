#!/usr/bin/env bash
# test-release.sh proves `make release` reproducible (two builds, the same
# bytes) and its binaries stamped (cordon version names the version and
# the commit).
set -euo pipefail
cd "$(dirname "$0")/.."
a=$(mktemp -d) b=$(mktemp -d)
trap 'rm -rf "$a" "$b"' EXIT
PLATFORMS="linux/amd64 windows/amd64" DIST="$a" ./scripts/release.sh >/dev/null
PLATFORMS="linux/amd64 windows/amd64" DIST="$b" ./scripts/release.sh >/dev/null
if ! diff -r "$a" "$b"; then
  echo "test-release: two builds of one commit differ"; exit 1
fi
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
commit=$(git rev-parse HEAD)
archive=$(ls "$a"/cordon_*_linux_amd64.tar.gz)
(cd "$a" && sha256sum -c --quiet SHA256SUMS)
tar -xzf "$archive" -C "$a"
out=$("$a"/cordon_*_linux_amd64/cordon version)
case "$out" in
  "cordon $version (${commit:0:12}) linux/amd64 "*) ;;
  *) echo "test-release: cordon version says '$out', want version $version and commit ${commit:0:12}"; exit 1 ;;
esac
if ! go version -m "$a"/cordon_*_linux_amd64/cordon | grep -q -- '-tags=cordon_release'; then
  echo "test-release: the release binary is not a cordon_release build"; exit 1
fi
echo "test-release: reproducible ($(wc -l <"$a/SHA256SUMS") files), stamped: $out"
