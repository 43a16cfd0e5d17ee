//! GC pauses as an HdrHistogram interval log, in two modes:
//!
//! - `pauses`: each interval's histogram holds the pauses that started in it (ns values);
//! - `hiccup`: what jHiccup's file mode (`-f FILE -fz`) makes of the same pauses: a 1 ms
//!   tick clock where every tick without a pause counts 0 and each pause of p ms is recorded
//!   with coordinated-omission correction (p, p - 1 ms, p - 2 ms, ... down to 1 ms), the
//!   ticks the pause covered being those corrected values. Unlike jHiccup, the first pause
//!   is kept and a StartTime header is written.
//!
//! Pauses must arrive in log order; one that starts before the current interval (a JVM
//! restart in the log) is counted in the current interval. A jump forward of more than
//! [`MAX_GAP_NS`] (or [`MAX_GAP_INTERVALS`] intervals, whichever is shorter) starts a new
//! segment: the log continues with the next interval instead of writing empty intervals
//! across the gap. Such jumps are clock changes, not quiet JVMs: decorations switching from
//! uptime to wall clock in a rotated set, a host clock set forward, logs of different runs
//! concatenated.

use std::io::Write;

use hdrhistogram::Histogram;
use pauselab_pause::interval_log::{IntervalLogError, IntervalLogWriter};
use pauselab_pause::PauseEvent;

use crate::analyzer::PauseSink;

/// What an interval's histogram holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HlogMode {
    /// The pauses that started in the interval (ns).
    Pauses,
    /// What jHiccup's file mode makes of the same pauses (1 ms ticks, corrected).
    Hiccup,
}

const MS: u64 = 1_000_000;
/// A day: a longer jump between two pauses starts a new segment.
pub const MAX_GAP_NS: u64 = 24 * 3_600 * 1_000 * MS;
/// At most this many empty intervals are written for a gap (100 s at 1 ms intervals).
pub const MAX_GAP_INTERVALS: u64 = 100_000;
/// Values up to an hour, 3 significant digits.
const HIGHEST_NS: u64 = 3_600 * 1_000 * MS;

/// A [`PauseSink`] writing the pauses as an HdrHistogram interval log.
pub struct HlogSink<W: Write> {
    mode: HlogMode,
    interval_ns: u64,
    tag: String,
    out: Option<W>,
    writer: Option<IntervalLogWriter<W>>,
    /// Time of the log's first pause, ns on the log's time axis; intervals start from it.
    origin_ns: u64,
    interval_index: u64,
    histogram: Histogram<u64>,
    /// Hiccup mode: the next 1 ms tick not yet accounted for, ns on the time axis.
    next_tick_ns: u64,
    error: Option<IntervalLogError>,
    intervals_written: u64,
}

impl<W: Write> HlogSink<W> {
    /// Writes to `out`, intervals of `interval_s` seconds, each histogram tagged `tag`.
    pub fn new(out: W, mode: HlogMode, interval_s: f64, tag: &str) -> Self {
        HlogSink {
            mode,
            interval_ns: ((interval_s * 1e9) as u64).max(MS),
            tag: tag.to_string(),
            out: Some(out),
            writer: None,
            origin_ns: 0,
            interval_index: 0,
            histogram: Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("valid bounds"),
            next_tick_ns: 0,
            error: None,
            intervals_written: 0,
        }
    }

    /// The pause's start on one time axis: uptime when the log has it, else the wall clock.
    fn time_ns(e: &PauseEvent) -> u64 {
        match (e.start_ms, e.wall_start_ms) {
            (Some(uptime), _) => (uptime * 1e6) as u64,
            (None, Some(wall)) => (wall * 1e6) as u64,
            (None, None) => 0,
        }
    }

    fn start(&mut self, e: &PauseEvent, t: u64) {
        // StartTime: the wall clock of the first pause when the log has one.
        let start_epoch_s = match e.wall_start_ms {
            Some(w) => w / 1000.0,
            None => t as f64 / 1e9,
        };
        let out = self.out.take().expect("started once");
        match IntervalLogWriter::with_options(
            out,
            start_epoch_s,
            Some(&self.tag),
            1e6,
            &[&format!(
                "Logged with pauselab {} analyze --hlog-mode {}",
                env!("CARGO_PKG_VERSION"),
                match self.mode {
                    HlogMode::Pauses => "pauses",
                    HlogMode::Hiccup => "hiccup",
                }
            )],
        ) {
            Ok(w) => self.writer = Some(w),
            Err(err) => self.error = Some(err),
        }
        self.origin_ns = t;
        self.next_tick_ns = t;
    }

    fn flush_interval(&mut self) {
        if let Some(w) = self.writer.as_mut() {
            let start_s = (self.interval_index * self.interval_ns) as f64 / 1e9;
            if let Err(err) =
                w.write_interval(start_s, self.interval_ns as f64 / 1e9, &self.histogram)
            {
                self.error.get_or_insert(err);
            }
            self.intervals_written += 1;
        }
        self.histogram.reset();
        self.interval_index += 1;
    }

