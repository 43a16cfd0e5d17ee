# The large inputs `analyze` is measured on, built from the repository's fixtures (sourced by
# bench/analyze.sh, and by scripts/pgo.sh, which trains the release build on smaller ones).
# Each function writes one input of about MB megabytes to OUT; WORK is a scratch directory.
# Needs perl, unzip and gzip; recording_input also a JDK.

logs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
logs_data="$logs_root/fixtures/reference"

# unified_g1_log MB OUT WORK: the JDK 11 reference log (G1, gc*) repeated, each copy's
# uptimes shifted so that the whole reads as one continuous run. Prints how many copies.
unified_g1_log() {
  local mb=$1 out=$2 work=$3 base_mb span copies i
  unzip -p "$logs_data/gclogs/jdk11_details.log.zip" > "$work/base.log"
  base_mb=$(( $(stat -c %s "$work/base.log") / 1000000 ))
  span=$(tail -1 "$work/base.log" | sed -E 's/^\[([0-9.]+)s\].*/\1/')
  copies=$(( (mb + base_mb - 1) / base_mb ))
  : > "$out"
  for i in $(seq 0 $((copies - 1))); do
    perl -pe "s/^\[(\d+\.\d+)s\]/sprintf('[%.3fs]', \$1 + $i * ($span + 1))/e" "$work/base.log" >> "$out"
  done
  rm -f "$work/base.log"
  echo "$copies"
}

# jdk8_log KIND MB OUT WORK: GCViewer's samples of one collector repeated with shifted
# stamps into one continuous run (bench/jdk8-log.pl). KIND is
# - cms: every multi-line feature (PrintHeapAtGC, PrintFLSStatistics, tenuring
#   distribution, adaptive size policy, date stamps, stopped time);
# - g1: G1 with its detail trees (PrintGCDetails, PrintHeapAtGC, tenuring distribution,
#   stopped time, concurrent cycles, string deduplication, ergonomics with decimal commas);
# - parallel: adaptive size policy, tenuring distribution, causes, date stamps, stopped time.
# Every sample has uptime stamps (a sample with date stamps alone, such as
# SampleSun1_8_0G1PrintHeapAtGc.txt, would make the log's clock jump between the two at
# each copy, as no JVM writes it), and each log holds its collector's samples only.
jdk8_log() {
  local kind=$1 mb=$2 out=$3 work=$4
  local prefix="$work/gcviewer-samples/logs/SampleSun1_"
  [ -d "$work/gcviewer-samples/logs" ] ||
    tar xzf "$logs_data/gclogs/gcviewer-samples.tar.gz" -C "$work" gcviewer-samples/logs
  local names
  case $kind in
    cms) names="8_0CMS_ScavengeBR_HeapAtGC_TenuringDist_PrintFLS 7_0CmsPrintFlsStats2
         7_0CmsPrintFlsStats3 7_0_51_CMS_PrintApplStoppedTime_TenuringDist
         6_0CMSAdaptiveSizePolicy" ;;
    g1) names="7_0G1-ApplicationStopped 8_0G1_ConcurrentCycle 6_0G1_PrintHeapAtGC
        8_0G1StringDeduplication 7_0G1TenuringDistribution 7_0_12PrintAdaptiveSizePolicy" ;;
    parallel) names="7_0PS_Adaptive_Tenuring_AppStopped 6_0AdaptiveSizePolicy
              5_0AdaptiveSizePolicy 7_0ParallelAdaptiveSizeReference 8_0Parallel_Apple
              7_0Parallel_Tenuring_PrintGCCause" ;;
    *) echo "jdk8_log: no such kind: $kind (cms, g1, parallel)" >&2; return 1 ;;
  esac
  local files=() name
  for name in $names; do files+=("$prefix$name.txt"); done
  perl "$logs_root/bench/jdk8-log.pl" "$mb" "${files[@]}" > "$out"
}

# safepoint_lines_log MB OUT WORK: the densest log in records, `-Xlog:safepoint` alone with
# a record on every line (the JDK 17 fixture's safepoint lines, uptime decoration only,
# 100 ms apart).
safepoint_lines_log() {
  local mb=$1 out=$2 work=$3
  zcat "$logs_root/fixtures/gclogs/g1-jdk17.log.gz" | grep -F '[safepoint' |
    sed -E 's/^\[[^]]*\]\[[0-9.]+s\]/[0.000s]/' > "$work/safepoints.txt"
  perl -e 'my ($file, $bytes) = @ARGV; open(my $in, "<", $file) or die "$file: $!";
    my @lines = <$in>; my ($ms, $written) = (0, 0);
    while ($written < $bytes) { for (@lines) { $ms += 100; (my $line = $_) =~ s/^\[0\.000s\]/sprintf("[%.3fs]", $ms \/ 1000)/e;
      print $line; $written += length $line } }' "$work/safepoints.txt" $((mb * 1000000)) > "$out"
  rm -f "$work/safepoints.txt"
}

# recording_input MB OUT WORK JDK: 10 s of an allocating G1 JVM recorded with JFR (as
# bench/jfr.sh records it), repeated: a recording is a sequence of self-contained chunks.
recording_input() {
  local mb=$1 out=$2 work=$3 jdk=$4 base i
  "$jdk/bin/java" -XX:+UseG1GC -Xmx256m \
    "-XX:StartFlightRecording:filename=$work/base.jfr,settings=profile,+jdk.SafepointStateSynchronization#enabled=true,+jdk.SafepointEnd#enabled=true" \
    "$logs_root/crates/jfr/tests/Alloc.java" 10000 > /dev/null 2>&1
  base=$(stat -c %s "$work/base.jfr")
  for i in $(seq $(( (mb * 1000000 + base - 1) / base ))); do cat "$work/base.jfr"; done > "$out"
  rm -f "$work/base.jfr"
}
