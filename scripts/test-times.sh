#!/usr/bin/env bash
# Times each phase of `make test` (wall and CPU seconds) and each Rust test binary's run,
# on this checkout, as docs/testing.md reports them. Run from a fresh clone to see what a
# newcomer waits for. Output: one line per phase, then one per test binary, slowest first;
# logs and cargo's build timings (target/cargo-timings) stay in the directory given
# (default target/test-times).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/test-times}
mkdir -p "$out"
: >"$out/phases"

# phase NAME COMMAND...: runs COMMAND, appends "NAME wall user sys" (seconds). Timed by
# bash's `time`, not GNU time's -o FILE: the tests must not inherit an open descriptor (the
# exporter's open-files test counts them).
TIMEFORMAT="%R %U %S"
phase() {
  local name=$1 status=0
  shift
  { time "$@" >"$out/$name.log" 2>&1; } 2>"$out/time.$name" || status=$?
  tail -3 "$out/$name.log"
  echo "$name $(cat "$out/time.$name") exit=$status" >>"$out/phases"
}

phase setup make --no-print-directory setup
phase setup-test-packages scripts/setup.sh $(sed -n 's/^TEST_PACKAGES ?= //p' Makefile)
phase fmt cargo fmt --all -- --check
phase clippy cargo clippy --workspace --all-targets -- -D warnings
phase test-java make --no-print-directory test-java
phase test-build cargo test --workspace --no-run --timings
# Every binary, also after one fails, so that each has its time.
phase test-run cargo test --workspace --no-fail-fast

echo "== phases (wall user sys, seconds; exit status)"
column -t "$out/phases"
echo "== test binaries (run wall seconds, from libtest's summaries)"
# "Running tests/x.rs (target/debug/deps/x-hash)" is followed by the binary's
# "test result: ... finished in N.NNs".
awk '/^ *Running /{bin=$2} /^ *Doc-tests /{bin="doc:" $2}
     /^test result:/{for(i=1;i<=NF;i++) if($i=="in") t=$(i+1); sub("s$","",t);
       passed=$4; ignored=$8; print t, passed, ignored, bin}' "$out/test-run.log" |
  sort -rn | column -t
