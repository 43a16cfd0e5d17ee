//! GC health beyond single pauses: the share of time in pauses over sliding windows, heap
//! occupancy, allocation and promotion rates, concurrent cycles and ZGC stalls. Every
//! accumulator here has a fixed size, whatever the length of the log.

use std::collections::BTreeMap;

use pauselab_pause::record::HeapChange;
use pauselab_pause::{DurationStats, Summary};
use serde::Serialize;

use crate::totals::{NameTotals, Totals};

const SECOND_NS: u64 = 1_000_000_000;

/// The worst share of pause time over any window of `window_s` whole seconds, from one-second
/// buckets in a ring: memory is one counter per second of the window.
pub(crate) struct SlidingShare {
    ring: Vec<u64>,
    /// The absolute second of the newest bucket (a pause's end may lie ahead of the lines).
    current: Option<u64>,
    /// The latest second a log line was written in: a step back from it is a new JVM run.
    last_line: Option<u64>,
    /// Seconds seen since the last reset (windows shorter than the ring are not judged).
    filled: u64,
    sum: u64,
    worst: Option<(u64, u64)>,
}

/// The worst window of pause time found.
#[derive(Debug, Clone, Serialize)]
pub struct WindowShare {
    /// The window's length.
    pub window_s: u64,
    /// Start of the window: seconds since JVM start, or since the epoch when the log only has
    /// wall-clock stamps.
    pub start_s: f64,
    /// Pause time in the window.
    pub pause_ms: f64,
    /// Its share of the window, percent.
    pub share_pct: f64,
}

impl SlidingShare {
    /// (The analysis makes its windows with [`PauseWindows::new`].)
    #[cfg(test)]
    pub(crate) fn new(window_s: usize) -> Self {
        SlidingShare {
            ring: vec![0; window_s],
            current: None,
            last_line: None,
            filled: 0,
            sum: 0,
            worst: None,
        }
    }

    /// A log line written at `at_ns` on a clock that only goes forward: a step back of more
    /// than a second starts the windows over (a new JVM run), as for the covered time.
    #[inline]
    pub(crate) fn tick(&mut self, at_ns: u64) {
        let second = at_ns / SECOND_NS;
        // Another line in the same second: nothing changes (most lines of a log).
        if self.last_line != Some(second) {
            self.tick_to(second);
        }
    }

    /// A line in another second than the last line's.
    fn tick_to(&mut self, second: u64) {
        match self.last_line {
            Some(l) if second + 1 < l => self.reset(second),
            _ => {
                self.advance_to(second);
                self.last_line = Some(self.last_line.map_or(second, |l| l.max(second)));
            }
        }
    }

    /// A pause from `start_ns` to `end_ns`: each second gets the part of the pause that fell
    /// in it, so a window never holds more pause than its own length.
    #[inline]
    pub(crate) fn pause(&mut self, start_ns: u64, end_ns: u64) {
        let end_ns = end_ns.max(start_ns);
        let last = end_ns / SECOND_NS;
        // Most pauses lie in one second the windows have reached already (their line moved
        // the windows there): that second takes all of the pause, nothing moves.
        match self.current {
            Some(current) if start_ns / SECOND_NS == last && last <= current => {
                let len = self.ring.len() as u64;
                if last + len > current {
                    let part = end_ns - start_ns;
                    self.ring[(last % len) as usize] += part;
                    self.sum += part;
                }
                self.judge_at(current);
            }
            _ => self.pause_across(start_ns, end_ns),
        }
    }

    /// A pause that ends in a second the windows have not reached, or spans seconds.
    fn pause_across(&mut self, start_ns: u64, end_ns: u64) {
        let len = self.ring.len() as u64;
        let last = end_ns / SECOND_NS;
        // The seconds of a pause longer than two windows before its last two windows hold
        // windows of nothing but pause, as the ones kept do: no need to walk them.
        let first = (start_ns / SECOND_NS).max(last.saturating_sub(2 * len));
        for second in first..=last {
            let from = start_ns.max(second * SECOND_NS);
            let to = end_ns.min((second + 1).saturating_mul(SECOND_NS));
            self.advance_to(second);
            let current = self.current.unwrap_or(second);
            // A second that already left the ring belongs to no window judged from now on.
            if second + len > current {
                let slot = (second % len) as usize;
                let part = to.saturating_sub(from);
                self.ring[slot] += part;
                self.sum += part;
            }
            self.judge();
        }
    }

