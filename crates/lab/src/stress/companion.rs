//! Companions: work pauselab does beside a variant's JVM while it runs.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The reader's log in the variant's bundle directory.
pub const READER_LOG: &str = "hsperf-reader.jsonl";

/// Reads the JVM's perf counters every `interval` (from process memory when the JVM keeps
/// them there) and appends one JSON line per read to `log`: time, read latency, counters
/// read, and the error if a read failed.
pub fn hsperf_reader(
    pid: u32,
    interval: Duration,
    log: &Path,
    stop: &AtomicBool,
    run_stop: &AtomicBool,
) {
    let Ok(mut out) = pauselab_pause::output::create_file(log) else {
        return;
    };
    let mut reader = None;
    while !stop.load(Ordering::Relaxed) && !run_stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let line = match read_once(pid, &mut reader) {
            Ok(counters) => serde_json::json!({
                "unix_ms": crate::host::sys::unix_now_ms(),
                "read_us": started.elapsed().as_secs_f64() * 1e6,
                "counters": counters,
            }),
            Err(e) => serde_json::json!({
                "unix_ms": crate::host::sys::unix_now_ms(),
                "error": e.to_string(),
            }),
        };
        let _ = writeln!(out, "{line}");
        let deadline = started + interval;
        while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn read_once(
    pid: u32,
    reader: &mut Option<pauselab_hsperf::Reader>,
) -> pauselab_hsperf::Result<usize> {
    if reader.is_none() {
        *reader = Some(pauselab_hsperf::Reader::open(
            pid,
            pauselab_hsperf::Source::Auto,
        )?);
    }
    let snapshot = reader.as_mut().expect("opened above").snapshot()?;
    Ok(snapshot.len())
}
