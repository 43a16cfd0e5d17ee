#!/usr/bin/env bash
# Scrape latency of `pauselab export` with 1, 10 and 20 JVMs running (small heaps, every
# other one with -XX:+PerfDisableSharedMem so both the file and the memory route are
# timed), against the per-JVM cost of `jstat -gcutil`, the JVM-per-call tool that the
# exporters wrapping jstat run on every scrape. Target: under 5 ms per JVM per scrape.
# Columns: JVMs started here, JVMs read (others' JVMs count too), median and p90 wall time of
# GET /metrics, median / read, the exporter's own pauselab_export_scrape_duration_seconds,
# and the exporter's CPU time per scrape.
# Then the same with 20 JVMs that write GC and safepoint logs (rotated, gc*,safepoint) and
# collect about once a second each, scraped every half second, so every scrape follows the
# logs and fills the pause histograms: target under 1 ms of the exporter's CPU per JVM per
# scrape (on a loaded host the wall time is mostly waiting for a core; both are printed).
#
# Last, TLS: 10 JVMs with GC logs, scraped in alternating blocks through the plain exporter
# and through one with --web.config.file (TLS and basic auth, a bcrypt hash of cost 10),
# a new connection and a full handshake per scrape, as the exporter closes every
# connection: the same target, under 1 ms of CPU per JVM per scrape.
#
#   bench/export.sh [SCRAPES]     (default 40 scrapes per JVM count)
#   PARTS=tls bench/export.sh     only the TLS comparison (TLS_SCRAPES per block, default 100)
set -euo pipefail
cd "$(dirname "$0")/.."

SCRAPES=${1:-40}
INTERVAL=0
PARTS=${PARTS:-all}
# Arguments of every curl: the TLS part adds the CA and the credentials.
curl_args=()
. bench/common.sh
bench_build

