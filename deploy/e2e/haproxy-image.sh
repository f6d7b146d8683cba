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
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/layout/blobs/sha256"
blob() { # file -> prints "digest size" and stores it as a blob
  local d s; d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1")
  cp "$1" "$dir/layout/blobs/sha256/$d"; echo "$d $s"
}
# The cached base is the layer as it is (gzipped); its diff_id is the
# digest of the tar inside.
diff_id=$(gzip -dc "$rootfs" | sha256sum | cut -d' ' -f1)
read -r layer_d layer_s < <(blob "$rootfs")
arch=$(go env GOARCH)
printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/usr/sbin/haproxy"],"User":"99:99","StopSignal":"SIGUSR1"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$arch" "$diff_id" >"$dir/config.json"
read -r config_d config_s < <(blob "$dir/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
  "$config_d" "$config_s" "$layer_d" "$layer_s" >"$dir/manifest.json"
read -r manifest_d manifest_s < <(blob "$dir/manifest.json")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest_d" "$manifest_s" "$name" "${name##*:}" >"$dir/layout/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/layout/oci-layout"
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$dir/layout" -cf "$out" .
echo "$name: $out (Debian's haproxy; manifest sha256:$manifest_d)"
