//! `pauselab perf PID --pages`: which pages of the perf-data region a JVM writes, how often
//! and whether in intervals holding a safepoint, with the pages a packed layout would write
//! (docs/hsperf.md, "Which pages a JVM writes").

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pauselab_hsperf::{PageMapper, Reader};
use pauselab_render::{write_pages_json, write_pages_text};

pub fn run(
    reader: &mut Reader,
    interval: Duration,
    duration: Duration,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let stop = super::probe::stop_on_signals();
    let mut snapshot = reader.snapshot()?;
    let mut mapper = PageMapper::new(&snapshot);
    let started = Instant::now();
    let mut next = started;
    while started.elapsed() < duration && !stop.load(Ordering::Relaxed) {
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            // Behind (a slow read, a descheduled sampler): the next interval starts now
            // rather than a burst of back-to-back reads.
            next = now;
        }
        reader.snapshot_into(&mut snapshot)?;
        mapper.observe(&snapshot);
    }
    let map = mapper.finish(started.elapsed());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if json {
        let interrupted = stop.load(Ordering::Relaxed);
        write_pages_json(&mut out, reader, interval, interrupted, &map)?;
    } else {
        write_pages_text(&mut out, reader, interval, &map)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
