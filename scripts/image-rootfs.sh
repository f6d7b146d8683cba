#!/usr/bin/env bash
# image-rootfs.sh prints the path of the image's base: a Debian minbase
# root file system as a normalized, gzipped tar (the image's first layer
# as it is, so no build compresses it again), built with debootstrap on first use
# and cached under CACHE (default ~/.cache/cordon-image), keyed by suite,
# architecture, mirror and package list, so later `make image` runs skip
# debootstrap (about a minute or more) and reuse the same bytes. Needs root
# (debootstrap chroots and makes device nodes) on the first run only.
set -euo pipefail

SUITE=${SUITE:-bookworm}
ARCH=${ARCH:-$(dpkg --print-architecture)}
# bubblewrap: for whoever runs the image with a seccomp profile that allows
# namespaces and prefers bwrap to Landlock (--backend bwrap).
PACKAGES=${PACKAGES:-bash,coreutils,git,ca-certificates,bubblewrap}
# The Debian mirror apt is configured with here, unless MIRROR says otherwise.
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -o -E '^(URIs:|deb) +https?://[^ ]*/debian/?( |$)' | grep -o -E 'https?://[^ ]*' | head -n1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cordon-image}

key=$(printf '%s\n' "$SUITE" "$ARCH" "$MIRROR" "$PACKAGES" v1 | sha256sum | cut -c1-16)
out="$CACHE/rootfs-$SUITE-$ARCH-$key.tar.gz"
if [ -s "$out" ]; then echo "$out"; exit 0; fi

command -v debootstrap >/dev/null || { echo "image-rootfs: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "image-rootfs: the first build of the base needs root (debootstrap)" >&2; exit 1; }
mkdir -p "$CACHE"
root=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$root"' EXIT
start=$(date +%s)
debootstrap --variant=minbase --arch="$ARCH" --include="$PACKAGES" "$SUITE" "$root/fs" "$MIRROR" >"$root/log" 2>&1 ||
  { tail -n 30 "$root/log" >&2; echo "image-rootfs: debootstrap failed" >&2; exit 1; }
fs=$root/fs
# What differs between two debootstraps of the same packages, or belongs
# to the runtime (/dev, /proc, /sys are mounted by it): dropped, so the
# base holds only what the packages put there.
rm -rf "$fs"/var/log/* "$fs"/var/cache/apt/* "$fs"/var/cache/debconf/*-old "$fs"/var/lib/apt/lists/* \
  "$fs"/var/cache/ldconfig/aux-cache "$fs"/debootstrap "$fs"/dev/* "$fs"/proc/* "$fs"/sys/* \
  "$fs"/tmp/* "$fs"/run/* "$fs"/root/.bash_history "$fs"/etc/hostname "$fs"/etc/resolv.conf \
  "$fs"/var/lib/dpkg/*-old
: >"$fs/etc/machine-id"
# The same order, owners and times for the same files: bytes that depend
# only on the packages.
tar --sort=name --numeric-owner --mtime=@0 --clamp-mtime \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
  -C "$fs" -cf - . | gzip -n -6 >"$root/rootfs.tar.gz"
mv "$root/rootfs.tar.gz" "$out"
echo "image-rootfs: debootstrap of $SUITE/$ARCH with $PACKAGES took $(( $(date +%s) - start )) s; cached as $out" >&2
echo "$out"
