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

# phase NAME COMMAND...: runs COMMAND, appends "NAME wall user sys" (seconds).
phase() {
  local name=$1
  shift
  /usr/bin/time -o "$out/time.$name" -f "%e %U %S" "$@" 2>&1 | tee "$out/$name.log"
  echo "$name $(cat "$out/time.$name")" >>"$out/phases"
}

phase setup make --no-print-directory setup
phase setup-test-packages scripts/setup.sh $(sed -n 's/^TEST_PACKAGES ?= //p' Makefile)
phase fmt cargo fmt --all -- --check
phase clippy cargo clippy --workspace --all-targets -- -D warnings
phase test-java make --no-print-directory test-java
phase test-build cargo test --workspace --no-run --timings
phase test-run cargo test --workspace

echo "== phases (wall user sys, seconds)"
column -t "$out/phases"
echo "== test binaries (run wall seconds, from libtest's summaries)"
# "Running tests/x.rs (target/debug/deps/x-hash)" is followed by the binary's
# "test result: ... finished in N.NNs".
awk '/^ *Running /{bin=$2} /^ *Doc-tests /{bin="doc:" $2}
     /^test result:/{for(i=1;i<=NF;i++) if($i=="in") t=$(i+1); sub("s$","",t);
       passed=$4; ignored=$8; print t, passed, ignored, bin}' "$out/test-run.log" |
  sort -rn | column -t
