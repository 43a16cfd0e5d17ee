//! GC pauses for reports: the timeline's pause markers and GC logs given as report input.
//!
//! This is the report's only contact with GC logs; the parsing is pauselab-gclog's.

use std::path::Path;

use hdrhistogram::Histogram;
use pauselab_gclog::{Analyzer, Options, PauseSink};
use pauselab_pause::PauseEvent;

use crate::summary::{IntervalPoint, LogSummary};
use crate::ReportError;

/// Interval length used to turn a pause list into a timeline, seconds.
pub const TIMELINE_INTERVAL_S: f64 = 5.0;

/// Pauses of a GC log with their offsets (s) from `start_time_s` (seconds since epoch) when
/// the log has wall-clock decorations, else from JVM start. Unreadable logs give no markers.
pub fn pauses(path: &Path, start_time_s: Option<f64>) -> Vec<(f64, PauseEvent)> {
    read_pauses(path)
        .map(|events| with_offsets(events, start_time_s))
        .unwrap_or_default()
}

fn with_offsets(events: Vec<PauseEvent>, start_time_s: Option<f64>) -> Vec<(f64, PauseEvent)> {
    events
        .into_iter()
        .map(|e| {
            let offset = match (e.wall_start_ms, start_time_s) {
                (Some(wall), Some(start)) => wall / 1000.0 - start,
                _ => e.start_ms / 1000.0,
            };
            (offset, e)
        })
        .collect()
}

/// The GC pauses of a log (any format pauselab-gclog reads: JDK 8 to 25, rotated, gzip, zip),
/// in log order.
pub fn read_pauses(path: &Path) -> Result<Vec<PauseEvent>, ReportError> {
    struct Collect(Vec<PauseEvent>);
    impl PauseSink for Collect {
        fn pause(&mut self, event: &PauseEvent) {
            self.0.push(event.clone());
        }
    }
    let inputs = pauselab_gclog::input::expand(&[path.display().to_string()])?;
    let mut sink = Collect(Vec::new());
    let mut analyzer = Analyzer::new(Options::default()).with_sink(&mut sink);
    pauselab_gclog::ensure_one_jvm(&inputs)?;
    pauselab_gclog::analyze_inputs(&inputs, &mut analyzer)?;
    analyzer.finish();
    Ok(sink.0)
}

/// A GC log as a pause histogram (ns) with a 5-second timeline of the longest pause.
pub fn pause_summary(path: &Path) -> Result<(LogSummary, Vec<(f64, PauseEvent)>), ReportError> {
    let events = read_pauses(path)?;
    if events.is_empty() {
        return Err(ReportError::Input {
            source_name: path.display().to_string(),
            message:
                "no GC pause lines found (expected a JDK 9+ log written with -Xlog:gc or -Xlog:gc*)"
                    .to_string(),
        });
    }
    let pauses = with_offsets(events, None);
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    let mut intervals: Vec<IntervalPoint> = Vec::new();
    for (offset, e) in &pauses {
        let ns = (e.duration_ms * 1e6).round().max(1.0) as u64;
        histogram.saturating_record(ns);
        let slot = (offset.max(0.0) / TIMELINE_INTERVAL_S).floor();
        let start = slot * TIMELINE_INTERVAL_S;
        match intervals.last_mut() {
            Some(last) if last.offset_s == start => {
                last.count += 1;
                last.max = last.max.max(ns);
            }
            _ => intervals.push(IntervalPoint {
                offset_s: start,
                length_s: TIMELINE_INTERVAL_S,
                count: 1,
                max: ns,
            }),
        }
    }
    let summary = LogSummary {
        source: path.display().to_string(),
        tag: pauselab_pause::interval_log::TagFilter::Any,
        start_s: None,
        java_start_time_s: 0.0,
        intervals,
        histogram,
        tags_seen: Vec::new(),
    };
    Ok((summary, pauses))
}
