//! GC pauses for reports: the timeline's pause markers and GC logs given as report input.
//!
//! This is the report's only contact with GC logs and JFR recordings: the parsing is
//! pauselab-gclog's and pauselab-jfr's, and both feed pauselab-gclog's analysis.

use std::path::Path;

use hdrhistogram::Histogram;
use pauselab_analysis::{Analyzer, HeapSample, Options, PauseSink};
use pauselab_pause::PauseEvent;

use crate::diagnosis::Diagnosis;
use crate::summary::{IntervalPoint, LogSummary};
use crate::ReportError;

/// Interval length used to turn a pause list into a timeline, seconds.
pub const TIMELINE_INTERVAL_S: f64 = 5.0;

/// A bundle variant's GC pauses and their diagnosis.
#[derive(Debug, Clone, Default)]
pub struct VariantGc {
    /// Pauses with their offsets (s) from the run's start.
    pub pauses: Vec<(f64, PauseEvent)>,
    pub diagnosis: Option<Diagnosis>,
}

impl VariantGc {
    fn of(read: Result<GcRead, ReportError>, start_time_s: Option<f64>) -> VariantGc {
        read.map(|r| VariantGc {
            pauses: with_offsets(r.pauses, start_time_s),
            diagnosis: Some(r.diagnosis),
        })
        .unwrap_or_default()
    }
}

/// Pauses of a GC log with their offsets (s) from `start_time_s` (seconds since epoch) when
/// the log has wall-clock decorations, else from JVM start, and the log's diagnosis.
/// Unreadable logs give no markers.
pub fn variant_gc(path: &Path, start_time_s: Option<f64>) -> VariantGc {
    VariantGc::of(read_gc(path), start_time_s)
}

/// [`variant_gc`] of a JFR recording. An unreadable recording gives no markers, as an
/// unreadable log does.
pub fn variant_recording(path: &Path, start_time_s: Option<f64>) -> VariantGc {
    VariantGc::of(read_recording(path), start_time_s)
}

fn with_offsets(events: Vec<PauseEvent>, start_time_s: Option<f64>) -> Vec<(f64, PauseEvent)> {
    events
        .into_iter()
        .filter_map(|e| {
            let offset = match (e.wall_start_ms, start_time_s, e.start_ms) {
                (Some(wall), Some(start), _) => wall / 1000.0 - start,
                (_, _, Some(uptime)) => uptime / 1000.0,
                // Neither clock places it on the variant's axis.
                _ => return None,
            };
            Some((offset, e))
        })
        .collect()
}

/// At most this many buckets per chart series: a chart shows no more points than it has
/// pixels, whatever the length of the log.
pub const MAX_BUCKETS: usize = 400;

/// A series over time kept as at most [`MAX_BUCKETS`] buckets of (start s, min, max): when
/// full, neighbouring buckets merge, so memory is fixed and peaks survive.
#[derive(Debug, Clone, Default)]
pub struct MinMaxSeries {
    buckets: Vec<(f64, f64, f64)>,
    /// Width of a bucket, seconds (doubles when buckets merge).
    width_s: f64,
}

impl MinMaxSeries {
    pub fn push(&mut self, t_s: f64, value: f64) {
        if self.width_s == 0.0 {
            self.width_s = 1e-3;
        }
        match self.buckets.last_mut() {
            Some(last) if t_s < last.0 + self.width_s && t_s >= last.0 => {
                last.1 = last.1.min(value);
                last.2 = last.2.max(value);
            }
            _ => self.buckets.push((t_s, value, value)),
        }
        while self.buckets.len() > MAX_BUCKETS {
            self.width_s *= 2.0;
            let width = self.width_s;
            let mut merged: Vec<(f64, f64, f64)> = Vec::with_capacity(self.buckets.len());
            for b in self.buckets.drain(..) {
                match merged.last_mut() {
                    Some(m) if b.0 >= m.0 && b.0 < m.0 + width => {
                        m.1 = m.1.min(b.1);
                        m.2 = m.2.max(b.2);
                    }
                    _ => merged.push(b),
                }
            }
            self.buckets = merged;
        }
    }

