//! Tests that change the host (loop devices, mounts, block throttles, cgroups, swap) or
//! time a slow device run one at a time: each holds this lock while it does. They were
//! separate test binaries, which cargo runs one after the other; in one binary they would
//! otherwise run beside each other.

use std::sync::{Mutex, MutexGuard};

static HOST: Mutex<()> = Mutex::new(());

/// Held until dropped; a test that panicked while holding it does not block the others.
pub fn exclusive() -> MutexGuard<'static, ()> {
    HOST.lock().unwrap_or_else(|e| e.into_inner())
}
