#!/usr/bin/env bash
# oci-image.sh BINARY NAME OUT.tar: a one-layer OCI image whose entrypoint
# is BINARY (as /BINARY-NAME), as an OCI layout tarball that `ctr images
# import` reads. Used for the pod sandbox's pause image: no registry and no
# image tool needed.
set -euo pipefail
bin=${1:?binary}; name=${2:?image name}; out=${3:?output tar}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/root" "$dir/layout/blobs/sha256"
base=$(basename "$bin")
install -m 0755 "$bin" "$dir/root/$base"
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$dir/root" -cf "$dir/layer.tar" .
blob() { # file -> prints "digest size" and stores it as a blob
  local d s; d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1")
  cp "$1" "$dir/layout/blobs/sha256/$d"; echo "$d $s"
}
read -r layer_d layer_s < <(blob "$dir/layer.tar")
arch=$(go env GOARCH)
printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/%s"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$arch" "$base" "$layer_d" >"$dir/config.json"
read -r config_d config_s < <(blob "$dir/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
  "$config_d" "$config_s" "$layer_d" "$layer_s" >"$dir/manifest.json"
read -r manifest_d manifest_s < <(blob "$dir/manifest.json")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest_d" "$manifest_s" "$name" "${name##*:}" >"$dir/layout/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/layout/oci-layout"
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$dir/layout" -cf "$out" .
echo "$name: $out (manifest sha256:$manifest_d)"
