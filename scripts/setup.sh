#!/usr/bin/env bash
# Installs what `make demo` and `make test` need beyond the toolchains (Rust, JDK 17+,
# Maven, a C compiler). Idempotent: installs only what is missing. Debian packages need root.
set -euo pipefail

# The versions `make dist` was checked with.
ZIGLANG_VERSION=0.17.1
CARGO_ZIGBUILD_VERSION=0.24.1

# Debian packages, one per line: "<command or path that proves it is there> <package>".
debian_needs=(
  "losetup util-linux"
  "mkfs.ext4 e2fsprogs"
  "unshare util-linux"
  "curl curl"
)
# Extra packages asked for by the caller (e.g. `scripts/setup.sh prometheus chromium`).
for extra in "$@"; do
  case "$extra" in
    prometheus) debian_needs+=("prometheus prometheus" "promtool prometheus") ;;
    chromium) debian_needs+=("chromium chromium") ;;
    xfsprogs) debian_needs+=("mkfs.xfs xfsprogs") ;;
    btrfs-progs) debian_needs+=("mkfs.btrfs btrfs-progs") ;;
    dpkg-dev) debian_needs+=("dpkg-shlibdeps dpkg-dev") ;;
    # GNU time (the shell keyword would satisfy `command -v`): the tests' peak-RSS reader.
    time) debian_needs+=("/usr/bin/time time") ;;
    man-db) debian_needs+=("man man-db") ;;
    systemd) debian_needs+=("systemd-analyze systemd") ;;
    rpm) debian_needs+=("rpmbuild rpm") ;;
    # The portable binary of `make dist` (see below); pip for zig when Python has none.
    dist-tools) dist_tools=1 ;;
    *) debian_needs+=("$extra $extra") ;;
  esac
done

missing=()
for need in "${debian_needs[@]}"; do
  probe=${need%% *}
  pkg=${need##* }
  if ! command -v "$probe" >/dev/null 2>&1 && [ ! -e "$probe" ]; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${missing[*]} (run as root or install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (rustup)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "setup: mvn not found: install Maven" >&2; exit 1; }
# zig (PyPI's ziglang) links the portable binary against glibc 2.17's symbol versions, and
# cargo-zigbuild drives cargo with it: docs/packaging.md says why these two. Both come as
# wheels from PyPI, pinned, into a virtual environment of their own (no compiling, no change
# to the system's Python); the Makefile puts its bin/ first on the PATH, where cargo finds
# `cargo-zigbuild` and cargo-zigbuild finds the `python3 -m ziglang` it runs.
if [ -n "${dist_tools:-}" ]; then
  tools=${PAUSELAB_DIST_TOOLS:-$HOME/.cache/pauselab/dist-tools}
  want="ziglang==$ZIGLANG_VERSION cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
  if [ "$(cat "$tools/.installed" 2>/dev/null)" != "$want" ]; then
    echo "setup: installing $want into $tools (pip)"
    rm -rf "$tools"
    python3 -m venv "$tools" ||
      { echo "setup: python3 -m venv failed: install python3-venv" >&2; exit 1; }
    # shellcheck disable=SC2086 # two requirements, split on purpose
    "$tools/bin/python3" -m pip install -q --disable-pip-version-check $want
    echo "$want" >"$tools/.installed"
  fi
fi

rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy >/dev/null 2>&1 || true
