#!/usr/bin/env bash
# image.sh builds cordon's container image into OUT (default dist/image):
# oci/ (an OCI image layout) and cordon-image.tar (what `docker load`
# reads), and prints the image's digest. The base is a Debian minbase root
# file system (scripts/image-rootfs.sh, cached); on top go static cordon
# and cordon-helper, built as the release builds them, and user cordon
# (uid 10001), put together by scripts/image with go-containerregistry.
# Every time in the image is the commit's time: the same commit and base,
# the same digest.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=$(realpath -m "${OUT:-dist/image}")
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
ARCH=${ARCH:-$(go env GOARCH)}
TAG=${TAG:-cordon:${VERSION#v}}
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

rootfs=$(ARCH=$ARCH ./scripts/image-rootfs.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for cmd in cordon cordon-helper; do
  GOOS=linux GOARCH=$ARCH go build -trimpath -tags cordon_release \
    -ldflags "-s -w -buildid= -X main.version=$VERSION -X main.commit=$COMMIT" \
    -o "$work/$cmd" "./cmd/$cmd"
done
go build -o "$work/image" ./scripts/image
mkdir -p "$OUT"
digest=$("$work/image" -rootfs "$rootfs" -cordon "$work/cordon" -helper "$work/cordon-helper" \
  -layout "$OUT/oci" -tar "$OUT/cordon-image.tar" -tag "$TAG" \
  -version "$VERSION" -commit "$COMMIT" -arch "$ARCH" -epoch "$SOURCE_DATE_EPOCH")
echo "$digest" >"$OUT/digest"
echo "image $TAG $digest in $OUT" >&2
echo "$digest"