    /// Moves the newest bucket forward to `second`, judging each window it passes: a window
    /// that ends in a quiet stretch of the log (no lines) is judged too.
    fn advance_to(&mut self, second: u64) {
        let len = self.ring.len() as u64;
        match self.current {
            None => self.reset(second),
            Some(c) if second > c => {
                let mut slot = ((c + 1) % len) as usize;
                for s in 1..=(second - c).min(len) {
                    self.sum -= self.ring[slot];
                    self.ring[slot] = 0;
                    slot = if slot + 1 == self.ring.len() {
                        0
                    } else {
                        slot + 1
                    };
                    self.filled += 1;
                    self.judge_at(c + s);
                }
                self.filled += (second - c).saturating_sub(len);
                self.current = Some(second);
            }
            Some(_) => {}
        }
    }

    fn judge(&mut self) {
        if let Some(current) = self.current {
            self.judge_at(current);
        }
    }

    /// Judges the window that ends with the second `current`.
    #[inline]
    fn judge_at(&mut self, current: u64) {
        let len = self.ring.len() as u64;
        if self.filled >= len && self.worst.is_none_or(|(w, _)| self.sum > w) {
            self.worst = Some((self.sum, current + 1 - len));
        }
    }

    fn reset(&mut self, second: u64) {
        clear_ring(&mut self.ring, self.current, self.sum);
        self.sum = 0;
        self.filled = 1;
        self.current = Some(second);
        self.last_line = Some(second);
    }

    pub(crate) fn worst(&self) -> Option<WindowShare> {
        share(self.ring.len() as u64, self.worst)
    }
}

/// Zeroes the buckets of `ring`, whose newest second is `current` and whose buckets add up
/// to `sum`: from the newest back, until what was zeroed adds up to `sum` (the rest are
/// zero already). A log whose clock steps back at every event (two JVMs' lines mixed in
/// one file) resets the windows at every event; zeroing the whole ring of the ten-minute
/// window each time took a quarter of such a log's reading.
fn clear_ring(ring: &mut [u64], current: Option<u64>, sum: u64) {
    let (Some(current), len) = (current, ring.len()) else {
        return;
    };
    let mut left = sum;
    let mut slot = (current % len as u64) as usize;
    for _ in 0..len {
        if left == 0 {
            return;
        }
        left = left.saturating_sub(ring[slot]);
        ring[slot] = 0;
        slot = slot.checked_sub(1).unwrap_or(len - 1);
    }
}

/// A short and a long [`SlidingShare`] (the analysis's 1-minute and 10-minute windows),
/// shown the same lines and pauses: both step through the same seconds, so one ring as
/// long as the long window holds the buckets of both, and each second is stepped once.
/// A pause spanning more than two short windows is walked over differently by each (see
/// [`SlidingShare::pause_across`]): the two then go on apart, each as it would alone.
pub(crate) enum PauseWindows {
    Together(SharedRing),
    Apart([SlidingShare; 2]),
}

/// The buckets and the clock of both windows, and each window's sum and worst.
pub(crate) struct SharedRing {
    /// One bucket per second of the long window.
    ring: Vec<u64>,
    /// The short window's length, and the long one's (the ring's).
    lens: [u64; 2],
    current: Option<u64>,
    last_line: Option<u64>,
    filled: u64,
    sums: [u64; 2],
    worst: [Option<(u64, u64)>; 2],
}

impl PauseWindows {
    /// Windows of `short` and `long` whole seconds, `short` <= `long`.
    pub(crate) fn new(short: usize, long: usize) -> Self {
        debug_assert!(0 < short && short <= long);
        PauseWindows::Together(SharedRing {
            ring: vec![0; long],
            lens: [short as u64, long as u64],
            current: None,
            last_line: None,
            filled: 0,
            sums: [0; 2],
            worst: [None; 2],
        })
    }

