#!/usr/bin/env bash
# Builds the exporter's container image from scratch: scripts/image.sh BINARY OUTDIR writes
# OUTDIR/pauselab-<version>.oci.tar, an OCI archive of image pauselab:<version> (`make image`),
# and prints its path.
#
# The image holds /usr/bin/pauselab and what it loads: the dynamic loader and the shared
# libraries `ldd` names (glibc and libgcc_s of the build host, which satisfy the portable
# binary's glibc 2.17 symbol versions). No shell, no package manager, no /etc: the exporter
# reads the JVMs' own files through /proc/<pid>/root. Its entrypoint is the binary and its
# command `export --listen 0.0.0.0:9404`, as contrib/kubernetes/daemonset.yaml runs it.
#
# Needs umoci (Debian's umoci): it writes the OCI layout directly, with no daemon, no
# storage driver and no namespaces, so it works wherever tar does.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BINARY OUTDIR" >&2
  exit 2
fi
binary=$1
outdir=$2
fail() {
  echo "image: $*" >&2
  exit 1
}
[ -x "$binary" ] || fail "$binary is not an executable: build it first (make portable)"
command -v umoci >/dev/null || fail "umoci not found: install Debian's umoci (apt-get install umoci)"

# "pauselab 0.1.0" -> 0.1.0
version=$("$binary" --version | awk '{print $2}')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rootfs=$work/rootfs
install -D -m 0755 "$binary" "$rootfs/usr/bin/pauselab"
strip --strip-debug "$rootfs/usr/bin/pauselab"
# Each library at the path the loader finds it at here ("libc.so.6 => /lib/x86_64-linux-gnu/
# libc.so.6", and the loader itself by its absolute name), copied from the file it links to.
libraries=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
[ -n "$libraries" ] || fail "ldd names no libraries for $binary: is it a dynamically linked ELF file?"
for library in $libraries; do
  install -D -m 0755 "$(readlink -f "$library")" "$rootfs$library"
done

layout=$work/layout
umoci init --layout "$layout"
umoci new --image "$layout:$version"
# One layer, a tar file made here: owned by root, dated 1970, in name order, so the same
# files give the same layer digest.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$work/layer.tar" .
umoci raw add-layer --image "$layout:$version" --history.created_by "scripts/image.sh" "$work/layer.tar"
umoci config --image "$layout:$version" \
  --author "pauselab" \
  --config.entrypoint /usr/bin/pauselab \
  --config.cmd export --config.cmd --listen --config.cmd 0.0.0.0:9404 \
  --config.exposedports 9404/tcp \
  --config.user 0:0 \
  --config.label "org.opencontainers.image.title=pauselab" \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label "org.opencontainers.image.licenses=Apache-2.0"
# Nothing of the old manifest is referenced any more.
umoci gc --layout "$layout"

mkdir -p "$outdir"
archive=$outdir/pauselab-$version.oci.tar
# An OCI archive is the layout (oci-layout, index.json, blobs/) in one tar file.
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$archive" .
echo "$archive"
