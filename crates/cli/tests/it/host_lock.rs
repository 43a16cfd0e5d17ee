//! Tests that change the host (loop devices, mounts, block throttles, cgroups, swap) or
//! time a slow device run one at a time: each holds this lock while it does. They were
//! separate test binaries, which cargo runs one after the other; in one binary they would
//! otherwise run beside each other.
//!
//! `make test` runs them in a lane of their own, by name, from `scripts/host-tests`, beside
//! a second `cargo test` that skips them: the lock only orders the tests of one process,
//! so a test that takes it must be listed there, and one that is not fails saying so.

use std::sync::{Mutex, MutexGuard};

static HOST: Mutex<()> = Mutex::new(());

/// The list `scripts/test.sh` splits the lanes by: `host <filter>` and `alone <filter>` lines.
const HOST_TESTS: &str = include_str!("../../../../scripts/host-tests");

/// Held until dropped; a test that panicked while holding it does not block the others.
pub fn exclusive() -> MutexGuard<'static, ()> {
    assert_listed();
    HOST.lock().unwrap_or_else(|e| e.into_inner())
}

/// libtest names each test's thread after the test.
fn assert_listed() {
    let thread = std::thread::current();
    let Some(test) = thread.name().filter(|name| *name != "main") else {
        return;
    };
    let listed = HOST_TESTS
        .lines()
        .filter_map(|line| {
            line.strip_prefix("host ")
                .or_else(|| line.strip_prefix("alone "))
        })
        .any(|filter| test.contains(filter.trim()));
    assert!(
        listed,
        "{test} changes the host: add it to scripts/host-tests, or `make test` runs it beside \
         the other host tests"
    );
}
