#!/usr/bin/env bash
# oci-image.sh LAYER NAME OUT.tar: a one-layer OCI image of LAYER (a tar,
# or a gzipped tar such as the cached Debian base), as an OCI layout
# tarball that `ctr images import` reads: no registry and no image tool
# needed. ENTRYPOINT (a JSON array), IMAGE_USER (default 65535:65535) and
# STOP_SIGNAL (optional) make its config.
set -euo pipefail
layer=${1:?layer tar}; name=${2:?image name}; out=${3:?output tar}
entrypoint=${ENTRYPOINT:?ENTRYPOINT, a JSON array}; user=${IMAGE_USER:-65535:65535}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/layout/blobs/sha256"
blob() { # file -> prints "digest size" and stores it as a blob
  local d s; d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1")
  cp "$1" "$dir/layout/blobs/sha256/$d"; echo "$d $s"
}
# A layer's diff_id is the digest of the tar itself, gzipped or not.
if gzip -t "$layer" 2>/dev/null; then
  media=application/vnd.oci.image.layer.v1.tar+gzip
  diff_id=$(gzip -dc "$layer" | sha256sum | cut -d' ' -f1)
else
  media=application/vnd.oci.image.layer.v1.tar
  diff_id=$(sha256sum "$layer" | cut -d' ' -f1)
fi
read -r layer_d layer_s < <(blob "$layer")
stop=""
if [ -n "${STOP_SIGNAL:-}" ]; then stop=",\"StopSignal\":\"$STOP_SIGNAL\""; fi
arch=$(go env GOARCH)
printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":%s,"User":"%s"%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$arch" "$entrypoint" "$user" "$stop" "$diff_id" >"$dir/config.json"
read -r config_d config_s < <(blob "$dir/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"%s","digest":"sha256:%s","size":%s}]}' \
  "$config_d" "$config_s" "$media" "$layer_d" "$layer_s" >"$dir/manifest.json"
read -r manifest_d manifest_s < <(blob "$dir/manifest.json")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest_d" "$manifest_s" "$name" "${name##*:}" >"$dir/layout/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/layout/oci-layout"
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$dir/layout" -cf "$out" .
echo "$name: $out (manifest sha256:$manifest_d)"