    /// Points for a line: each bucket's min then max, so the line spans the range.
    pub fn points(&self) -> Vec<(f64, f64)> {
        self.buckets
            .iter()
            .flat_map(|&(t, lo, hi)| {
                if lo == hi {
                    vec![(t, lo)]
                } else {
                    vec![(t, lo), (t, hi)]
                }
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
}

/// Pause types charted on their own; the rest share "other".
const MAX_PAUSE_TYPES: usize = 8;

/// What the GC charts of a log show: the heap before and after each collection with its
/// capacity, and pause durations by type, seconds since JVM start on the x axis.
#[derive(Debug, Clone, Default)]
pub struct GcSeries {
    /// MiB.
    pub heap_before: MinMaxSeries,
    /// MiB.
    pub heap_after: MinMaxSeries,
    /// MiB, when the log gives it.
    pub heap_capacity: MinMaxSeries,
    /// ms, by pause name.
    pub pauses: Vec<(String, MinMaxSeries)>,
    /// Logs without uptime decorations are charted from their first wall-clock stamp.
    first_wall_ms: Option<f64>,
}

impl GcSeries {
    /// Seconds since JVM start, else since the first wall-clock stamp.
    fn time_s(&mut self, uptime_ms: Option<f64>, wall_ms: Option<f64>) -> Option<f64> {
        match (uptime_ms, wall_ms) {
            (Some(u), _) => Some(u / 1000.0),
            (None, Some(w)) => Some((w - *self.first_wall_ms.get_or_insert(w)) / 1000.0),
            (None, None) => None,
        }
    }

    fn heap(&mut self, sample: &HeapSample) {
        if let Some(t) = self.time_s(sample.uptime_ms, sample.wall_ms) {
            let mib = |bytes: u64| bytes as f64 / (1u64 << 20) as f64;
            self.heap_before.push(t, mib(sample.before_bytes));
            self.heap_after.push(t, mib(sample.after_bytes));
            if let Some(capacity) = sample.capacity_bytes {
                self.heap_capacity.push(t, mib(capacity));
            }
        }
    }

    fn pause(&mut self, e: &PauseEvent) {
        let Some(t) = self.time_s(e.start_ms, e.wall_start_ms) else {
            return;
        };
        let name = if self.pauses.iter().any(|(n, _)| *n == e.name)
            || self.pauses.len() < MAX_PAUSE_TYPES - 1
        {
            e.name.as_str()
        } else {
            "other"
        };
        match self.pauses.iter_mut().find(|(n, _)| n == name) {
            Some((_, s)) => s.push(t, e.duration_ms),
            None => {
                let mut s = MinMaxSeries::default();
                s.push(t, e.duration_ms);
                self.pauses.push((name.to_string(), s));
            }
        }
    }
}

/// Pauses a report keeps of one GC log (each is drawn; about 300 bytes each): beyond this a
/// chart shows nothing more, and memory must stay bounded on any log.
const MAX_CHARTED_PAUSES: usize = 500_000;

/// What one GC log or recording gave the report: its pauses in log order, its chart series
/// and its diagnosis.
pub struct GcRead {
    pub pauses: Vec<PauseEvent>,
    pub series: GcSeries,
    pub diagnosis: Diagnosis,
}

/// A GC log (any format pauselab-gclog reads: JDK 8 to 25, rotated, gzip, zip) read.
pub fn read_gc(path: &Path) -> Result<GcRead, ReportError> {
    analysed(&path.display().to_string(), false, |analyzer| {
        let inputs = pauselab_gclog::input::expand(&[path.display().to_string()])?;
        pauselab_gclog::ensure_one_jvm(&inputs)?;
        pauselab_gclog::analyze_inputs(&inputs, analyzer)?;
        Ok(())
    })
}

/// A JFR recording (a file, gzip or zip, a repository directory) read by pauselab-jfr.
pub fn read_recording(path: &Path) -> Result<GcRead, ReportError> {
    let name = path.display().to_string();
    analysed(&name, true, |analyzer| {
        pauselab_jfr::read_recordings(std::slice::from_ref(&name), analyzer)
            .map(drop)
            .map_err(|e| ReportError::Recording(e.to_string()))
    })
}

/// The pauses, chart series and diagnosis of what `read` feeds to the analysis (a GC log's
/// lines, a recording's records). `source` names it in errors. A recording's inputs have
/// no log format, so the analysis's words name its events by number (`rec.jfr event 202`),
/// as `pauselab analyze` does.
fn analysed(
    source: &str,
    recording: bool,
    read: impl FnOnce(&mut Analyzer<'_>) -> Result<(), ReportError>,
) -> Result<GcRead, ReportError> {
    struct Collect(Vec<PauseEvent>, GcSeries, bool);
    impl PauseSink for Collect {
        fn pause(&mut self, event: &PauseEvent) {
            if self.0.len() >= MAX_CHARTED_PAUSES {
                self.2 = true;
                return;
            }
            self.0.push(event.clone());
            self.1.pause(event);
        }
        fn heap(&mut self, sample: &HeapSample) {
            self.1.heap(sample);
        }
    }
    let mut sink = Collect(Vec::new(), GcSeries::default(), false);
    let mut analyzer = Analyzer::new(Options::default()).with_sink(&mut sink);
    read(&mut analyzer)?;
    let mut report = analyzer.finish();
    if recording {
        report.inputs.iter_mut().for_each(|f| f.format = None);
    }
    if sink.2 {
        return Err(ReportError::Input {
            source_name: source.to_string(),
            message: format!(
                "more than {MAX_CHARTED_PAUSES} pauses, too many to chart; report a part of the log (a rotated file), or use `pauselab analyze`, which reads logs of any size"
            ),
        });
    }
    Ok(GcRead {
        pauses: sink.0,
        series: sink.1,
        diagnosis: Diagnosis::of(report),
    })
}

/// A GC log's or recording's pause histogram and timeline, its pauses with their offsets
/// (s), its chart series and its diagnosis.
pub struct GcLogSummary {
    pub summary: LogSummary,
    pub pauses: Vec<(f64, PauseEvent)>,
    pub series: GcSeries,
    pub diagnosis: Diagnosis,
}

/// A GC log as a pause histogram (ns) with a 5-second timeline of the longest pause.
pub fn pause_summary(path: &Path) -> Result<GcLogSummary, ReportError> {
    summarize(
        &path.display().to_string(),
        read_gc(path)?,
        "no GC pause lines found (expected a JDK 9+ log written with -Xlog:gc or -Xlog:gc*)",
    )
}

/// What [`read_gc`] or [`read_recording`] read as a pause histogram and timeline; `none` says why a source
/// without pauses cannot be charted.
pub fn summarize(source: &str, read: GcRead, none: &str) -> Result<GcLogSummary, ReportError> {
    if read.pauses.is_empty() {
        return Err(ReportError::Input {
            source_name: source.to_string(),
            message: none.to_string(),
        });
    }
    let pauses = with_offsets(read.pauses, None);
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
        source: source.to_string(),
        tag: pauselab_pause::interval_log::TagFilter::Any,
        start_s: None,
        java_start_time_s: 0.0,
        intervals,
        histogram,
        tags_seen: Vec::new(),
        worst: Vec::new(),
    };
    Ok(GcLogSummary {
        summary,
        pauses,
        series: read.series,
        diagnosis: read.diagnosis,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_series_stays_bounded_and_keeps_the_peak() {
        let mut s = MinMaxSeries::default();
        for i in 0..100_000 {
            let v = if i == 77_777 { 5000.0 } else { (i % 10) as f64 };
            s.push(i as f64 * 0.01, v);
        }
        assert!(s.len() <= MAX_BUCKETS, "{}", s.len());
        let points = s.points();
        assert_eq!(points.iter().map(|p| p.1).fold(0.0, f64::max), 5000.0);
        assert_eq!(points.iter().map(|p| p.1).fold(f64::MAX, f64::min), 0.0);
        assert!(points.windows(2).all(|w| w[0].0 <= w[1].0));
    }
}
