//! Per-file time tracking: the time a log covers, JVM restarts and interleaved JVMs.

use pauselab_pause::record::Stamp;

/// Per-file time tracking: covered span and JVM restarts or interleaving.
#[derive(Default, Debug, Clone, PartialEq)]
pub(super) struct Clock {
    first_uptime: Option<u64>,
    segment_start: Option<u64>,
    /// The latest uptime of the current run, when [`Known::UPTIME`].
    last_uptime: u64,
    /// The latest pause end of the current run: a JDK 8 event is stamped at its start, so
    /// it can end after the last stamp.
    segment_end: Option<u64>,
    covered_uptime_ns: u64,
    /// The earliest and latest wall clock, when [`Known::WALL`].
    first_wall: i64,
    last_wall: i64,
    pub(super) jumps_back: u64,
    pub(super) first_jump: Option<(u64, u64, u64)>,
    /// The last line's uptime and wall clock, when it had both ([`Known::BOTH`]).
    last_both: (u64, i64),
    /// Which of the figures above are known: kept apart from them (not as `Option`s), so
    /// that the usual line checks one byte (see [`Clock::observe_forward`]).
    known: u8,
    /// Times the wall clock went back while uptime went on (the host's clock was set
    /// back), and the first: its line, and the wall clock before and after, ms.
    pub(super) wall_steps_back: u64,
    pub(super) first_wall_step: Option<(u64, i64, i64)>,
    pub(super) pids: Vec<u64>,
}

/// The bits of [`Clock`]'s `known`.
struct Known;

impl Known {
    const UPTIME: u8 = 1;
    const BOTH: u8 = 2;
    const WALL: u8 = 4;
    const ALL: u8 = 7;
}

impl Clock {
    #[inline]
    pub(super) fn observe(&mut self, stamp: &Stamp, line: u64) {
        if !self.observe_forward(stamp) {
            self.observe_any(stamp, line);
        }
    }

    /// The usual line: uptime and wall clock, no pid, the uptime on from the latest and the
    /// wall clock not back beyond buffering. What [`Clock::observe_any`] does of it, with
    /// none of its checks for a first line, a new run or a clock set back; false (nothing
    /// done) for any other line.
    #[inline]
    fn observe_forward(&mut self, stamp: &Stamp) -> bool {
        let (Some(u), Some(w), None) = (stamp.uptime_ns, stamp.wall_ms, stamp.pid) else {
            return false;
        };
        // A line with both clocks came before: the first and last wall clocks are known.
        if self.known != Known::ALL || u < self.last_uptime || w + 1000 < self.last_both.1 {
            return false;
        }
        self.last_uptime = u;
        self.last_both = (u, w);
        self.first_wall = self.first_wall.min(w);
        self.last_wall = self.last_wall.max(w);
        true
    }

    fn last_uptime(&self) -> Option<u64> {
        (self.known & Known::UPTIME != 0).then_some(self.last_uptime)
    }

    /// The earliest and the latest wall clock seen, if any.
    pub(super) fn wall_range(&self) -> Option<(i64, i64)> {
        (self.known & Known::WALL != 0).then_some((self.first_wall, self.last_wall))
    }

    /// Includes `first` and `last` in the wall clock's range.
    fn include_walls(&mut self, first: i64, last: i64) {
        if self.known & Known::WALL == 0 {
            (self.first_wall, self.last_wall) = (first, last);
            self.known |= Known::WALL;
        } else {
            self.first_wall = self.first_wall.min(first);
            self.last_wall = self.last_wall.max(last);
        }
    }

