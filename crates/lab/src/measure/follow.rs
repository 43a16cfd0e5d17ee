//! Following the logs a variant's JVM is still writing (its GC log, the hiccup agent's
//! interval log and the workload's request latency log). Each poll reads only what was
//! appended since the last one, so the live progress costs the same every second however
//! long the run has been going, and what was read during the run is what the bundle is
//! made from: no log is read again at the end.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use pauselab_pause::interval_log::{IntervalLogReader, TagFilter};

use crate::measure::safepoints::{self, Safepoint};

/// A line longer than this is not a line of these logs (a GC log line is at most a few KiB,
/// an interval log line a few tens of KiB): it is dropped rather than buffered.
const MAX_LINE: usize = 1 << 20;

/// The unread end of a file that grows by whole lines.
#[derive(Debug, Clone)]
struct LogTail {
    path: PathBuf,
    offset: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
    /// Dropping bytes up to the next newline (a line longer than `MAX_LINE`).
    skipping: bool,
}

impl LogTail {
    fn new(path: &Path) -> LogTail {
        LogTail {
            path: path.to_path_buf(),
            offset: 0,
            partial: Vec::new(),
            skipping: false,
        }
    }

    /// Hands every line completed since the last call to `each` (without its newline). A
    /// file that does not exist yet has no lines. With `at_end` (the writer has exited), a
    /// last line without a newline counts as complete.
    fn read_new_lines(&mut self, at_end: bool, mut each: impl FnMut(&[u8])) -> Result<(), String> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("{}: {e}", self.path.display())),
        };
        let error = |e: std::io::Error| format!("{}: {e}", self.path.display());
        file.seek(SeekFrom::Start(self.offset)).map_err(error)?;
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            let n = file.read(&mut chunk).map_err(error)?;
            if n == 0 {
                break;
            }
            self.offset += n as u64;
            let mut rest = &chunk[..n];
            while let Some(end) = newline_at(rest) {
                if !self.skipping {
                    if self.partial.is_empty() {
                        each(&rest[..end]);
                    } else {
                        self.partial.extend_from_slice(&rest[..end]);
                        each(&self.partial);
                        self.partial.clear();
                    }
                }
                self.skipping = false;
                rest = &rest[end + 1..];
            }
            if !self.skipping {
                self.partial.extend_from_slice(rest);
                if self.partial.len() > MAX_LINE {
                    self.partial.clear();
                    self.skipping = true;
                }
            }
        }
        if at_end && !self.partial.is_empty() {
            each(&self.partial);
            self.partial.clear();
        }
        Ok(())
    }
}

fn newline_at(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
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
        let name = self.tail.path.display().to_string();
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
    use std::io::Write;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pauselab-follow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn lines_are_handed_out_once_and_only_when_complete() {
        let path = scratch("tail.log");
        let mut file = File::create(&path).unwrap();
        let mut tail = LogTail::new(&path);
        let mut seen: Vec<String> = Vec::new();
        let read = |tail: &mut LogTail, at_end| {
            let mut lines = Vec::new();
            tail.read_new_lines(at_end, |l| {
                lines.push(String::from_utf8_lossy(l).into_owned())
            })
            .unwrap();
            lines
        };
        file.write_all(b"one\ntw").unwrap();
        seen.extend(read(&mut tail, false));
        assert_eq!(seen, ["one"]);
        file.write_all(b"o\nthree").unwrap();
        seen.extend(read(&mut tail, false));
        assert_eq!(seen, ["one", "two"]);
        assert!(read(&mut tail, false).is_empty());
        seen.extend(read(&mut tail, true));
        assert_eq!(seen, ["one", "two", "three"]);
        // A line longer than the limit is dropped whole; the next one is read.
        file.write_all(&vec![b'x'; MAX_LINE + 10]).unwrap();
        assert!(read(&mut tail, false).is_empty());
        file.write_all(b"xx\nfour\n").unwrap();
        assert_eq!(read(&mut tail, false), ["four"]);
        std::fs::remove_file(&path).unwrap();
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