work=$(mktemp -d /tmp/pauselab-bench-export.XXXXXX)
pids=()
exporter=
cleanup() {
    [ -n "$exporter" ] && kill "$exporter" 2>/dev/null || true
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

start_jvms() { # total wanted, [rate per second, JVM flags...]
    local wanted=$1 rate=${2:-5}
    shift; shift || true
    while [ ${#pids[@]} -lt "$wanted" ]; do
        flags=("$@")
        [ $((${#pids[@]} % 2)) -eq 1 ] && flags+=(-XX:+PerfDisableSharedMem)
        # Mostly idle, like most services between requests: 64 KiB five times a second.
        start_garbage 600 64k "$rate" 1 -Xmx32m -Xss256k -XX:TieredStopAtLevel=1 \
            -XX:CICompilerCount=1 -XX:+UseSerialGC "${flags[@]}"
        pids+=($!)
    done
}
stop_jvms() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done
    pids=()
}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" export --listen "127.0.0.1:$port" 2>"$work/exporter.log" &
exporter=$!
url="http://127.0.0.1:$port/metrics"
for _ in $(seq 50); do curl -sf -o /dev/null "$url" && break; sleep 0.1; done

# CPU time the exporter used so far, in ms (utime + stime; the wall time of a scrape on a
# busy host is mostly waiting for a core).
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / hz}' "/proc/$exporter/stat"; }

# Values of a sample in one scrape.
# The value is the last field: label values may hold spaces (cause="Allocation Failure").
sample() { grep -E "^$1 " "$work/scrape.txt" | awk '{s+=$NF} END {print s+0}'; }

header() { printf '%-6s %-6s %-11s %-9s %-12s %-9s %-12s\n' JVMs read "median ms" "p90 ms" "ms per JVM" "self ms" "CPU ms/scr"; }

# measure N [rate flags...]: starts JVMs up to N, waits until all are read, times SCRAPES
# scrapes and prints a row; sets last_per_jvm and last_cpu_per_jvm.
measure() {
    local n=$1
    shift
    start_jvms "$n" "$@"
    # Wait until every JVM of ours is up and read (JVMs of other users count too: the
    # per-JVM figure divides by what was actually read).
    for _ in $(seq 100); do
        curl -sf "${curl_args[@]}" "$url" >"$work/scrape.txt"
        ok=1
        for p in "${pids[@]}"; do grep -q "^hotspot_safepoints_total{pid=\"$p\"}" "$work/scrape.txt" || ok=0; done
        [ $ok -eq 1 ] && break
        sleep 0.2
    done
    [ $ok -eq 1 ] || { echo "bench: not all $n JVMs became readable" >&2; exit 1; }
    : >"$work/times.txt"
    : >"$work/self.txt"
    cpu_before=$(cpu_ms)
    for _ in $(seq "$SCRAPES"); do
        curl -s "${curl_args[@]}" -o "$work/scrape.txt" -w '%{time_total}\n' "$url" >>"$work/times.txt"
        sample pauselab_export_scrape_duration_seconds >>"$work/self.txt"
        sleep "$INTERVAL"
    done
    cpu=$(awk -v a="$cpu_before" -v b="$(cpu_ms)" -v n="$SCRAPES" 'BEGIN {printf "%.2f", (b - a) / n}')
    read_jvms=$(sample 'pauselab_export_jvms_read\{[^}]*\}')
    median=$(sort -g "$work/times.txt" | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]*1000}')
    p90=$(sort -g "$work/times.txt" | awk '{a[NR]=$1} END {printf "%.2f", a[int(NR*0.9)]*1000}')
    self=$(sort -g "$work/self.txt" | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]*1000}')
    per_jvm=$(awk -v m="$median" -v n="$read_jvms" 'BEGIN {printf "%.3f", m/n}')
    printf '%-6s %-6s %-11s %-9s %-12s %-9s %-12s\n' "$n" "$read_jvms" "$median" "$p90" "$per_jvm" "$self" "$cpu"
    last_per_jvm=$per_jvm
    last_cpu_per_jvm=$(awk -v c="$cpu" -v n="$read_jvms" 'BEGIN {printf "%.3f", c/n}')
}

if [ "$PARTS" = all ]; then
header
for n in 1 10 20; do
    measure "$n"
done

# The alternative: one jstat JVM per JVM per scrape (shared-file JVMs only; jstat cannot
# see the others at all).
jstat_ms=$( { for _ in 1 2 3 4 5; do
    s=$(date +%s%N); "$JDK/bin/jstat" -gcutil "${pids[0]}" >/dev/null; e=$(date +%s%N)
    echo $(( (e - s) / 1000 ))
done; } | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[3]/1000}')
echo "jstat -gcutil, one JVM: median ${jstat_ms} ms"
awk -v j="$jstat_ms" -v p="$last_per_jvm" 'BEGIN {
    printf "per JVM per scrape at 20 JVMs: pauselab export %.3f ms, jstat %.1f ms: %.0fx faster\n", p, j, j/p
    printf "target < 5 ms per JVM per scrape: %s\n", (p < 5 ? "met" : "MISSED")
}'

# 20 JVMs with GC and safepoint logs, collecting about once a second (64 KiB arrays, 200 a
# second, into a 32 MiB heap). Scrapes every 0.5 s, so each one has new lines.
stop_jvms
INTERVAL=0.5
echo "with GC logs (gc*,safepoint, rotated at 1 MiB, about one collection a second each):"
header
measure 20 200 "-Xlog:gc*,safepoint:file=$work/gc-%p.log:uptime,level,tags:filecount=3,filesize=1m"
following=$(grep -c '^pauselab_export_gc_log{.*state="following"' "$work/scrape.txt" || true)
pauses=$(sample 'hotspot_gc_pause_seconds_count\{[^}]*\}')
echo "logs followed: $following, GC pauses in the histograms: $pauses"
awk -v p="$last_per_jvm" -v c="$last_cpu_per_jvm" 'BEGIN {
    printf "per JVM per scrape with GC logs: %.3f ms wall, %.3f ms CPU\n", p, c
    printf "target < 1 ms of CPU per JVM per scrape: %s\n", (c < 1 ? "met" : "MISSED")
}'
fi

# TLS: a CA, a certificate for 127.0.0.1 signed by it, and basic auth for user "bench"
# (password "bench"; the hash made once with the bcrypt crate, cost 10 as htpasswd -B).
stop_jvms
INTERVAL=0.5
TLS_SCRAPES=${TLS_SCRAPES:-100}
SCRAPES=$TLS_SCRAPES
(
    cd "$work"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj /CN=bench-ca -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj /CN=bench -keyout server.key -out server.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
    openssl x509 -req -days 1 -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
        -extfile server.ext -out server.crt 2>/dev/null
    cat >web.yml <<'YAML'
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  bench: $2b$10$.Xa513PA1VCsNxcAYNlICOWwUnb5P5V0hwT2sVOeMeEEwnQ0gcbZC
YAML
)
plain_exporter=$exporter
plain_url=$url
tls_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" export --listen "127.0.0.1:$tls_port" --web.config.file "$work/web.yml" 2>"$work/exporter-tls.log" &
tls_exporter=$!
tls_url="https://127.0.0.1:$tls_port/metrics"
tls_args=(--cacert "$work/ca.crt" -u bench:bench)
trap 'kill "$tls_exporter" 2>/dev/null || true; cleanup' EXIT INT TERM
for _ in $(seq 50); do curl -sf "${tls_args[@]}" -o /dev/null "$tls_url" && break; sleep 0.1; done
echo "10 JVMs with GC logs, $TLS_SCRAPES scrapes per block, plain HTTP and TLS with basic auth alternating:"
printf '%-6s ' route
header
for round in 1 2; do
    for route in plain tls; do
        if [ "$route" = plain ]; then
            exporter=$plain_exporter url=$plain_url curl_args=()
        else
            exporter=$tls_exporter url=$tls_url curl_args=("${tls_args[@]}")
        fi
        printf '%-6s ' "$route"
        measure 10 200 "-Xlog:gc*,safepoint:file=$work/gc-%p.log:uptime,level,tags:filecount=3,filesize=1m"
        eval "cpu_per_jvm_$route=\$last_cpu_per_jvm"
    done
done
exporter=$plain_exporter
awk -v p="$cpu_per_jvm_plain" -v t="$cpu_per_jvm_tls" 'BEGIN {
    printf "last round, CPU per JVM per scrape: plain %.3f ms, TLS %.3f ms\n", p, t
    printf "target < 1 ms of CPU per JVM per scrape through TLS: %s\n", (t < 1 ? "met" : "MISSED")
}'
