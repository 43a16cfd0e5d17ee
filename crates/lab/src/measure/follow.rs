//! Following the logs a variant's JVM is still writing (its GC log, the hiccup agent's
//! interval log and the workload's request latency log). Each poll reads only what was
//! appended since the last one, so the live progress costs the same every second however
//! long the run has been going, and what was read during the run is what the bundle is
//! made from: no log is read again at the end. The reading itself (complete lines,
//! rotation) is pauselab-gclog's [`LogTail`].

use std::path::Path;

use hdrhistogram::Histogram;
use pauselab_gclog::follow::LogTail;
use pauselab_pause::interval_log::{IntervalLogReader, TagFilter};

use crate::measure::safepoints::{self, Safepoint};

/// The workload's longest gaps between two allocations, from the `"type":"interval"` lines
/// (`t_s`, `max_gap_ms`) it prints with `--print-intervals`, read as it writes them.
/// `t_s` counts from the workload's start, a fraction of a second after the JVM's, so an
/// interval counts after the warm-up when it ends after it.
#[derive(Debug, Clone)]
pub struct GapFollower {
    tail: LogTail,
    warmup_s: f64,
    max_ms: Option<f64>,
    after_warmup_ms: Option<f64>,
}

impl GapFollower {
    pub fn new(workload_out: &Path, warmup_s: f64) -> GapFollower {
        GapFollower {
            tail: LogTail::new(workload_out),
            warmup_s,
            max_ms: None,
            after_warmup_ms: None,
        }
    }

    /// Reads what was appended; `at_end` once the JVM has exited. The workload's output is
    /// its own: a line that is not an interval line is skipped, and a read error leaves
    /// the gaps unknown rather than failing the variant.
    pub fn poll(&mut self, at_end: bool) {
        let (warmup_s, max_ms, after) =
            (self.warmup_s, &mut self.max_ms, &mut self.after_warmup_ms);
        let _ = self.tail.read_new_lines(at_end, |line| {
            if let Some((t_s, gap_ms)) = interval_gap(line) {
                *max_ms = Some(max_ms.map_or(gap_ms, |m| m.max(gap_ms)));
                if t_s >= warmup_s {
                    *after = Some(after.map_or(gap_ms, |m| m.max(gap_ms)));
                }
            }
        });
    }

    /// The longest gap so far, ms; None before the first interval line.
    pub fn max_ms(&self) -> Option<f64> {
        self.max_ms
    }

    /// The longest gap after the warm-up, ms; None without interval lines after it.
    pub fn after_warmup_ms(&self) -> Option<f64> {
        self.after_warmup_ms
    }
}

/// `(t_s, max_gap_ms)` of a workload's interval line.
fn interval_gap(line: &[u8]) -> Option<(f64, f64)> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    if v["type"] != "interval" {
        return None;
    }
    let gap = v["max_gap_ms"].as_f64().filter(|g| g.is_finite())?;
    Some((v["t_s"].as_f64()?, gap))
}

/// The safepoints of a GC log, read as it grows.
#[derive(Debug, Clone)]
pub struct SafepointFollower {
    tail: LogTail,
    points: Vec<Safepoint>,
    max_ms: f64,
    error: Option<String>,
}

impl SafepointFollower {
    pub fn new(gc_log: &Path) -> SafepointFollower {
        SafepointFollower {
            tail: LogTail::new(gc_log),
            points: Vec::new(),
            max_ms: 0.0,
            error: None,
        }
    }

    /// Reads what was appended; `at_end` once the JVM has exited.
    pub fn poll(&mut self, at_end: bool) {
        let (points, max_ms) = (&mut self.points, &mut self.max_ms);
        let read = self.tail.read_new_lines(at_end, |line| {
            if let Some(point) = safepoints::parse(line) {
                *max_ms = max_ms.max(point.total_ms);
                points.push(point);
            }
        });
        if let Err(e) = read {
            self.error.get_or_insert(e);
        }
    }

    /// The longest safepoint so far, ms.
    pub fn max_ms(&self) -> f64 {
        self.max_ms
    }

    /// Every safepoint read, in order, or the error that stopped the reading.
    pub fn points(&self) -> Result<&[Safepoint], String> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(&self.points),
        }
    }
}

/// An interval log of nanoseconds (the hiccup agent's, a workload's request latencies),
/// read as it grows: the largest value of the whole run (progress) and the histogram of
/// the intervals after the warm-up (the verdict).
#[derive(Debug, Clone)]
pub struct IntervalLogFollower {
    tail: LogTail,
    /// The header lines (`#[StartTime: ...]`, `#[BaseTime: ...]`, the legend): each batch of
    /// new intervals is read after them, so its time stamps are absolute.
    header: Vec<u8>,
    seen_interval: bool,
    from_epoch_s: f64,
    max_ns: u64,
    after_warmup: Histogram<u64>,
    error: Option<String>,
}

impl IntervalLogFollower {
    /// Follows `log`; intervals starting before `from_epoch_s` count only for the progress.
    pub fn new(log: &Path, from_epoch_s: f64) -> IntervalLogFollower {
        IntervalLogFollower {
            tail: LogTail::new(log),
            header: Vec::new(),
            seen_interval: false,
            from_epoch_s,
            max_ns: 0,
            after_warmup: crate::measure::hlog::new_histogram(),
            error: None,
        }
    }

