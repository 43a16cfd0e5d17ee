//! One interval log read into what reports need: the total histogram (accumulated as
//! `HistogramLogProcessor` accumulates it) and a light per-interval series for timelines.

use std::path::Path;

use hdrhistogram::Histogram;
use pauselab_pause::interval_log::{IntervalLogReader, TagFilter};
use serde::Serialize;

use crate::hgrm;
use crate::ReportError;

/// One interval of a log, without its histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalPoint {
    /// Seconds since the log's start.
    pub offset_s: f64,
    pub length_s: f64,
    pub count: u64,
    /// Interval max in recorded units (exact, from the histogram).
    pub max: u64,
}

/// One of the intervals with the highest max, with its own numbers: those of its histogram
/// as the log holds it, not of the whole log's merged histogram.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorstInterval {
    /// Seconds since the log's start.
    pub offset_s: f64,
    /// Seconds since the epoch when the log has absolute times.
    pub start_s: f64,
    pub length_s: f64,
    pub count: u64,
    /// In recorded units.
    pub max: u64,
    /// In recorded units.
    pub p99: u64,
    /// 1-based line of the interval in the log.
    pub line: usize,
}

/// How many worst intervals a summary keeps.
pub const WORST_INTERVALS: usize = 10;

/// Keeps `worst` the [`WORST_INTERVALS`] intervals with the highest max, highest first (the
/// earlier of two equal maxima first).
fn keep_worst(worst: &mut Vec<WorstInterval>, candidate: WorstInterval) {
    let at = worst.partition_point(|w| w.max >= candidate.max);
    if at < WORST_INTERVALS {
        worst.insert(at, candidate);
        worst.truncate(WORST_INTERVALS);
    }
}

/// Intervals a report keeps of one log (32 bytes each; 46 days of 1-second intervals):
/// memory stays bounded on any log.
const MAX_TIMELINE_INTERVALS: usize = 4_000_000;

/// A log read with a tag filter and time range.
#[derive(Debug, Clone)]
pub struct LogSummary {
    /// The file as given.
    pub source: String,
    pub tag: TagFilter,
    /// What offsets count from: StartTime, else the first interval (seconds since epoch when
    /// the log has absolute times).
    pub start_s: Option<f64>,
    /// The start Java's `HistogramLogReader.getStartTimeSec()` reports (for `.hgrm` headers).
    pub java_start_time_s: f64,
    pub intervals: Vec<IntervalPoint>,
    pub histogram: Histogram<u64>,
    /// Every tag present in the part of the log read (`None` = untagged).
    pub tags_seen: Vec<Option<String>>,
    /// The intervals with the highest max, highest first (none for a GC log's pauses).
    pub worst: Vec<WorstInterval>,
}

/// The fixed percentiles every summary shows, in percent.
pub const SUMMARY_PERCENTILES: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999];

/// Numbers of a histogram in recorded units (ns for hiccup and pause logs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub count: u64,
    pub mean: f64,
    pub stddev: f64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub p99_999: u64,
    pub max: u64,
}

impl Stats {
    pub fn of(h: &Histogram<u64>) -> Stats {
        let p = |pct: f64| h.value_at_quantile(pct / 100.0);
        Stats {
            count: h.len(),
            mean: hgrm::mean(h),
            stddev: hgrm::stddev(h),
            min: if h.is_empty() { 0 } else { h.min() },
            p50: p(50.0),
            p90: p(90.0),
            p99: p(99.0),
            p99_9: p(99.9),
            p99_99: p(99.99),
            p99_999: p(99.999),
            max: h.max(),
        }
    }

    /// (label, value) for the percentile columns and the max, in display order.
    pub fn columns(&self) -> [(&'static str, u64); 6] {
        [
            ("p50", self.p50),
            ("p99", self.p99),
            ("p99.9", self.p99_9),
            ("p99.99", self.p99_99),
            ("p99.999", self.p99_999),
            ("max", self.max),
        ]
    }
}

/// The columns of a worst-intervals table.
pub const WORST_INTERVAL_COLUMNS: [&str; 7] = [
    "start (s)",
    "start (UTC)",
    "length (s)",
    "count",
    "max (ms)",
    "p99 (ms)",
    "line",
];

impl LogSummary {
    /// The worst intervals as table rows under [`WORST_INTERVAL_COLUMNS`]: values in ms
    /// (`unit_ratio` recorded units per ms), the start as a UTC date when the log has
    /// absolute times, else `-`.
    pub fn worst_rows(&self, unit_ratio: f64) -> Vec<Vec<String>> {
        self.worst
            .iter()
            .map(|w| {
                vec![
                    format!("{:.3}", w.offset_s),
                    // Before 1973, the log's times are relative to its own start.
                    if w.start_s > 1e8 {
                        pauselab_pause::interval_log::java_date_utc(w.start_s)
                    } else {
                        "-".to_string()
                    },
                    format!("{:.3}", w.length_s),
                    w.count.to_string(),
                    crate::table::scaled(w.max as f64, unit_ratio),
                    crate::table::scaled(w.p99 as f64, unit_ratio),
                    w.line.to_string(),
                ]
            })
            .collect()
    }