    /// See [`SlidingShare::tick`].
    #[inline]
    pub(crate) fn tick(&mut self, at_ns: u64) {
        match self {
            PauseWindows::Together(ring) => {
                let second = at_ns / SECOND_NS;
                if ring.last_line != Some(second) {
                    ring.tick_to(second);
                }
            }
            PauseWindows::Apart(windows) => windows.iter_mut().for_each(|w| w.tick(at_ns)),
        }
    }

    /// See [`SlidingShare::pause`]. Inlined into the pause's path: called for every pause,
    /// most of which land in a second the windows reached.
    #[inline(always)]
    pub(crate) fn pause(&mut self, start_ns: u64, end_ns: u64) {
        let end_ns = end_ns.max(start_ns);
        if let PauseWindows::Together(ring) = self {
            let (first, last) = (start_ns / SECOND_NS, end_ns / SECOND_NS);
            match ring.current {
                Some(current) if first == last && last <= current => {
                    return ring.add_in_place(last, end_ns - start_ns, current);
                }
                _ if first.saturating_add(2 * ring.lens[0]) >= last => {
                    return ring.pause_across(start_ns, end_ns);
                }
                _ => *self = PauseWindows::Apart(ring.apart()),
            }
        }
        if let PauseWindows::Apart(windows) = self {
            windows.iter_mut().for_each(|w| w.pause(start_ns, end_ns));
        }
    }

    /// The worst window of each length found, short first.
    pub(crate) fn worst(&self) -> [Option<WindowShare>; 2] {
        match self {
            PauseWindows::Together(ring) => [0, 1].map(|i| share(ring.lens[i], ring.worst[i])),
            PauseWindows::Apart(windows) => [windows[0].worst(), windows[1].worst()],
        }
    }
}

impl SharedRing {
    fn slot(&self, second: u64) -> usize {
        (second % self.lens[1]) as usize
    }

    /// See [`SlidingShare::tick_to`].
    fn tick_to(&mut self, second: u64) {
        match self.last_line {
            Some(l) if second + 1 < l => self.reset(second),
            _ => {
                self.advance_to(second);
                self.last_line = Some(self.last_line.map_or(second, |l| l.max(second)));
            }
        }
    }

    /// `part` ns of pause in `second`, which the windows reached (`current`).
    #[inline]
    fn add_in_place(&mut self, second: u64, part: u64, current: u64) {
        let [short, long] = self.lens;
        if second + long > current {
            let slot = self.slot(second);
            self.ring[slot] += part;
            self.sums[1] += part;
            if second + short > current {
                self.sums[0] += part;
            }
        }
        self.judge_at(current);
    }

    /// See [`SlidingShare::pause_across`]; the pause spans at most two short windows, so
    /// both walk the same seconds.
    fn pause_across(&mut self, start_ns: u64, end_ns: u64) {
        let last = end_ns / SECOND_NS;
        for second in start_ns / SECOND_NS..=last {
            let from = start_ns.max(second * SECOND_NS);
            let to = end_ns.min((second + 1).saturating_mul(SECOND_NS));
            self.advance_to(second);
            let current = self.current.unwrap_or(second);
            self.add_in_place(second, to.saturating_sub(from), current);
        }
    }

    /// See [`SlidingShare::advance_to`]: each window steps as far as its own length, the
    /// short one taking out the second that leaves it, still in the ring.
    fn advance_to(&mut self, second: u64) {
        let [short, long] = self.lens;
        match self.current {
            None => self.reset(second),
            Some(c) if second > c => {
                let steps = second - c;
                let next = |slot: usize| if slot as u64 + 1 == long { 0 } else { slot + 1 };
                // The slots of the second entering the ring and of the one leaving the
                // short window, stepped on with them.
                let mut slot = self.slot(c + 1);
                // `self.slot(c + 1 + long - short)`, from `slot` without a second division.
                let mut leaving = slot + (long - short) as usize;
                if leaving >= long as usize {
                    leaving -= long as usize;
                }
                let stepped = steps.min(long);
                // Stepping forward, a window only loses seconds, so its sum only falls: once
                // judged full at one step, it is judged no worse at the next. Both windows
                // are full from the first step on once the ring was filled; before, each
                // step is judged.
                let judged = if self.filled + 1 >= long { 1 } else { stepped };
                for s in 1..=judged {
                    let t = c + s;
                    self.filled += 1;
                    if s <= short {
                        self.sums[0] -= self.ring[leaving];
                        self.judge_window(0, t);
                        leaving = next(leaving);
                    }
                    self.sums[1] -= self.ring[slot];
                    self.ring[slot] = 0;
                    self.judge_window(1, t);
                    slot = next(slot);
                }
                for s in judged + 1..=stepped {
                    if s <= short {
                        self.sums[0] -= self.ring[leaving];
                        leaving = next(leaving);
                    }
                    self.sums[1] -= self.ring[slot];
                    self.ring[slot] = 0;
                    slot = next(slot);
                }
                self.filled += (stepped - judged) + steps.saturating_sub(long);
                self.current = Some(second);
            }
            Some(_) => {}
        }
    }

