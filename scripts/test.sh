#!/usr/bin/env bash
# `make test`: every check of `make lint`, `make test-java` and `make test-rust`, scheduled
# for a 2-core machine (docs/testing.md), each step's start printed in seconds so that the
# log is its own timing:
#
# 1. `cargo fmt --check`.
# 2. The Rust integration-test binaries, built with clippy's lints (`-D warnings`), beside
#    the Java build (`make java`). clippy-driver is rustc with the lints, which is how
#    `cargo clippy` runs it; building the tests with it compiles the dependencies once,
#    where `cargo clippy` then `cargo test` checked them and then built them.
# 3. The tests in two lanes side by side, while the rest of the build (the unit-test
#    binaries and every other target, linted alike) goes on at a lower priority. The host
#    lane: the Rust tests that change the host or time a slow device (scripts/host-tests),
#    one at a time, mostly waiting for their JVMs. The other lane: every other integration
#    test, the Java tests, then the unit and doc tests. Each lane takes the integration-test
#    binaries first, and the unit tests once they are built. Then the few tests that need a
#    quiet host, alone.
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
  rest_of_build=("$CARGO" test --workspace --all-targets --no-run)
  step "Rust integration-test build with clippy's lints, beside the Java build"
else
  step "make lint (no clippy-driver on PATH: clippy checks, then the tests build)"
  make --no-print-directory lint
  rest_of_build=("$CARGO" test --workspace --no-run)
  step "Rust integration-test build, beside the Java build"
fi
# The integration-test binaries first: the host lane runs them while the rest builds. The
# same `--workspace` as the whole build, so that features resolve alike and nothing is
# built twice. Cargo's messages name each binary and its package's directory.
integration_tests=$(mktemp)
trap 'rm -f "$integration_tests"' EXIT
prefixed java make --no-print-directory java &
java=$!
"$CARGO" test --workspace --test '*' --no-run --message-format=json-render-diagnostics \
  >"$integration_tests" &
rust=$!
wait_all "$java" "$rust"

# "DIR<TAB>EXECUTABLE" of each integration-test binary, from cargo's JSON messages (which
# give the package's manifest before the target's kind and executable).
integration_binaries() {
  sed -n 's|.*"manifest_path":"\([^"]*\)/Cargo.toml".*"kind":\["test"\].*"executable":"\([^"]*\)".*|\1\t\2|p' \
    "$integration_tests"
}
if [ -z "$(integration_binaries)" ]; then
  echo "cargo built no integration-test binary that scripts/test.sh could read" >&2
  exit 1
fi

# Runs every integration-test binary as `cargo test` runs it (from its package's directory),
# with the given libtest arguments; stops at the first that fails.
each_integration_binary() {
  local dir exe
  while IFS=$'\t' read -r dir exe; do
    echo "Running ${exe#"$PWD"/} (${dir#"$PWD"/})"
    (cd "$dir" && "$exe" "$@") || return
  done < <(integration_binaries)
}

# The host lane: the integration tests at once, then the unit tests, which cargo runs once
# the build below, holding cargo's lock on target/, is done.
host_lane() {
  each_integration_binary --test-threads=1 "${host_tests[@]}" &&
    "$CARGO" test --workspace --lib --bins -- --test-threads=1 "${host_tests[@]}"
}

# The other lane: the same order; Surefire alone in between (the jars the host lane's JVMs
# load were built above and stay as they are).
other_lane() {
  each_integration_binary "${skip_listed[@]}" &&
    mvn -B -ntp -T 2 -f java/pom.xml surefire:test &&
    "$CARGO" test --workspace --lib --bins -- "${skip_listed[@]}" &&
    "$CARGO" test --workspace --doc -- "${skip_listed[@]}"
}

step "tests: the host lane (scripts/host-tests) beside the other tests, while the unit tests build"
prefixed host host_lane &
host=$!
other_lane &
others=$!
# Niced: the host lane's JVMs measure pauses, and the tests should get the CPU first.
nice -n 10 "${rest_of_build[@]}" &
rest=$!
wait_all "$host" "$others" "$rest"

step "Rust tests that need a quiet host, alone"
$CARGO test --workspace --lib --bins --tests -- --test-threads=1 "${alone_tests[@]}"

echo "test: every check passed in ${SECONDS}s"
