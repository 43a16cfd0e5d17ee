#!/usr/bin/env bash
# Packs a built pauselab binary: scripts/package.sh FORMAT BINARY OUTDIR, FORMAT one of
#   tar  OUTDIR/pauselab-<version>-x86_64-linux.tar.gz and its .sha256 (`make dist`)
#   deb  OUTDIR/pauselab_<version>_<arch>.deb (`make package`)
#   rpm  OUTDIR/pauselab-<version>-1.x86_64.rpm (`make package`)
# Prints the path of what it made on standard output.
#
# Every format holds the same files (docs/packaging.md): the binary without debug info; man
# pages and bash/zsh/fish completions made by the binary itself (`pauselab generate`), so
# they match its --help; the systemd unit of contrib/systemd and its flags file (in the
# packages with the binary's packaged path, in the tarball under contrib/). Packages have no maintainer scripts: installing starts nothing,
# the exporter runs once the user enables it.
#
# deb needs dpkg-deb and dpkg-shlibdeps (Debian's dpkg and dpkg-dev); its maintainer field
# comes from DEBFULLNAME/DEBEMAIL as for Debian's own tools, else from git's user.
# rpm needs rpmbuild (Debian's rpm), which writes the Requires from the binary's ELF
# dependencies.
set -euo pipefail

usage() {
  echo "usage: $0 tar|deb|rpm BINARY OUTDIR" >&2
  exit 2
}
[ $# -eq 3 ] || usage
format=$1
binary=$2
outdir=$3
repo=$(cd "$(dirname "$0")/.." && pwd)
fail() {
  echo "package: $*" >&2
  exit 1
}
[ -x "$binary" ] || fail "$binary is not an executable: build it first (make dist builds the portable one)"
needs() {
  local tool=$1 package=$2
  command -v "$tool" >/dev/null || fail "$tool not found: install Debian's $package (apt-get install $package)"
}
case "$format" in
  tar) ;;
  deb) needs dpkg-deb dpkg; needs dpkg-shlibdeps dpkg-dev ;;
  rpm) needs rpmbuild rpm ;;
  *) usage ;;
esac

