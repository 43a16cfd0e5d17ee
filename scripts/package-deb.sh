#!/usr/bin/env bash
# Builds the pauselab .deb from a built binary: scripts/package-deb.sh BINARY OUTDIR
# (`make package` passes target/release/pauselab and target/debian). Prints the path of
# the .deb on standard output.
#
# Contents: /usr/bin/pauselab without debug info; man pages and bash/zsh/fish completions
# made by the binary itself (`pauselab generate`), so they match its --help; the systemd
# unit of contrib/systemd with the binary's packaged path. No maintainer scripts: installing
# starts nothing, the exporter runs once the user enables it.
#
# Needs dpkg-deb and dpkg-shlibdeps (Debian's dpkg and dpkg-dev). The maintainer field
# comes from DEBFULLNAME/DEBEMAIL as for Debian's own tools, else from git's user.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BINARY OUTDIR" >&2
  exit 2
fi
binary=$1
outdir=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$binary" ] || { echo "package-deb: $binary is not an executable: build it first (cargo build --release -p pauselab)" >&2; exit 1; }
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "package-deb: $tool not found: install Debian's dpkg-dev (apt-get install dpkg-dev)" >&2; exit 1; }
done

# "pauselab 0.1.0" -> 0.1.0
version=$("$binary" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
name=${DEBFULLNAME:-$(git -C "$repo" config user.name 2>/dev/null || echo "${USER:-root}")}
email=${DEBEMAIL:-$(git -C "$repo" config user.email 2>/dev/null || echo "${USER:-root}@$(hostname -f)")}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# dpkg-shlibdeps expects the Debian source layout: debian/control, debian/<package>/...
root=$work/debian/pauselab
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d" "$root/lib/systemd/system" \
  "$root/usr/share/doc/pauselab"
touch "$work/debian/control"

install -m 0755 "$binary" "$root/usr/bin/pauselab"
# The release profile already leaves debug info out; this also holds for any other build.
strip --strip-debug "$root/usr/bin/pauselab"

"$root/usr/bin/pauselab" generate man "$root/usr/share/man/man1"
gzip -9n "$root"/usr/share/man/man1/*.1
"$root/usr/bin/pauselab" generate completion bash > "$root/usr/share/bash-completion/completions/pauselab"
"$root/usr/bin/pauselab" generate completion zsh > "$root/usr/share/zsh/vendor-completions/_pauselab"
"$root/usr/bin/pauselab" generate completion fish > "$root/usr/share/fish/vendor_completions.d/pauselab.fish"

sed 's|/usr/local/bin/pauselab|/usr/bin/pauselab|g' "$repo/contrib/systemd/pauselab-export.service" \
  > "$root/lib/systemd/system/pauselab-export.service"
grep -q '^ExecStart=/usr/bin/pauselab ' "$root/lib/systemd/system/pauselab-export.service" \
  || { echo "package-deb: contrib/systemd/pauselab-export.service: no ExecStart=/usr/local/bin/pauselab line to point at /usr/bin" >&2; exit 1; }

{
  echo "Files: *"
  echo "License: Apache-2.0"
  echo " On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0."
} > "$root/usr/share/doc/pauselab/copyright"
find "$root" -type d -exec chmod 0755 {} +
find "$root/usr/share" "$root/lib" -type f -exec chmod 0644 {} +

# Its warning that the binary is not "installed in its package's directory" is about
# debhelper's layout, which this is not: left out.
depends=$(cd "$work" && dpkg-shlibdeps -O -e debian/pauselab/usr/bin/pauselab \
  2> >(grep -v "should already be installed in their package's directory" >&2) \
  | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package-deb: dpkg-shlibdeps found no dependencies for $binary" >&2; exit 1; }
installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)

cat > "$root/DEBIAN/control" <<EOF
Package: pauselab
Version: $version
Architecture: $arch
Maintainer: $name <$email>
Installed-Size: $installed_kb
Depends: $depends
Section: devel
Priority: optional
Description: find, reproduce and fix JVM stop-the-world pauses
 pauselab analyzes GC and safepoint logs and JFR recordings into pause
 histograms and a diagnosis, reads any HotSpot JVM's counters without
 starting a JVM (also with -XX:+PerfDisableSharedMem), serves them to
 Prometheus (pauselab export, systemd unit pauselab-export.service, not
 enabled on install), audits hosts for stall risks and reproduces stalls.
EOF

mkdir -p "$outdir"
deb=$outdir/pauselab_${version}_${arch}.deb
# xz, dpkg-deb's default; DPKG_DEB_COMPRESSOR_TYPE / _LEVEL choose another, as for dpkg-deb.
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
echo "$deb"