    #[inline]
    fn judge_at(&mut self, current: u64) {
        self.judge_window(0, current);
        self.judge_window(1, current);
    }

    /// See [`SlidingShare::judge_at`].
    #[inline]
    fn judge_window(&mut self, i: usize, current: u64) {
        let len = self.lens[i];
        if self.filled >= len && self.worst[i].is_none_or(|(w, _)| self.sums[i] > w) {
            self.worst[i] = Some((self.sums[i], current + 1 - len));
        }
    }

    fn reset(&mut self, second: u64) {
        clear_ring(&mut self.ring, self.current, self.sums[1]);
        self.sums = [0; 2];
        self.filled = 1;
        self.current = Some(second);
        self.last_line = Some(second);
    }

    /// Each window as a [`SlidingShare`] of its own, holding what it would hold alone.
    fn apart(&self) -> [SlidingShare; 2] {
        [0, 1].map(|i| {
            let len = self.lens[i];
            let mut ring = vec![0; len as usize];
            if let Some(current) = self.current {
                // The seconds of this window; older ones left it, or were never reached.
                for second in current.saturating_sub(len - 1)..=current {
                    ring[(second % len) as usize] = self.ring[self.slot(second)];
                }
            }
            SlidingShare {
                ring,
                current: self.current,
                last_line: self.last_line,
                filled: self.filled,
                sum: self.sums[i],
                worst: self.worst[i],
            }
        })
    }
}

fn share(len: u64, worst: Option<(u64, u64)>) -> Option<WindowShare> {
    worst.map(|(ns, start)| WindowShare {
        window_s: len,
        start_s: start as f64,
        pause_ms: ns as f64 / 1e6,
        // Pauses that overlap in the log (two JVMs in one file) could add up to more.
        share_pct: (ns as f64 * 100.0 / (len * SECOND_NS) as f64).min(100.0),
    })
}

/// ZGC stalls of one kind: how often, how long, which threads.
#[derive(Default)]
pub(crate) struct StallStats {
    stats: DurationStats,
    by_thread: BTreeMap<String, Totals>,
}

/// Threads that waited for memory (ZGC). Not safepoints: only the stalled thread stopped.
#[derive(Debug, Clone, Serialize)]
pub struct StallSection {
    /// The stalls' durations.
    #[serde(flatten)]
    pub summary: Summary,
    /// The threads that stalled longest in total (at most 10).
    pub by_thread: Vec<NameTotals>,
}

impl StallStats {
    pub(crate) fn record(&mut self, thread: &str, ns: u64) {
        self.stats.record(ns);
        let distinct = self.by_thread.len();
        match self.by_thread.get_mut(thread) {
            Some(t) => t.add(ns),
            None if distinct < 1000 => {
                let mut t = Totals::default();
                t.add(ns);
                self.by_thread.insert(thread.to_string(), t);
            }
            None => {}
        }
    }

    pub(crate) fn section(&self) -> StallSection {
        let mut by_thread: Vec<NameTotals> = self
            .by_thread
            .iter()
            .map(|(name, t)| t.named(name))
            .collect();
        by_thread.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
        by_thread.truncate(10);
        StallSection {
            summary: self.stats.summary(),
            by_thread,
        }
    }
}

