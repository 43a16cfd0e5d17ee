#!/usr/bin/env bash
# Times `make test` on this checkout as docs/testing.md reports it: wall, user and system
# seconds of the whole, each step's start (scripts/test.sh prints them), and each Rust test
# binary's run time from libtest's summary, slowest first. Run from a fresh clone to see
# what a newcomer waits for. Logs stay in the directory given (default target/test-times).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/test-times}
mkdir -p "$out"
# Timed by bash's `time`, not GNU time's -o FILE: the tests must not inherit an open
# descriptor (the exporter's open-files test counts them).
TIMEFORMAT="%R %U %S"
status=0
{ time make --no-print-directory test >"$out/test.log" 2>&1; } 2>"$out/time" || status=$?
echo "== make test: wall user sys (seconds): $(cat "$out/time"), exit status $status"
echo "== steps (start, seconds)"
grep '^== \[' "$out/test.log" || true
echo "== test binaries (run wall seconds, from libtest's summaries)"
# "Running BINARY" is followed by the binary's "test result: ... finished in N.NNs"; the
# host lane's lines (scripts/test.sh) carry a "host| " prefix and are counted apart.
awk '{lane=""; if (sub(/^host\| /, "")) lane="host:"}
     /^ *Running /{bin[lane]=$2} /^ *Doc-tests /{bin[lane]="doc:" $2}
     /^test result:/{for(i=1;i<=NF;i++) if($i=="in") t=$(i+1); sub("s$","",t);
       passed=$4; ignored=$8; if (passed > 0) print t, passed, ignored, lane bin[lane]}' "$out/test.log" |
  sort -rn | head -20 | column -t
exit "$status"
