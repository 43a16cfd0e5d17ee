#!/usr/bin/env bash
# Runs two pauselab binaries' `analyze --json` on every log fixture, every GCViewer sample,
# the reference logs and the bench's large logs when given, and reports any byte difference:
# a change meant to make analyze faster must not change what it says.
# Usage: bench/compare-analyze.sh BEFORE_BIN AFTER_BIN [EXTRA_LOG...]
# AFTER_ARGS (e.g. "--threads 2") are passed to the second binary only, to compare a
# parallel run against a sequential one. TEXT=1 compares the text output (no --json).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
before=$1 after=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
tar xzf "$root/fixtures/reference/gclogs/gcviewer-samples.tar.gz" -C "$work"
logs=("$root"/fixtures/gclogs/*.log "$root"/fixtures/gclogs/*.log.gz
      "$root"/fixtures/reference/gclogs/*.gz "$root"/fixtures/reference/gclogs/*.zip)
while IFS= read -r -d '' f; do logs+=("$f"); done < <(find "$work/gcviewer-samples" -type f -name '*.txt' -print0 | sort -z)
logs+=("$@")
format=(--json)
[ "${TEXT:-0}" = 1 ] && format=()
same=0 differ=0
for log in "${logs[@]}"; do
  # A directory of its own per log, so that no rotated-set siblings are picked up.
  dir="$work/run/$(basename "$log")"
  mkdir -p "$dir" && ln -sf "$log" "$dir/log"
  "$before" analyze "${format[@]}" "$dir/log" > "$work/a" 2> "$work/a.err"; ra=$?
  # shellcheck disable=SC2086
  "$after" analyze "${format[@]}" ${AFTER_ARGS:-} "$dir/log" > "$work/b" 2> "$work/b.err"; rb=$?
  if [ "$ra" = "$rb" ] && cmp -s "$work/a" "$work/b" && cmp -s "$work/a.err" "$work/b.err"; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    echo "DIFFERS: $log (exit $ra vs $rb)"
    diff <(cat "$work/a" "$work/a.err") <(cat "$work/b" "$work/b.err") | head -5
  fi
done
echo "$same identical, $differ different"
[ "$differ" = 0 ]
