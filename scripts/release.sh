#!/usr/bin/env bash
# release.sh builds cordon's release archives into DIST (default dist/):
# cordon and cordon-helper for each platform, with README and LICENSE if
# present, as reproducible .tar.gz (.zip for Windows) archives and a
# SHA256SUMS file. Two runs on the same commit give the same bytes: the
# build is -trimpath with no build id, and archive entries carry the
# commit's time, a fixed owner and a sorted order.
set -euo pipefail
cd "$(dirname "$0")/.."

DIST=$(realpath -m "${DIST:-dist}")
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
# The commit's time, for every file's mtime: the same commit, the same bytes.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
PLATFORMS=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64"}
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false SOURCE_DATE_EPOCH

rm -rf "$DIST"
mkdir -p "$DIST"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

for platform in $PLATFORMS; do
  os=${platform%/*} arch=${platform#*/}
  name="cordon_${VERSION#v}_${os}_${arch}"
  dir="$stage/$name"
  mkdir -p "$dir"
  ext=; [ "$os" = windows ] && ext=.exe
  for cmd in cordon cordon-helper; do
    # cordon_release: a broken invariant fails closed (a refusal) instead
    # of panicking, as in development builds (sandbox/invariant.go).
    GOOS=$os GOARCH=$arch go build -trimpath -tags cordon_release \
      -ldflags "-s -w -buildid= -X main.version=$VERSION -X main.commit=$COMMIT" \
      -o "$dir/$cmd$ext" "./cmd/$cmd"
  done
  cp README.md "$dir/"
  [ -f LICENSE ] && cp LICENSE "$dir/"
  find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  if [ "$os" = windows ]; then
    (cd "$stage" && find "$name" -print0 | LC_ALL=C sort -z |
      xargs -0 env TZ=UTC zip -X -q -D "$DIST/$name.zip")
  else
    tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
      --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
      -C "$stage" -cf - "$name" | gzip -n -9 >"$DIST/$name.tar.gz"
  fi
done
(cd "$DIST" && LC_ALL=C sha256sum -- * >SHA256SUMS)
echo "release $VERSION ($COMMIT) in $DIST:"
cat "$DIST/SHA256SUMS"
