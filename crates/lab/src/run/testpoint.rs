//! Named points in a run where tests can stop it deterministically:
//! `PAUSELAB_LAB_TESTPOINT=NAME` makes the run print `pauselab-testpoint NAME` on stderr
//! when it reaches NAME and wait there until it is signalled; `NAME:panic` panics there.
//! Without the variable these are no-ops.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub const ENV: &str = "PAUSELAB_LAB_TESTPOINT";

pub fn hit(name: &str, stop: &AtomicBool) {
    let Ok(wanted) = std::env::var(ENV) else {
        return;
    };
    let (point, action) = wanted.split_once(':').unwrap_or((wanted.as_str(), "wait"));
    if point != name {
        return;
    }
    eprintln!("pauselab-testpoint {name}");
    if action == "panic" {
        panic!("test point {name} asked to panic");
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
    }
}
