#!/usr/bin/env bash
# `make test`: lint, test-java and test-rust (the Makefile's targets), one after the other,
# each step's start printed in seconds so that the log is its own timing (docs/testing.md).
#
# One after the other on purpose: running the CPU-bound checks (clippy, the Java tests, the
# other crates' tests) beside the CLI's lab tests, which mostly wait for their JVMs, was
# tried; a lab verdict beside a busy compiler came out inconclusive, and a slow device
# beside it stopped stalling.
set -euo pipefail
cd "$(dirname "$0")/.."
# A first build from a clean checkout gains nothing from incremental data, only its writing.
if [ ! -d target/debug/incremental ] && [ -z "${CARGO_INCREMENTAL:-}" ]; then
  export CARGO_INCREMENTAL=0
fi
for target in lint test-java test-rust; do
  echo "== [${SECONDS}s] make $target"
  make --no-print-directory "$target"
done
echo "test: every check passed in ${SECONDS}s"
