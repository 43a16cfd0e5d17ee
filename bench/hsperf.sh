#!/usr/bin/env bash
# Native counter reading vs the JDK's tools, against one running JVM (JDK 17, 64 MB heap):
#  - whole-process wall time of `pauselab perf PID` (all counters) and
#    `pauselab jstat -gcutil PID` vs `jstat -gcutil PID` and `jcmd PID PerfCounter.print`;
#  - in-process cost of one snapshot, file route and memory route.
# Targets: >= 100x faster than jstat per call; < 20 us per in-process snapshot.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS_NATIVE=${RUNS_NATIVE:-50}
RUNS_JDK=${RUNS_JDK:-7}
. bench/common.sh
bench_build

work=$(mktemp -d)
jvm_pid=
cleanup() {
    [ -n "$jvm_pid" ] && kill "$jvm_pid" 2>/dev/null && wait "$jvm_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Busy but small: 1 KiB arrays, 50,000 a second, 2,000 kept live.
start_garbage 3600 1k 50000 2000 -Xmx64m
jvm_pid=$!
for _ in $(seq 100); do
    "$BIN" perf "$jvm_pid" sun.rt.createVmEndTime 2>/dev/null | grep -qv '=0$' && break
    sleep 0.1
done
sleep 1

# Median wall time in microseconds of running "$@" N times.
median_us() {
    local n=$1; shift
    local times=()
    for _ in $(seq "$n"); do
        local t0 t1
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s%N)
        times+=($(( (t1 - t0) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

echo "JVM pid $jvm_pid ($("$BIN" perf "$jvm_pid" java.property.java.vm.version | cut -d= -f2))"
perf_all=$(median_us "$RUNS_NATIVE" "$BIN" perf "$jvm_pid")
perf_mem=$(median_us "$RUNS_NATIVE" "$BIN" perf "$jvm_pid" --source memory)
jstat_native=$(median_us "$RUNS_NATIVE" "$BIN" jstat -gcutil "$jvm_pid")
jstat_jdk=$(median_us "$RUNS_JDK" "$JDK/bin/jstat" -gcutil "$jvm_pid")
jcmd_jdk=$(median_us "$RUNS_JDK" "$JDK/bin/jcmd" "$jvm_pid" PerfCounter.print)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0fx", a / b }'; }
printf '%-48s %10s\n' "whole process, median wall time" "us"
printf '%-48s %10d\n' "pauselab perf PID (all counters, file)" "$perf_all"
printf '%-48s %10d\n' "pauselab perf PID --source memory" "$perf_mem"
printf '%-48s %10d\n' "pauselab jstat -gcutil PID" "$jstat_native"
printf '%-48s %10d\n' "jstat -gcutil PID" "$jstat_jdk"
printf '%-48s %10d\n' "jcmd PID PerfCounter.print" "$jcmd_jdk"
echo "ratio jstat -gcutil / pauselab jstat -gcutil:        $(ratio "$jstat_jdk" "$jstat_native") (target >= 100x)"
echo "ratio jcmd PerfCounter.print / pauselab perf:        $(ratio "$jcmd_jdk" "$perf_all")"
echo "ratio jcmd PerfCounter.print / pauselab perf memory: $(ratio "$jcmd_jdk" "$perf_mem")"

echo "in-process snapshot (copy + consistency check + parse), target < 20 us:"
echo "  file:   $("$BIN" perf "$jvm_pid" --source file --time-snapshots 20000)"
echo "  memory: $("$BIN" perf "$jvm_pid" --source memory --time-snapshots 20000)"
