#!/usr/bin/env bash
# pauselab analyze on a large JFR recording, against the JDK's own `jfr summary` and
# `jfr print --json` on the same file: seconds, max RSS and the ratios.
# Records 10 s of an allocating G1 JVM (settings=profile plus the safepoint events), then
# concatenates copies of it into one ~BENCH_MB (default 300) recording (a recording is a
# sequence of self-contained chunks, so the copies read as one long recording).
# JDK=/path picks the JDK that records and runs jfr (default JDK 25).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jdk=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
target_mb=${BENCH_MB:-300}
bin="$root/target/release/pauselab"
[ -x "$bin" ] || cargo build --release -p pauselab --manifest-path "$root/Cargo.toml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

"$jdk/bin/java" -XX:+UseG1GC -Xmx256m \
  "-XX:StartFlightRecording:filename=$work/base.jfr,settings=profile,+jdk.SafepointStateSynchronization#enabled=true,+jdk.SafepointEnd#enabled=true" \
  "$root/crates/jfr/tests/Alloc.java" 10000 > /dev/null 2>&1
base=$(stat -c %s "$work/base.jfr")
copies=$(( (target_mb * 1000000 + base - 1) / base ))
for _ in $(seq "$copies"); do cat "$work/base.jfr"; done > "$work/big.jfr"
size=$(stat -c %s "$work/big.jfr")
echo "recording: $copies x $((base / 1000)) kB = $((size / 1000000)) MB"
cat "$work/big.jfr" > /dev/null  # page cache warm for every tool

measure() { # label, command...: prints seconds and max RSS, leaves seconds in $secs
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out" 2> "$work/err" || {
    echo "$label failed: $(head -3 "$work/err")" >&2
    exit 1
  }
  read -r secs rss_kb < "$work/time"
  echo "$label: ${secs} s, $(awk -v s="$size" -v t="$secs" 'BEGIN { printf "%.0f", s / 1e6 / t }') MB/s, max RSS $((rss_kb / 1024)) MB"
}

measure "pauselab analyze --json" "$bin" analyze --json "$work/big.jfr"
ours=$secs
echo "  pauses $(grep -m1 '"count"' "$work/out" | tr -dc 0-9), $(grep -c . "$work/err" || true) warning line(s)"
measure "jfr summary" "$jdk/bin/jfr" summary "$work/big.jfr"
summary=$secs
measure "jfr print --json (GC, safepoint events)" "$jdk/bin/jfr" print --json \
  --events jdk.GarbageCollection,jdk.GCPhasePause,jdk.SafepointBegin,jdk.SafepointStateSynchronization,jdk.SafepointEnd,jdk.ExecuteVMOperation,jdk.ZAllocationStall,jdk.GCHeapSummary,jdk.CPULoad \
  "$work/big.jfr"
print=$secs
awk -v o="$ours" -v s="$summary" -v p="$print" \
  'BEGIN { printf "ratio: pauselab is %.1fx faster than jfr summary, %.1fx faster than jfr print --json\n", s / o, p / o }'
