#!/usr/bin/env bash
# haproxy-image.sh NAME OUT.tar: the gateway's image for make k8s-e2e,
# Debian's HAProxy on a minbase root file system (scripts/image-rootfs.sh
# with PACKAGES=haproxy: debootstrap on first use, then cached in
# ~/.cache/cordon-image), as a one-layer OCI layout tarball that `ctr images
# import` reads. It stands in for the chart's default haproxy image, which
# is not reachable offline: entrypoint haproxy, so the chart's arguments
# (-db -f /usr/local/etc/haproxy/haproxy.cfg) run as they do there.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=${1:?image name}; out=${2:?output tar}
rootfs=$(PACKAGES=haproxy ./scripts/image-rootfs.sh)
ENTRYPOINT='["/usr/sbin/haproxy"]' IMAGE_USER=99:99 STOP_SIGNAL=SIGUSR1 exec ./deploy/e2e/oci-image.sh "$rootfs" "$name" "$out"