    /// Reads `path` selecting `tag` and offsets in `[start_s, end_s]`. Fails when nothing is
    /// selected, saying which tags the log has.
    pub fn read(
        path: &Path,
        tag: TagFilter,
        start_s: Option<f64>,
        end_s: Option<f64>,
    ) -> Result<LogSummary, ReportError> {
        let mut reader = IntervalLogReader::open(path)?
            .with_tag(tag.clone())
            .with_range(start_s, end_s);
        let mut intervals = Vec::new();
        let mut worst = Vec::new();
        let mut total: Option<Histogram<u64>> = None;
        let mut java_start_time_s = 0.0;
        while let Some(interval) = reader.next_interval()? {
            if total.is_none() {
                java_start_time_s = reader.java_start_time_s();
            }
            let acc = total.get_or_insert_with(|| {
                // Shaped like the log's histograms, as HistogramLogProcessor does.
                let mut h = Histogram::new_from(&interval.histogram);
                h.auto(true);
                h
            });
            acc.add(&interval.histogram)
                .map_err(|e| ReportError::Input {
                    source_name: format!("{}:{}", path.display(), interval.line),
                    message: format!("cannot add the interval histogram: {e:?}"),
                })?;
            if intervals.len() >= MAX_TIMELINE_INTERVALS {
                return Err(ReportError::Input {
                    source_name: path.display().to_string(),
                    message: format!(
                        "more than {MAX_TIMELINE_INTERVALS} intervals, too many to chart; select a part with a time range"
                    ),
                });
            }
            intervals.push(IntervalPoint {
                offset_s: interval.offset_s,
                length_s: interval.length_s,
                count: interval.histogram.len(),
                max: interval.histogram.max(),
            });
            if !interval.histogram.is_empty() {
                keep_worst(
                    &mut worst,
                    WorstInterval {
                        offset_s: interval.offset_s,
                        start_s: interval.start_s,
                        length_s: interval.length_s,
                        count: interval.histogram.len(),
                        max: interval.histogram.max(),
                        p99: interval.histogram.value_at_quantile(0.99),
                        line: interval.line,
                    },
                );
            }
        }
        let Some(histogram) = total else {
            return Err(nothing_selected(path, &reader, &tag, start_s, end_s));
        };
        Ok(LogSummary {
            source: path.display().to_string(),
            tag,
            start_s: reader.start_s(),
            java_start_time_s,
            intervals,
            histogram,
            tags_seen: reader.tags_seen().to_vec(),
            worst,
        })
    }

    pub fn stats(&self) -> Stats {
        Stats::of(&self.histogram)
    }

    /// Seconds from the first interval's start to the last one's end.
    pub fn span_s(&self) -> f64 {
        match (self.intervals.first(), self.intervals.last()) {
            (Some(first), Some(last)) => last.offset_s + last.length_s - first.offset_s,
            _ => 0.0,
        }
    }

    /// The `.hgrm` text `HistogramLogProcessor -i FILE` prints for the same selection.
    pub fn write_hgrm(
        &self,
        out: &mut dyn std::io::Write,
        ticks: u32,
        unit_ratio: f64,
    ) -> std::io::Result<()> {
        if self.java_start_time_s != 0.0 {
            writeln!(
                out,
                "#[StartTime: {} (seconds since epoch), {}]",
                hgrm::java_fixed(self.java_start_time_s, 3),
                pauselab_pause::interval_log::java_date_utc(self.java_start_time_s)
            )?;
        }
        hgrm::write_distribution(out, &self.histogram, ticks, unit_ratio)
    }
}

fn nothing_selected<R: std::io::BufRead>(
    path: &Path,
    reader: &IntervalLogReader<R>,
    tag: &TagFilter,
    start_s: Option<f64>,
    end_s: Option<f64>,
) -> ReportError {
    let names = |tags: &[Option<String>]| {
        tags.iter()
            .map(|t| t.clone().unwrap_or_else(|| "(untagged)".to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let message = if reader.intervals_seen() == 0 {
        "no interval histograms in this file (is it an HdrHistogram interval log?)".to_string()
    } else if !reader.tags_seen().iter().any(|t| tag.matches(t.as_deref())) {
        let hint = match tag {
            TagFilter::Untagged => "choose one with --tag",
            _ => "check --tag",
        };
        format!(
            "no {tag} intervals; the log has: {} ({hint})",
            names(reader.tags_seen())
        )
    } else {
        format!(
            "no {tag} interval starts between {} s and {} s after the log's start (check --start/--end)",
            start_s.unwrap_or(0.0),
            end_s.map_or("the end".to_string(), |e| e.to_string())
        )
    };
    ReportError::Input {
        source_name: path.display().to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_intervals_are_those_with_the_highest_logged_max_with_their_own_p99() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/reference/jhiccup/java8x4-async-off_c4_2.jHiccup");
        let log = LogSummary::read(&path, TagFilter::Untagged, None, None).unwrap();
        // The log's own Interval_Max column (ms, 3 decimals), highest first, with its line.
        let text = std::fs::read_to_string(&path).unwrap();
        let mut logged: Vec<(f64, &str, usize)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(",HISTFAAA"))
            .map(|(i, l)| {
                let max = l.split(',').nth(2).unwrap();
                (max.parse().unwrap(), max, i + 1)
            })
            .collect();
        logged.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        assert_eq!(log.worst.len(), WORST_INTERVALS);
        for (w, (_, max, line)) in log.worst.iter().zip(&logged) {
            assert_eq!(
                (crate::table::scaled(w.max as f64, 1e6), w.line),
                (max.to_string(), *line)
            );
            // The interval alone, read as its own selection: the same count and p99.
            let alone = LogSummary::read(
                &path,
                TagFilter::Untagged,
                Some(w.offset_s),
                Some(w.offset_s),
            )
            .unwrap();
            assert_eq!(alone.intervals.len(), 1);
            assert_eq!(w.count, alone.histogram.len());
            assert_eq!(w.p99, alone.histogram.value_at_quantile(0.99));
        }
        assert_eq!(log.worst[0].line, 2306);
        let rows = log.worst_rows(1e6);
        assert_eq!(
            rows[0],
            [
                "11506.627",
                "Wed Mar 08 18:21:50 UTC 2023",
                "5.000",
                "4913",
                "4177.527",
                "4127.195",
                "2306"
            ]
        );
    }
}