/// Heap occupancy around collections and what it says about allocation and promotion.
pub(crate) struct MemoryStats {
    /// The heap's figures below mean something once a sample is taken: they are kept
    /// without `Option`s, each sample a `min` or a `max`.
    samples: u64,
    after_min: u64,
    after_max: u64,
    after_last: u64,
    before_max: u64,
    capacity_max: Option<u64>,
    /// The previous sample on the current forward-going clock: (time ns, heap after).
    previous: Option<(u64, u64)>,
    allocated: u128,
    allocation_ns: u64,
    promoted: u128,
    promotion_ns: u64,
    last_young_at: Option<u64>,
    cycles: BTreeMap<String, Totals>,
}

impl Default for MemoryStats {
    fn default() -> Self {
        MemoryStats {
            samples: 0,
            after_min: u64::MAX,
            after_max: 0,
            after_last: 0,
            before_max: 0,
            capacity_max: None,
            previous: None,
            allocated: 0,
            allocation_ns: 0,
            promoted: 0,
            promotion_ns: 0,
            last_young_at: None,
            cycles: BTreeMap::new(),
        }
    }
}

/// Heap before and after collections, allocation and promotion rates, concurrent cycles.
#[derive(Debug, Clone, Serialize)]
pub struct MemorySection {
    /// Collections whose log line gives the heap before and after.
    pub heap_samples: u64,
    /// Smallest heap after a collection.
    pub heap_after_gc_min_bytes: Option<u64>,
    /// Largest heap after a collection.
    pub heap_after_gc_max_bytes: Option<u64>,
    /// Heap after the last collection.
    pub heap_after_gc_last_bytes: Option<u64>,
    /// Largest heap before a collection.
    pub heap_before_gc_max_bytes: Option<u64>,
    /// Largest committed heap.
    pub heap_capacity_max_bytes: Option<u64>,
    /// Bytes allocated between collections (heap before a collection minus heap after the
    /// previous one), summed.
    pub allocated_bytes: Option<u64>,
    /// `allocated_bytes` over the time covered, MiB/s.
    pub allocation_rate_mib_s: Option<f64>,
    /// Bytes moved from the young to the old generation by young collections: JDK 8 events
    /// that print both transitions, unified logs with `gc+heap` (the old generation's growth
    /// in each young collection; G1 in whole regions).
    pub promoted_bytes: Option<u64>,
    /// `promoted_bytes` over the time covered, MiB/s.
    pub promotion_rate_mib_s: Option<f64>,
    /// Collection cycles with a duration (G1 concurrent mark, ZGC minor and major
    /// collections): they run beside the application, they are not pauses.
    pub cycles: Vec<NameTotals>,
}

fn mib_per_s(bytes: u128, ns: u64) -> Option<f64> {
    (ns >= SECOND_NS / 10).then(|| bytes as f64 / (1u64 << 20) as f64 / (ns as f64 / 1e9))
}

impl MemoryStats {
    /// A heap transition written at `at_ns` (same clock as [`SlidingShare::pause`]).
    pub(crate) fn heap(&mut self, at_ns: Option<u64>, heap: HeapChange) {
        self.samples += 1;
        self.after_min = self.after_min.min(heap.after);
        self.after_max = self.after_max.max(heap.after);
        self.after_last = heap.after;
        self.before_max = self.before_max.max(heap.before);
        if let Some(c) = heap.capacity {
            self.capacity_max = Some(self.capacity_max.map_or(c, |m| m.max(c)));
        }
        let Some(at) = at_ns else {
            self.previous = None;
            return;
        };
        if let Some((prev_at, prev_after)) = self.previous {
            if at >= prev_at {
                self.allocated += u128::from(heap.before.saturating_sub(prev_after));
                self.allocation_ns += at - prev_at;
            }
        }
        self.previous = Some((at, heap.after));
    }

    /// A young collection that printed the young generation's and the heap's transitions.
    pub(crate) fn young(&mut self, at_ns: Option<u64>, young: HeapChange, heap: HeapChange) {
        let freed_young = young.before.saturating_sub(young.after);
        let freed_heap = heap.before.saturating_sub(heap.after);
        self.promoted(at_ns, freed_young.saturating_sub(freed_heap));
    }

