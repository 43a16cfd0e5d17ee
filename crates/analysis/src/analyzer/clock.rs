//! Per-file time tracking: the time a log covers, JVM restarts and interleaved JVMs.

use pauselab_pause::record::Stamp;

/// Per-file time tracking: covered span and JVM restarts or interleaving.
#[derive(Default)]
pub(super) struct Clock {
    first_uptime: Option<u64>,
    segment_start: Option<u64>,
    last_uptime: Option<u64>,
    /// The latest pause end of the current run: a JDK 8 event is stamped at its start, so
    /// it can end after the last stamp.
    segment_end: Option<u64>,
    covered_uptime_ns: u64,
    pub(super) first_wall: Option<i64>,
    pub(super) last_wall: Option<i64>,
    pub(super) jumps_back: u64,
    pub(super) first_jump: Option<(u64, u64, u64)>,
    /// The last line's uptime and wall clock, when it had both.
    last_both: Option<(u64, i64)>,
    /// Times the wall clock went back while uptime went on (the host's clock was set
    /// back), and the first: its line, and the wall clock before and after, ms.
    pub(super) wall_steps_back: u64,
    pub(super) first_wall_step: Option<(u64, i64, i64)>,
    pub(super) pids: Vec<u64>,
}

impl Clock {
    pub(super) fn observe(&mut self, stamp: &Stamp, line: u64) {
        if let Some(u) = stamp.uptime_ns {
            self.first_uptime.get_or_insert(u);
            match self.last_uptime {
                // Stamps of one JVM never go back by more than output buffering can explain.
                Some(last) if u + 1_000_000_000 < last => {
                    let end = self.segment_end.take().map_or(last, |e| e.max(last));
                    let run = end - self.segment_start.unwrap_or(end).min(end);
                    self.covered_uptime_ns = self.covered_uptime_ns.saturating_add(run);
                    self.segment_start = Some(u);
                    self.jumps_back += 1;
                    if self.first_jump.is_none() {
                        self.first_jump = Some((line, last, u));
                    }
                }
                None => self.segment_start = Some(u),
                _ => {}
            }
            if self
                .last_uptime
                .is_none_or(|l| u > l || u + 1_000_000_000 < l)
            {
                self.last_uptime = Some(u);
            }
        }
        if let (Some(u), Some(w)) = (stamp.uptime_ns, stamp.wall_ms) {
            if let Some((last_u, last_w)) = self.last_both {
                // Uptime on, wall clock back by more than output buffering explains.
                if u >= last_u && w + 1000 < last_w {
                    self.wall_steps_back += 1;
                    self.first_wall_step.get_or_insert((line, last_w, w));
                }
            }
            self.last_both = Some((u, w));
        }
        if let Some(w) = stamp.wall_ms {
            self.first_wall = Some(self.first_wall.map_or(w, |f| f.min(w)));
            self.last_wall = Some(self.last_wall.map_or(w, |l| l.max(w)));
        }
        if let Some(pid) = stamp.pid {
            if !self.pids.contains(&pid) && self.pids.len() < 16 {
                self.pids.push(pid);
            }
        }
    }

    /// A pause (or safepoint) from `start` to `end`: the time covered includes all of it,
    /// not just the stamp of its line.
    pub(super) fn extend(&mut self, start: &Stamp, end: &Stamp) {
        if let (Some(s), Some(e)) = (start.uptime_ns, end.uptime_ns) {
            self.segment_start = Some(self.segment_start.map_or(s, |f| f.min(s)));
            self.segment_end = Some(self.segment_end.map_or(e, |l| l.max(e)));
        }
        if let (Some(s), Some(e)) = (start.wall_ms, end.wall_ms) {
            self.first_wall = Some(self.first_wall.map_or(s, |f| f.min(s)));
            self.last_wall = Some(self.last_wall.map_or(e, |l| l.max(e)));
        }
    }

    /// The uptime at which the file's last run ends: its last stamp or pause end.
    fn end_uptime(&self) -> Option<u64> {
        match (self.last_uptime, self.segment_end) {
            (Some(l), Some(e)) => Some(l.max(e)),
            (l, e) => l.or(e),
        }
    }

    /// The time the files of one JVM cover, `clocks` in the order they were read. A file
    /// whose stamps go on from where the one before stopped (a rotated set) covers the
    /// time from that end on, as the same lines in one file would: the time between the
    /// two files' lines is the run's, and the pause on its first line began in the file
    /// before, where it counts already.
    pub(super) fn covered_by_all(clocks: &[Clock]) -> u64 {
        let mut covered = 0u64;
        let mut before: Option<&Clock> = None;
        for clock in clocks {
            let goes_on = match (before, clock.first_uptime) {
                (Some(b), Some(first)) if clock.jumps_back == 0 => {
                    b.last_uptime.is_some_and(|last| first >= last)
                }
                _ => false,
            };
            let from = if goes_on {
                before.and_then(Clock::end_uptime)
            } else {
                None
            };
            covered = covered.saturating_add(clock.covered_ns(from));
            if clock.first_uptime.is_some() {
                before = Some(clock);
            }
        }
        covered
    }

    /// The time this file covers, from `from` on when given (see [`Clock::covered_by_all`]).
    fn covered_ns(&self, from: Option<u64>) -> u64 {
        let end = self.end_uptime();
        let start = from.or(self.segment_start);
        match (start, end) {
            (Some(s), Some(l)) => self.covered_uptime_ns.saturating_add(l.saturating_sub(s)),
            _ => match (self.first_wall, self.last_wall) {
                (Some(f), Some(l)) => (l.saturating_sub(f).max(0) as u64).saturating_mul(1_000_000),
                _ => 0,
            },
        }
    }
}

/// The earliest and latest uptime of every input, for the report's span.
#[derive(Default)]
pub(super) struct UptimeRange {
    pub(super) first: Option<u64>,
    pub(super) last: Option<u64>,
}

impl UptimeRange {
    pub(super) fn include(&mut self, uptime_ns: u64) {
        self.first = Some(self.first.map_or(uptime_ns, |f| f.min(uptime_ns)));
        self.last = Some(self.last.map_or(uptime_ns, |l| l.max(uptime_ns)));
    }
}

/// A time on one forward-going clock: uptime, else the wall clock.
pub(super) fn clock_ns(stamp: &Stamp) -> Option<u64> {
    stamp.uptime_ns.or_else(|| {
        stamp
            .wall_ms
            .and_then(|w| u64::try_from(w).ok())
            .map(|w| w * 1_000_000)
    })
}
