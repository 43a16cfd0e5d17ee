#!/usr/bin/env bash
# CPU cost of `pauselab watch PID -i 1000` (JVM counters, PSI, vmstat, cgroup throttling and a
# D-state scan of the JVM's threads every 50 ms) against `jstat -gcutil PID 1000`, the tool
# users run for a per-second view of one JVM (counters only). Both watch the same JVM for the
# same number of seconds, one after the other; the table gives each one's CPU time per
# interval and the ratio jstat / watch.
#
#   bench/watch.sh [SECONDS]      (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_RUN=${1:-30}
. bench/common.sh
bench_build

work=$(mktemp -d /tmp/pauselab-bench-watch.XXXXXX)
jvm=
cleanup() {
    [ -n "$jvm" ] && kill "$jvm" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# 4 MiB arrays every 5 ms, 2 kept live: a young collection every few hundred ms.
start_garbage $((2 * SECONDS_RUN + 30)) 4m 200 2 -Xmx256m
jvm=$!
sleep 2

# CPU seconds (user + sys) of a command, from GNU time.
cpu_of() {
    /usr/bin/time -f "%U %S" -o "$work/time" "$@" >/dev/null 2>&1 || true
    awk '{ printf "%.3f", $1 + $2 }' "$work/time"
}

watch_cpu=$(cpu_of "$BIN" watch "$jvm" -i 1000 --count "$SECONDS_RUN")
jstat_cpu=$(cpu_of "$JDK/bin/jstat" -gcutil "$jvm" 1000 "$SECONDS_RUN")

printf '%-28s %12s %18s\n' "tool" "CPU s" "CPU ms / interval"
printf '%-28s %12s %18.2f\n' "pauselab watch -i 1000" "$watch_cpu" "$(echo "$watch_cpu * 1000 / $SECONDS_RUN" | bc -l)"
printf '%-28s %12s %18.2f\n' "jstat -gcutil PID 1000" "$jstat_cpu" "$(echo "$jstat_cpu * 1000 / $SECONDS_RUN" | bc -l)"
printf 'ratio jstat / watch: %.1fx\n' "$(echo "$jstat_cpu / ($watch_cpu + 0.001)" | bc -l)"