# "pauselab 0.1.0" -> 0.1.0
version=$("$binary" --version | awk '{print $2}')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# install_files ROOT BINDIR SHAREDIR ZSHDIR: the binary into ROOT/BINDIR, its man pages and
# bash and fish completions under ROOT/SHAREDIR, the zsh one in ROOT/ZSHDIR (where the
# distribution's zsh looks: Debian's vendor-completions, zsh's own site-functions).
install_files() {
  local root=$1 bindir=$2 sharedir=$3 zshdir=$4
  local bin=$root$bindir/pauselab share=$root$sharedir
  mkdir -p "$root$bindir" "$share/man/man1" "$share/bash-completion/completions" \
    "$root$zshdir" "$share/fish/vendor_completions.d"
  install -m 0755 "$binary" "$bin"
  # The release profile already leaves debug info out; this also holds for any other build.
  strip --strip-debug "$bin"
  "$bin" generate man "$share/man/man1"
  gzip -9n "$share"/man/man1/*.1
  "$bin" generate completion bash > "$share/bash-completion/completions/pauselab"
  "$bin" generate completion zsh > "$root$zshdir/_pauselab"
  "$bin" generate completion fish > "$share/fish/vendor_completions.d/pauselab.fish"
}

# install_unit ROOT UNITDIR: the systemd unit, started from /usr/bin/pauselab, and the
# file of its flags, /etc/default/pauselab (a configuration file of the package).
install_unit() {
  local unit=$1$2/pauselab-export.service
  mkdir -p "$1$2"
  install -D -m 0644 "$repo/contrib/systemd/pauselab.default" "$1/etc/default/pauselab"
  sed 's|/usr/local/bin/pauselab|/usr/bin/pauselab|g' "$repo/contrib/systemd/pauselab-export.service" > "$unit"
  grep -q '^ExecStart=/usr/bin/pauselab ' "$unit" \
    || fail "contrib/systemd/pauselab-export.service: no ExecStart=/usr/local/bin/pauselab line to point at /usr/bin"
}

# The packages' description.
summary="find, reproduce and fix JVM stop-the-world pauses"
description="pauselab analyzes GC and safepoint logs and JFR recordings into pause
histograms and a diagnosis, reads any HotSpot JVM's counters without
starting a JVM (also with -XX:+PerfDisableSharedMem), serves them to
Prometheus (pauselab export, systemd unit pauselab-export.service, not
enabled on install), audits hosts for stall risks and reproduces stalls."

# Read-only for everyone but the owner, whatever the umask was.
normalise_modes() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f ! -path "*/bin/*" -exec chmod 0644 {} +
}

mkdir -p "$outdir"
case "$format" in
tar)
  # A prefix (bin/, share/) plus contrib/, the license and the README at the top.
  name=pauselab-$version-x86_64-linux
  top=$work/$name
  install_files "$top" /bin /share /share/zsh/site-functions
  cp -r "$repo/contrib" "$repo/LICENSE" "$repo/README.md" "$top/"
  normalise_modes "$top"
  tarball=$outdir/$name.tar.gz
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work" -cf - "$name" \
    | gzip -9n > "$tarball"
  # In OUTDIR, so that `sha256sum -c` finds the tarball by its bare name.
  (cd "$outdir" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
  echo "$tarball"
  ;;
deb)
  arch=$(dpkg --print-architecture)
  name=${DEBFULLNAME:-$(git -C "$repo" config user.name 2>/dev/null || echo "${USER:-root}")}
  email=${DEBEMAIL:-$(git -C "$repo" config user.email 2>/dev/null || echo "${USER:-root}@$(hostname -f)")}
  # dpkg-shlibdeps expects the Debian source layout: debian/control, debian/<package>/...
  root=$work/debian/pauselab
  install_files "$root" /usr/bin /usr/share /usr/share/zsh/vendor-completions
  install_unit "$root" /lib/systemd/system
  mkdir -p "$root/usr/share/doc/pauselab" "$root/DEBIAN"
  touch "$work/debian/control"
  {
    echo "Files: *"
    echo "License: Apache-2.0"
    echo " On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0."
  } > "$root/usr/share/doc/pauselab/copyright"
  normalise_modes "$root"

  # Its warnings that the binary is not "installed in its package's directory" (debhelper's
  # layout, which this is not) and that libpthread and libdl are linked in vain (they are
  # not on glibc 2.17, where their functions live) are left out.
  depends=$(cd "$work" && dpkg-shlibdeps -O -e debian/pauselab/usr/bin/pauselab \
    2> >(grep -v -e "should already be installed in their package's directory" \
      -e "could avoid a useless dependency" >&2) \
    | sed -n 's/^shlibs:Depends=//p')
  [ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies for $binary"
  # dpkg-shlibdeps dates each glibc function by this host's libc6, where the thread and
  # dlopen functions moved into libc.so.6 in 2.34: it asks for libc6 (>= 2.34) even from
  # the portable binary. The loader checks the symbol versions the binary names.
  glibc=$(objdump -T "$root/usr/bin/pauselab" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
  depends=$(sed "s/libc6 (>= [^)]*)/libc6 (>= $glibc)/" <<< "$depends")
  installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)

  # Kept on upgrades and removal (dpkg -P removes it) when the user changed it.
  echo /etc/default/pauselab > "$root/DEBIAN/conffiles"
  cat > "$root/DEBIAN/control" <<EOF
Package: pauselab
Version: $version
Architecture: $arch
Maintainer: $name <$email>
Installed-Size: $installed_kb
Depends: $depends
Section: devel
Priority: optional
Description: $summary
$(sed 's/^/ /' <<< "$description")
EOF
  deb=$outdir/pauselab_${version}_${arch}.deb
  # xz, dpkg-deb's default; DPKG_DEB_COMPRESSOR_TYPE / _LEVEL choose another, as for dpkg-deb.
  dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
  echo "$deb"
  ;;
rpm)
  # The .deb's files at the places of RPM distributions: the unit in /usr/lib/systemd
  # (where /lib is no link to /usr/lib, /lib/systemd is not searched), zsh's own
  # site-functions (vendor-completions is Debian's), the license where RPM's %license
  # puts it.
  root=$work/root
  install_files "$root" /usr/bin /usr/share /usr/share/zsh/site-functions
  install_unit "$root" /usr/lib/systemd/system
  install -D -m 0644 "$repo/LICENSE" "$root/usr/share/licenses/pauselab/LICENSE"
  normalise_modes "$root"
  files=$(cd "$root" && find . -type f | sed 's|^\.||' | sort \
    | sed -e 's|^/usr/share/licenses/|%license /usr/share/licenses/|' \
      -e 's|^/etc/|%config(noreplace) /etc/|')
  spec=$work/pauselab.spec
  cat > "$spec" <<EOF
Name: pauselab
Version: $version
Release: 1
Summary: $summary
License: Apache-2.0

%description
$description

%install
cp -a $root/. %{buildroot}/

%files
%defattr(-,root,root,-)
$files
EOF
  # The files are built already: no debuginfo package, no stripping or recompressing by
  # rpm's post-install scripts, no /usr/lib/.build-id links. xz, not rpm 4.18's default
  # zstd, which the rpm of CentOS 7 and Amazon Linux 2 (4.11) cannot unpack.
  rpmbuild -bb --quiet --target x86_64-linux \
    --define "_topdir $work/rpmbuild" \
    --define "debug_package %{nil}" \
    --define "__os_install_post %{nil}" \
    --define "_build_id_links none" \
    --define "_binary_payload w6.xzdio" \
    "$spec" >/dev/null
  rpm=$outdir/pauselab-$version-1.x86_64.rpm
  mv "$work/rpmbuild/RPMS/x86_64/pauselab-$version-1.x86_64.rpm" "$rpm"
  echo "$rpm"
  ;;
esac