    /// Reads what was appended; `at_end` once the JVM has exited.
    pub fn poll(&mut self, at_end: bool) {
        if self.error.is_some() {
            return;
        }
        let mut batch = Vec::new();
        let (header, seen_interval) = (&mut self.header, &mut self.seen_interval);
        let read = self.tail.read_new_lines(at_end, |line| {
            let is_header = line.starts_with(b"#") || line.starts_with(b"\"StartTimestamp\"");
            if is_header && !*seen_interval {
                header.extend_from_slice(line);
                header.push(b'\n');
            } else if !is_header {
                *seen_interval = true;
                batch.extend_from_slice(line);
                batch.push(b'\n');
            }
        });
        if let Err(e) = read {
            self.error = Some(e);
            return;
        }
        if batch.is_empty() {
            return;
        }
        let mut text = self.header.clone();
        text.extend_from_slice(&batch);
        let name = self.tail.path().display().to_string();
        let mut reader = IntervalLogReader::new(&text[..], &name).with_tag(TagFilter::Any);
        loop {
            match reader.next_interval() {
                Ok(Some(interval)) => {
                    self.max_ns = self.max_ns.max(interval.histogram.max());
                    if interval.start_s >= self.from_epoch_s {
                        if let Err(e) = self.after_warmup.add(&interval.histogram) {
                            self.error = Some(format!("{name}: histogram out of range: {e:?}"));
                            return;
                        }
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    self.error = Some(e.to_string());
                    return;
                }
            }
        }
    }

    /// The largest value so far, ms.
    pub fn max_ms(&self) -> f64 {
        self.max_ns as f64 / 1e6
    }

    /// The intervals after the warm-up, added up, or the error that stopped the reading.
    pub fn after_warmup(&self) -> Result<&Histogram<u64>, String> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(&self.after_warmup),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Write;
    use std::path::PathBuf;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pauselab-follow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn gaps_read_in_pieces_leave_out_the_warm_up_and_other_lines() {
        let text = "{\"type\":\"start\",\"workload\":\"MakeGarbage\"}\n\
             {\"type\":\"interval\",\"t_s\":1.0,\"arrays\":50,\"max_gap_ms\":900.0}\n\
             not json\n\
             {\"type\":\"interval\",\"t_s\":21.0,\"arrays\":50,\"max_gap_ms\":40.5}\n\
             {\"type\":\"interval\",\"t_s\":22.0,\"arrays\":3,\"max_gap_ms\":3100.0}\n\
             {\"type\":\"summary\",\"max_gap_ms\":9999.0}\n";
        let path = scratch("workload.out");
        let mut file = File::create(&path).unwrap();
        let mut follower = GapFollower::new(&path, 20.0);
        for piece in text.as_bytes().chunks(13) {
            file.write_all(piece).unwrap();
            follower.poll(false);
        }
        follower.poll(true);
        assert_eq!(follower.max_ms(), Some(3100.0));
        assert_eq!(follower.after_warmup_ms(), Some(3100.0));
        let mut early = GapFollower::new(&path, 30.0);
        early.poll(true);
        assert_eq!(early.max_ms(), Some(3100.0));
        assert_eq!(early.after_warmup_ms(), None);
    }

    #[test]
    fn hiccups_read_in_pieces_equal_the_whole_log() {
        use pauselab_pause::interval_log::IntervalLogWriter;
        let start_s = 1_700_000_000.0;
        let mut bytes = Vec::new();
        let mut writer = IntervalLogWriter::new(&mut bytes, start_s, None).unwrap();
        let mut whole = crate::measure::hlog::new_histogram();
        for i in 0..20u64 {
            let mut h = crate::measure::hlog::new_histogram();
            h.record(1_000_000 * (i + 1)).unwrap();
            h.record(50_000).unwrap();
            if i >= 5 {
                whole.add(&h).unwrap();
            }
            writer.write_interval(i as f64, 1.0, &h).unwrap();
        }
        writer.finish().unwrap();
        let path = scratch("hiccups.hlog");
        let mut file = File::create(&path).unwrap();
        // Intervals from the sixth on count for the verdict.
        let mut follower = IntervalLogFollower::new(&path, start_s + 5.0);
        for piece in bytes.chunks(97) {
            file.write_all(piece).unwrap();
            follower.poll(false);
        }
        follower.poll(true);
        assert_eq!(follower.max_ms(), whole.max() as f64 / 1e6);
        assert_eq!(follower.after_warmup().unwrap(), &whole);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn safepoints_grow_with_the_log() {
        let path = scratch("gc.log");
        let mut file = File::create(&path).unwrap();
        let mut follower = SafepointFollower::new(&path);
        follower.poll(false);
        assert_eq!(follower.points().unwrap().len(), 0);
        let line = |total_ns: u64| {
            format!("[2.000s][info][safepoint] Safepoint \"G1CollectForAllocation\", Time since last: 1000 ns, Reaching safepoint: 2000 ns, At safepoint: {total_ns} ns, Total: {total_ns} ns\n")
        };
        file.write_all(line(5_000_000).as_bytes()).unwrap();
        let half = line(700_000_000);
        file.write_all(&half.as_bytes()[..40]).unwrap();
        follower.poll(false);
        assert_eq!(follower.points().unwrap().len(), 1);
        assert_eq!(follower.max_ms(), 5.0);
        file.write_all(&half.as_bytes()[40..]).unwrap();
        follower.poll(false);
        assert_eq!(follower.points().unwrap().len(), 2);
        assert_eq!(follower.max_ms(), 700.0);
        std::fs::remove_file(&path).unwrap();
    }
}
