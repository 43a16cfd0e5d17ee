#!/usr/bin/env bash
# `make test`: every check of `make lint`, `make test-java` and `make test-rust`, scheduled
# for a 2-core machine (docs/testing.md), each step's start printed in seconds so that the
# log is its own timing:
#
# 1. `cargo fmt --check`.
# 2. The Rust test build with clippy's lints (`-D warnings`, every target), beside the Java
#    build (`make java`). clippy-driver is rustc with the lints, which is how `cargo clippy`
#    runs it; building the tests with it compiles the dependencies once, where `cargo
#    clippy` then `cargo test` checked them and then built them.
# 3. The tests in two lanes side by side: the Rust tests that change the host or time a slow
#    device (scripts/host-tests), one at a time, mostly waiting for their JVMs; and the Java
#    tests then every other Rust test. Then the few that need a quiet host, alone.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}

# A first build from a clean checkout gains nothing from incremental data, only its writing.
if [ ! -d target/debug/incremental ] && [ -z "${CARGO_INCREMENTAL:-}" ]; then
  export CARGO_INCREMENTAL=0
fi

step() { echo "== [${SECONDS}s] $*"; }

# Runs "$@" with each output line prefixed, keeping its exit status.
prefixed() {
  local prefix=$1
  shift
  set +e
  "$@" 2>&1 | sed -u "s/^/$prefix| /"
  local status=${PIPESTATUS[0]}
  set -e
  return "$status"
}

# Waits for the background jobs named by their pids; fails if any failed.
wait_all() {
  local failed=0 pid
  for pid in "$@"; do
    wait "$pid" || failed=1
  done
  return "$failed"
}

# libtest filters of the host lane (`host`) and of the quiet tests (`alone`).
filters() { sed -n "s/^$1 //p" scripts/host-tests; }
mapfile -t host_tests < <(filters host)
mapfile -t alone_tests < <(filters alone)
# No filter would mean every test: the lanes need both lists.
if [ "${#host_tests[@]}" -eq 0 ] || [ "${#alone_tests[@]}" -eq 0 ]; then
  echo "scripts/host-tests lists no host or no alone test: keep at least one of each" >&2
  exit 2
fi
skip_listed=()
for filter in "${host_tests[@]}" "${alone_tests[@]}"; do
  skip_listed+=(--skip "$filter")
done

step "cargo fmt --check"
$CARGO fmt --all -- --check

if driver=$(command -v clippy-driver); then
  # What `cargo clippy -- -D warnings` hands clippy-driver (its arguments, joined so).
  export RUSTC_WORKSPACE_WRAPPER=$driver
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
  build=("$CARGO" test --workspace --all-targets --no-run)
  step "Rust test build with clippy's lints, beside the Java build"
else
  step "make lint (no clippy-driver on PATH: clippy checks, then the tests build)"
  make --no-print-directory lint
  build=("$CARGO" test --workspace --no-run)
  step "Rust test build, beside the Java build"
fi
prefixed java make --no-print-directory java &
java=$!
"${build[@]}" &
rust=$!
wait_all "$java" "$rust"

step "tests: the host lane (scripts/host-tests) beside the Java tests and the other Rust tests"
prefixed host "$CARGO" test --workspace --lib --bins --tests -- --test-threads=1 "${host_tests[@]}" &
host=$!
# Surefire alone: the jars the host lane's JVMs load were built above and stay as they are.
{ mvn -B -ntp -T 2 -f java/pom.xml surefire:test && "$CARGO" test --workspace -- "${skip_listed[@]}"; } &
others=$!
wait_all "$host" "$others"

step "Rust tests that need a quiet host, alone"
$CARGO test --workspace --lib --bins --tests -- --test-threads=1 "${alone_tests[@]}"

echo "test: every check passed in ${SECONDS}s"
