//! Reading the hiccup agent's interval logs and writing the safepoint interval log.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;

/// Latency statistics in milliseconds.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Stats {
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub p9999_ms: f64,
    pub max_ms: f64,
    /// Values at or above 100 ms and 1 s (hiccups: samples, safepoints: pauses).
    pub at_least_100ms: u64,
    pub at_least_1s: u64,
}

/// A histogram of nanoseconds (20 us .. 1 hour, 2 significant digits, like the agent's).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 3_600_000_000_000, 2).expect("valid histogram bounds")
}

pub fn stats(h: &Histogram<u64>) -> Stats {
    if h.is_empty() {
        return Stats::default();
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    Stats {
        count: h.len(),
        p50_ms: ms(h.value_at_quantile(0.5)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p999_ms: ms(h.value_at_quantile(0.999)),
        p9999_ms: ms(h.value_at_quantile(0.9999)),
        max_ms: ms(h.max()),
        at_least_100ms: h.count_between(100_000_000, h.max().max(100_000_000)),
        at_least_1s: h.count_between(1_000_000_000, h.max().max(1_000_000_000)),
    }
}

/// A whole interval log: all intervals added up, and (seconds since the first interval,
/// max in ms) of each interval.
pub type IntervalLog = (Histogram<u64>, Vec<(f64, f64)>);

/// The whole interval log as one histogram plus the max of each interval
/// (seconds since the log's first interval, max in ms). A log still being written may end
/// in a partial line: it is ignored.
pub fn read_interval_log(path: &Path) -> Result<IntervalLog, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..=end],
        None => &bytes[..0],
    };
    let mut total = new_histogram();
    let mut maxima = Vec::new();
    let mut deserializer = Deserializer::new();
    let mut first: Option<f64> = None;
    for entry in IntervalLogIterator::new(complete) {
        let entry =
            entry.map_err(|e| format!("{}: not an interval log ({e:?})", path.display()))?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| format!("{}: bad histogram encoding: {e}", path.display()))?;
        let h: Histogram<u64> = deserializer
            .deserialize(&mut std::io::Cursor::new(raw))
            .map_err(|e| format!("{}: bad histogram: {e:?}", path.display()))?;
        let start = interval.start_timestamp().as_secs_f64();
        let base = *first.get_or_insert(start);
        maxima.push((start - base, h.max() as f64 / 1e6));
        total
            .add(&h)
            .map_err(|e| format!("{}: histogram out of range: {e:?}", path.display()))?;
    }
    Ok((total, maxima))
}

/// Writes pauses (start in seconds since JVM start, duration in ms) as an interval log with
/// one histogram per `interval`, tagged `safepoint`; intervals without pauses are empty.
pub fn write_pause_log(
    path: &Path,
    jvm_start: SystemTime,
    pauses: &[(f64, f64)],
    end_s: f64,
    interval: Duration,
) -> Result<(), String> {
    let mut out = Vec::new();
    {
        let mut serializer = V2DeflateSerializer::new();
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment("pauselab lab: safepoint pauses from the GC log, in ns")
            .with_start_time(jvm_start)
            .with_base_time(jvm_start)
            .with_max_value_divisor(1e6)
            .begin_log_with(&mut out, &mut serializer)
            .map_err(|e| e.to_string())?;
        let step = interval.as_secs_f64();
        let intervals = ((end_s / step).ceil() as usize).max(1);
        let tag = hdrhistogram::serialization::interval_log::Tag::new("safepoint");
        for i in 0..intervals {
            let (lo, hi) = (i as f64 * step, (i + 1) as f64 * step);
            let mut h = new_histogram();
            for &(start, ms) in pauses.iter().filter(|(s, _)| *s >= lo && *s < hi) {
                let _ = start;
                h.saturating_record((ms * 1e6) as u64);
            }
            writer
                .write_histogram(&h, Duration::from_secs_f64(lo), interval, tag)
                .map_err(|e| format!("{e:?}"))?;
        }
    }
    let mut file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(&out)
        .map_err(|e| format!("{}: {e}", path.display()))
}