    /// Any line (see [`Clock::observe`]).
    fn observe_any(&mut self, stamp: &Stamp, line: u64) {
        if let Some(u) = stamp.uptime_ns {
            self.first_uptime.get_or_insert(u);
            match self.last_uptime() {
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
                .last_uptime()
                .is_none_or(|l| u > l || u + 1_000_000_000 < l)
            {
                self.last_uptime = u;
                self.known |= Known::UPTIME;
            }
        }
        if let (Some(u), Some(w)) = (stamp.uptime_ns, stamp.wall_ms) {
            if self.known & Known::BOTH != 0 {
                let (last_u, last_w) = self.last_both;
                // Uptime on, wall clock back by more than output buffering explains.
                if u >= last_u && w + 1000 < last_w {
                    self.wall_steps_back += 1;
                    self.first_wall_step.get_or_insert((line, last_w, w));
                }
            }
            self.last_both = (u, w);
            self.known |= Known::BOTH;
        }
        if let Some(w) = stamp.wall_ms {
            self.include_walls(w, w);
        }
        if let Some(pid) = stamp.pid {
            if !self.pids.contains(&pid) && self.pids.len() < 16 {
                self.pids.push(pid);
            }
        }
    }

    /// A pause (or safepoint) from `start` to `end`: the time covered includes all of it,
    /// not just the stamp of its line.
    #[inline]
    pub(super) fn extend(&mut self, start: &Stamp, end: &Stamp) {
        if let (Some(s), Some(e)) = (start.uptime_ns, end.uptime_ns) {
            self.segment_start = Some(self.segment_start.map_or(s, |f| f.min(s)));
            self.segment_end = Some(self.segment_end.map_or(e, |l| l.max(e)));
        }
        if let (Some(s), Some(e)) = (start.wall_ms, end.wall_ms) {
            self.include_walls(s, e);
        }
    }

    /// The uptime at which the file's last run ends: its last stamp or pause end.
    fn end_uptime(&self) -> Option<u64> {
        match (self.last_uptime(), self.segment_end) {
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
                    b.last_uptime().is_some_and(|last| first >= last)
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
            _ => match self.wall_range() {
                Some((f, l)) => (l.saturating_sub(f).max(0) as u64).saturating_mul(1_000_000),
                _ => 0,
            },
        }
    }
}

/// The earliest and latest uptime of every input, for the report's span.
pub(super) struct UptimeRange {
    /// `u64::MAX` and 0 until an uptime is included: each one included is then a `min` and
    /// a `max`, asked of every line and twice of every pause.
    first: u64,
    last: u64,
}

impl Default for UptimeRange {
    fn default() -> Self {
        UptimeRange {
            first: u64::MAX,
            last: 0,
        }
    }
}

impl UptimeRange {
    #[inline]
    pub(super) fn include(&mut self, uptime_ns: u64) {
        self.first = self.first.min(uptime_ns);
        self.last = self.last.max(uptime_ns);
    }

    /// The earliest and the latest uptime included, if any.
    pub(super) fn span(&self) -> Option<(u64, u64)> {
        (self.first <= self.last).then_some((self.first, self.last))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stamp_strategy() -> impl Strategy<Value = Stamp> {
        (
            prop::option::of(0u64..5_000_000_000),
            prop::option::of(-3_000i64..6_000),
            prop::option::of(1u64..4),
        )
            .prop_map(|(uptime_ns, wall_ms, pid)| Stamp {
                uptime_ns,
                wall_ms,
                pid,
            })
    }

    proptest! {
        /// Lines of both clocks going forward take the short way; any sequence of lines
        /// leaves the clock as the general way does.
        #[test]
        fn forward_lines_move_the_clock_as_any_line_does(
            stamps in prop::collection::vec(stamp_strategy(), 1..30),
            forward in prop::collection::vec((0u64..2_000_000_000, -1_500i64..1_500), 0..30),
        ) {
            let (mut fast, mut general) = (Clock::default(), Clock::default());
            // Some arbitrary lines, then lines that mostly go forward from the last.
            let mut all = stamps.clone();
            let last = *stamps.last().unwrap();
            let (mut u, mut w) = (last.uptime_ns.unwrap_or(0), last.wall_ms.unwrap_or(0));
            for (du, dw) in forward {
                u = u.saturating_add(du);
                w += dw;
                all.push(Stamp { uptime_ns: Some(u), wall_ms: Some(w), pid: None });
            }
            for (line, stamp) in all.iter().enumerate() {
                fast.observe(stamp, line as u64);
                general.observe_any(stamp, line as u64);
                prop_assert_eq!(&fast, &general);
            }
        }
    }
}
