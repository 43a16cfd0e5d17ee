#!/usr/bin/env bash
# Profile-guided optimisation of the release binary: builds pauselab instrumented, runs
# `analyze` on a training set made from the repository's fixtures, and merges what it
# counted into PROFILE, for `rustc -Cprofile-use=PROFILE` (the Makefile's `pgo` and
# `portable` targets build with it).
#
# Why: a line's way through the stitcher, a reader and the analysis is more code than the
# first-level instruction cache holds, and its branches depend on the kind of line. Laid
# out and inlined by a profile, one thread reads the bench's JDK 7-8 G1 log 11 % faster
# and its Parallel log 14 % faster; unified logs read as fast as before (docs/analyze.md,
# "A build laid out by a profile").
#
# The training set: GCViewer's JDK 5-8 samples and the fixtures of every collector of JDK
# 11 to 25, each read whole; 30 MB logs of each kind the bench measures (bench/logs.sh),
# read at one and at two threads, so that the chunked reading runs too; and a 30 MB
# recording when a JDK is found (JAVA_HOME, `java` on the PATH): without one, the
# recording reader is built without a profile, as a plain build is.
#
# Needs llvm-profdata of the LLVM that rustc is built on: `rustup component add
# llvm-tools` (tried here when it is missing); without it, exits with status 2 and makes no
# profile. Usage: scripts/pgo.sh PROFILE [SUBCOMMAND TARGET]: the instrumented binary is
# built by `cargo SUBCOMMAND --target TARGET` (`zigbuild x86_64-unknown-linux-gnu.2.17`)
# when given, as the build that uses the profile must be (see the Makefile), and by `cargo
# build` for this host otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
profile=${1:?usage: scripts/pgo.sh PROFILE [SUBCOMMAND TARGET]}
subcommand=${2:-build}
build_target=${3:-}
case $profile in /*) ;; *) profile="$PWD/$profile" ;; esac
cargo=${CARGO:-cargo}

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null; then
  echo "pgo: adding rustup's llvm-tools for llvm-profdata"
  rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  echo "pgo: warning: $profdata not found (\`rustup component add llvm-tools\` adds it): no profile, the build is a plain one" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
target="$root/target/pgo-instrumented"

# Built for a target, the binary is in a directory named by it, less zigbuild's glibc
# version (`.2.17`).
triple=$(sed -E 's/\.[0-9.]+$//' <<< "$build_target")
bin="$target/${triple:+$triple/}release/pauselab"
linker=()
if [ "$subcommand" = zigbuild ]; then
  # zig cc takes rustc's `-u __llvm_profile_runtime` (which links the profiler's runtime)
  # for a file to link: the instrumented binary is linked by zigbuild's `zig cc` wrapper
  # (its C compiler for the target) given `-Wl,-u,SYMBOL` instead. The linker is not in
  # the hash that names a crate's functions, so the profile still matches the portable
  # build's. (rustc tells how to call a linker by its name: a `cc`-like one, not `link`.)
  cc_variable="CC_${triple//-/_}"
  cat > "$work/zigcc-pgo.sh" <<LINK
#!/usr/bin/env bash
args=()
while [ \$# -gt 0 ]; do
  if [ "\$1" = -u ] && [ \$# -gt 1 ]; then args+=("-Wl,-u,\$2"); shift 2; else args+=("\$1"); shift; fi
done
exec "\$$cc_variable" "\${args[@]}"
LINK
  chmod +x "$work/zigcc-pgo.sh"
  linker=("CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<< "$triple")_LINKER=$work/zigcc-pgo.sh")
fi

echo "pgo: building the instrumented binary into $target"
env "${linker[@]}" RUSTFLAGS="-Cprofile-generate=$work/counts" CARGO_TARGET_DIR="$target" \
  "$cargo" "$subcommand" --release -q -p pauselab --manifest-path "$root/Cargo.toml" \
  ${build_target:+--target "$build_target"}

# shellcheck source=bench/logs.sh
. "$root/bench/logs.sh"
mkdir -p "$work/inputs"
unified_g1_log 30 "$work/inputs/unified-g1.log" "$work" > /dev/null
for kind in cms g1 parallel; do
  jdk8_log "$kind" 30 "$work/inputs/jdk8-$kind.log" "$work"
done
safepoint_lines_log 15 "$work/inputs/safepoint-lines.log" "$work"
java_home=${JAVA_HOME:-}
if [ -z "$java_home" ] && command -v java >/dev/null; then
  java_home=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
fi
if [ -n "$java_home" ] && [ -x "$java_home/bin/java" ]; then
  echo "pgo: recording 10 s of a JVM ($java_home)"
  recording_input 30 "$work/inputs/recording.jfr" "$work" "$java_home"
else
  echo "pgo: no JDK found (JAVA_HOME, java): the recording reader is trained on nothing"
fi

echo "pgo: training"
for input in "$work"/inputs/*; do
  for threads in 1 2; do
    # Warnings to the terminal are not what is trained (a repeated recording's clock
    # goes back at each copy).
    "$bin" analyze --json --threads "$threads" "$input" > /dev/null 2> "$work/stderr" ||
      { cat "$work/stderr" >&2; exit 1; }
  done
done
"$bin" analyze "$work/inputs/jdk8-cms.log" > /dev/null 2> "$work/stderr"
for sample in "$work"/gcviewer-samples/logs/* "$root"/fixtures/gclogs/*.log.gz \
  "$root"/fixtures/gclogs/*.log "$root"/fixtures/reference/gclogs/*.log.gz; do
  # Some samples are not GC logs at all (GCViewer's own error cases): refused, as they
  # should be.
  "$bin" analyze --json "$sample" > /dev/null 2>&1 || true
done

mkdir -p "$(dirname "$profile")"
"$profdata" merge -o "$profile" "$work/counts"
echo "pgo: profile in $profile"