    /// A young collection that moved `bytes` into the old generation.
    pub(crate) fn promoted(&mut self, at_ns: Option<u64>, bytes: u64) {
        self.promoted += u128::from(bytes);
        if let (Some(at), Some(last)) = (at_ns, self.last_young_at) {
            if at >= last {
                self.promotion_ns += at - last;
            }
        }
        self.last_young_at = at_ns;
    }

    pub(crate) fn cycle(&mut self, name: &str, duration_ns: u64) {
        if self.cycles.len() < 100 || self.cycles.contains_key(name) {
            self.cycles
                .entry(name.to_string())
                .or_default()
                .add(duration_ns);
        }
    }

    pub(crate) fn section(&self) -> MemorySection {
        let clamp = |b: u128| b.min(u128::from(u64::MAX)) as u64;
        let sampled = self.samples > 0;
        MemorySection {
            heap_samples: self.samples,
            heap_after_gc_min_bytes: sampled.then_some(self.after_min),
            heap_after_gc_max_bytes: sampled.then_some(self.after_max),
            heap_after_gc_last_bytes: sampled.then_some(self.after_last),
            heap_before_gc_max_bytes: sampled.then_some(self.before_max),
            heap_capacity_max_bytes: self.capacity_max,
            allocated_bytes: (self.allocation_ns > 0).then(|| clamp(self.allocated)),
            allocation_rate_mib_s: mib_per_s(self.allocated, self.allocation_ns),
            promoted_bytes: self.last_young_at.map(|_| clamp(self.promoted)),
            promotion_rate_mib_s: mib_per_s(self.promoted, self.promotion_ns),
            cycles: self.cycles.iter().map(|(n, t)| t.named(n)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_window_is_found_and_old_buckets_leave_it() {
        let mut w = SlidingShare::new(60);
        // 1 s of pauses in second 10, then 30 s of pauses spread over seconds 100..130.
        w.pause(9 * SECOND_NS, 10 * SECOND_NS);
        for s in 100..130 {
            w.pause((s - 1) * SECOND_NS, s * SECOND_NS);
        }
        w.tick(400 * SECOND_NS);
        let worst = w.worst().unwrap();
        assert_eq!(worst.window_s, 60);
        assert_eq!(worst.pause_ms, 30_000.0);
        assert_eq!(worst.share_pct, 50.0);
        assert!(worst.start_s >= 69.0 && worst.start_s <= 99.0, "{worst:?}");
    }

    #[test]
    fn a_window_ending_in_a_quiet_stretch_counts() {
        let mut w = SlidingShare::new(60);
        for s in 10..40 {
            w.pause(s * SECOND_NS, s * SECOND_NS + SECOND_NS / 2);
        }
        // No line for 50 s, then one.
        w.tick(90 * SECOND_NS);
        assert_eq!(w.worst().unwrap().pause_ms, 15_000.0);
    }

    #[test]
    fn a_log_shorter_than_the_window_has_no_worst_window() {
        let mut w = SlidingShare::new(60);
        w.pause(0, SECOND_NS);
        w.pause(29 * SECOND_NS, 30 * SECOND_NS);
        assert!(w.worst().is_none());
    }

    #[test]
    fn a_pause_longer_than_the_window_fills_it_and_no_more() {
        let mut w = SlidingShare::new(60);
        // A JDK 8 event: stamped at its start, 97 s long; a line held back inside it (a
        // concurrent phase) is not a new JVM run.
        w.tick(1_000 * SECOND_NS);
        w.pause(1_000 * SECOND_NS, 1_097 * SECOND_NS);
        w.tick(1_040 * SECOND_NS);
        let worst = w.worst().unwrap();
        assert_eq!(worst.share_pct, 100.0, "{worst:?}");
        assert_eq!(worst.pause_ms, 60_000.0);
        // A pause of hours is walked over its last windows only.
        let mut w = SlidingShare::new(600);
        w.pause(0, 100_000 * SECOND_NS);
        assert_eq!(w.worst().unwrap().share_pct, 100.0);
        // Stamps and durations at the end of the clock's range.
        let mut w = SlidingShare::new(60);
        w.tick(u64::MAX - 5);
        w.pause(u64::MAX - 3 * SECOND_NS, u64::MAX);
    }

    #[test]
    fn a_pause_spread_over_two_seconds_counts_in_both() {
        let mut w = SlidingShare::new(60);
        w.tick(0);
        // 400 ms before second 10 and 600 ms after it.
        w.pause(9_600_000_000, 10_600_000_000);
        w.tick(69 * SECOND_NS);
        // The window of seconds 10..69 holds only the second part.
        w.tick(70 * SECOND_NS);
        let worst = w.worst().unwrap();
        assert_eq!(worst.pause_ms, 1_000.0);
        assert_eq!(worst.start_s, 0.0);
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Step {
        Tick(u64),
        Pause(u64, u64),
    }

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        // Times in tenths of a second around a few hundred seconds, stepping back at times
        // (a new JVM run), pauses from a few ms to several minutes.
        let step = prop_oneof![
            4 => (0u64..4_000).prop_map(|t| Step::Tick(t * SECOND_NS / 10)),
            4 => (0u64..4_000, 0u64..30).prop_map(|(t, d)| {
                Step::Pause(t * SECOND_NS / 10, t * SECOND_NS / 10 + d * SECOND_NS / 10)
            }),
            1 => (0u64..4_000, 0u64..3_000).prop_map(|(t, d)| {
                Step::Pause(t * SECOND_NS / 10, t * SECOND_NS / 10 + d * SECOND_NS / 10)
            }),
        ];
        prop::collection::vec(step, 1..120).prop_map(|mut steps| {
            // Mostly forward, as a log goes: sort all but a few.
            let keep = steps.len() / 10;
            steps[keep..].sort_by_key(|s| match s {
                Step::Tick(t) | Step::Pause(t, _) => *t,
            });
            steps
        })
    }

    proptest! {
        /// One ring for both windows finds what each window finds alone.
        #[test]
        fn shared_windows_find_what_each_window_finds_alone(
            steps in steps(),
            lens in prop_oneof![Just((60usize, 600usize)), (1usize..8, 0usize..8)
                .prop_map(|(short, more)| (short, short + more))],
        ) {
            let (short, long) = lens;
            let mut shared = PauseWindows::new(short, long);
            let mut alone = [SlidingShare::new(short), SlidingShare::new(long)];
            for step in &steps {
                match *step {
                    Step::Tick(at) => {
                        shared.tick(at);
                        alone.iter_mut().for_each(|w| w.tick(at));
                    }
                    Step::Pause(start, end) => {
                        shared.pause(start, end);
                        alone.iter_mut().for_each(|w| w.pause(start, end));
                    }
                }
                let found = shared.worst().map(|w| w.map(|w| (w.start_s, w.pause_ms)));
                let expected = [&alone[0], &alone[1]].map(|w| w.worst().map(|w| (w.start_s, w.pause_ms)));
                prop_assert_eq!(found, expected, "after {:?}", step);
            }
        }

        /// The buckets add up to the windows' sums after every step, and a reset (a step
        /// back, or asked for here) leaves none of them holding anything.
        #[test]
        fn a_reset_empties_every_bucket(
            steps in steps(),
            (short, long) in (1usize..70, 0usize..600).prop_map(|(s, more)| (s, s + more)),
        ) {
            let mut shared = PauseWindows::new(short, long);
            let mut alone = SlidingShare::new(long);
            for step in &steps {
                match *step {
                    Step::Tick(at) => {
                        shared.tick(at);
                        alone.tick(at);
                    }
                    Step::Pause(start, end) => {
                        shared.pause(start, end);
                        alone.pause(start, end);
                    }
                }
                prop_assert_eq!(alone.ring.iter().sum::<u64>(), alone.sum);
                if let PauseWindows::Together(ring) = &shared {
                    prop_assert_eq!(ring.ring.iter().sum::<u64>(), ring.sums[1]);
                }
            }
            alone.reset(1);
            prop_assert!(alone.ring.iter().all(|&b| b == 0));
            match &mut shared {
                PauseWindows::Together(ring) => {
                    ring.reset(1);
                    prop_assert!(ring.ring.iter().all(|&b| b == 0));
                }
                PauseWindows::Apart(windows) => {
                    for w in windows.iter_mut() {
                        w.reset(1);
                        prop_assert!(w.ring.iter().all(|&b| b == 0));
                    }
                }
            }
        }
    }
}
