//! Named points in a run where tests can stop it deterministically:
//! `PAUSELAB_LAB_TESTPOINT=NAME` makes the run print `pauselab-testpoint NAME` on stderr
//! when it reaches NAME and wait there until it is signalled; `NAME:panic` panics there;
//! `NAME@N` stops at the Nth time the process reaches NAME (a later run of a matrix).
//! Without the variable these are no-ops.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

pub const ENV: &str = "PAUSELAB_LAB_TESTPOINT";

pub fn hit(name: &str, stop: &AtomicBool) {
    let Ok(wanted) = std::env::var(ENV) else {
        return;
    };
    let (point, action) = wanted.split_once(':').unwrap_or((wanted.as_str(), "wait"));
    let (point, nth) = match point.split_once('@') {
        Some((point, n)) => (point, n.parse::<u32>().unwrap_or(1)),
        None => (point, 1),
    };
    if point != name {
        return;
    }
    static HITS: AtomicU32 = AtomicU32::new(0);
    if HITS.fetch_add(1, Ordering::SeqCst) + 1 != nth {
        return;
    }
    pauselab_pause::eprintln_lossy!("pauselab-testpoint {name}");
    if action == "panic" {
        panic!("test point {name} asked to panic");
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
    }
}