    /// Moves to the interval holding time `t`, writing the ones before (also empty ones: the
    /// timeline has no holes). In hiccup mode the ticks up to `t` count as zeros.
    fn advance_to(&mut self, t: u64) {
        loop {
            let interval_end = self.origin_ns + (self.interval_index + 1) * self.interval_ns;
            if self.mode == HlogMode::Hiccup && self.next_tick_ns < t.min(interval_end) {
                let ticks = (t.min(interval_end) - self.next_tick_ns).div_ceil(MS);
                let _ = self.histogram.record_n(0, ticks);
                self.next_tick_ns += ticks * MS;
            }
            if t < interval_end {
                return;
            }
            self.flush_interval();
        }
    }

    /// Writes the last interval and returns the output, or the first error.
    pub fn finish(mut self) -> Result<Option<W>, IntervalLogError> {
        if self.writer.is_some() {
            self.flush_interval();
        }
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        match self.writer.take() {
            Some(w) => w.finish().map(Some),
            None => Ok(None),
        }
    }
}

impl<W: Write> PauseSink for HlogSink<W> {
    fn pause(&mut self, e: &PauseEvent) {
        let t = Self::time_ns(e);
        if self.writer.is_none() && self.out.is_some() {
            self.start(e, t);
        }
        let interval_start = self.origin_ns + self.interval_index * self.interval_ns;
        let max_gap = MAX_GAP_NS.min(MAX_GAP_INTERVALS * self.interval_ns);
        if t > interval_start + max_gap {
            // A new segment: close the current interval and carry on from the next one.
            self.advance_to(interval_start + self.interval_ns);
            self.origin_ns = t - self.interval_index * self.interval_ns;
            self.next_tick_ns = t;
        }
        let t = t.max(self.origin_ns + self.interval_index * self.interval_ns);
        self.advance_to(t);
        let duration_ns = ((e.duration_ms * 1e6) as u64).clamp(1, HIGHEST_NS);
        match self.mode {
            HlogMode::Pauses => {
                let _ = self.histogram.record(duration_ns);
            }
            HlogMode::Hiccup => {
                let _ = self.histogram.record_correct(duration_ns, MS);
                self.next_tick_ns = self.next_tick_ns.max(t + duration_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pauselab_pause::PauseKind;

    fn pause(start_ms: f64, duration_ms: f64) -> PauseEvent {
        PauseEvent {
            start_ms: Some(start_ms),
            wall_start_ms: None,
            duration_ms,
            kind: PauseKind::Gc,
            name: "Pause Young".into(),
            cause: None,
            cpu: None,
            ttsp_ms: None,
            source: None,
        }
    }

    fn intervals(
        mode: HlogMode,
        pauses: &[PauseEvent],
    ) -> Vec<pauselab_pause::interval_log::Interval> {
        let mut sink = HlogSink::new(Vec::new(), mode, 1.0, "gc");
        for p in pauses {
            sink.pause(p);
        }
        let out = sink.finish().unwrap().unwrap();
        pauselab_pause::interval_log::IntervalLogReader::new(&out[..], "mem")
            .with_tag(pauselab_pause::interval_log::TagFilter::Any)
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn pauses_mode_puts_each_pause_in_its_interval_without_holes() {
        let iv = intervals(
            HlogMode::Pauses,
            &[pause(1000.0, 5.0), pause(1500.0, 7.0), pause(3200.0, 2.0)],
        );
        assert_eq!(iv.len(), 3);
        assert_eq!(
            iv.iter().map(|i| i.histogram.len()).collect::<Vec<_>>(),
            [2, 0, 1]
        );
        assert!((iv[0].histogram.max() as f64 - 7e6).abs() < 7e3);
    }

    #[test]
    fn a_clock_jump_starts_a_new_segment_instead_of_empty_intervals() {
        // Uptime stamps, then wall-clock ones (decorations changed in a rotated set).
        let mut wall = pause(0.0, 4.0);
        wall.start_ms = None;
        wall.wall_start_ms = Some(1_700_000_000_000.0);
        for mode in [HlogMode::Pauses, HlogMode::Hiccup] {
            let iv = intervals(
                mode,
                &[pause(1000.0, 5.0), wall.clone(), pause(2500.0, 3.0)],
            );
            assert_eq!(iv.len(), 2, "{mode:?}");
            assert!((iv[1].offset_s - 1.0).abs() < 1e-9, "{mode:?}");
            assert!(iv[1].histogram.equivalent(iv[1].histogram.max(), 4 * MS));
        }
        // A gap under the limit is a quiet JVM: empty intervals, as before.
        let iv = intervals(
            HlogMode::Pauses,
            &[pause(0.0, 1.0), pause(3_600_000.0, 1.0)],
        );
        assert_eq!(iv.len(), 3601);
    }

    #[test]
    fn hiccup_mode_fills_zeros_and_corrects_coordinated_omission() {
        // 10 ms pause at 0, then 90 ms quiet, then a 3 ms pause at 100 ms; 1 s intervals.
        let iv = intervals(HlogMode::Hiccup, &[pause(0.0, 10.0), pause(100.0, 3.0)]);
        assert_eq!(iv.len(), 1);
        let h = &iv[0].histogram;
        // 10 corrected values for the first pause, zeros for ticks 10..100 ms, 3 for the second.
        assert_eq!(h.len(), 10 + 90 + 3);
        assert_eq!(h.count_at(0), 90);
        assert!(h.equivalent(h.max(), 10 * MS));
    }
}
