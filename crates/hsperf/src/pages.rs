//! Which 4 KiB pages of the perf-data region a JVM writes, how often, and whether inside
//! safepoints: the map behind `pauselab perf PID --pages`.
//!
//! A store into a page of a mapped file that is under writeback on a stable-pages device
//! waits for that writeback to finish, so what matters for the hsperf stall is the set of
//! pages written per interval, not the number of counters. [`PageMapper`] compares
//! successive [`Snapshot`]s byte by byte, page by page, and attributes each change to the
//! counters whose values changed. It also replays the same changes on a "packed" layout,
//! where every counter that changed during the run sits together at the start of the
//! region, to say how many pages such a layout would write.

use std::collections::BTreeSet;
use std::ops::Range;
use std::time::Duration;

use serde::Serialize;

use crate::format::{Snapshot, Variability};

/// The page size the map counts in (x86-64 and most arm64 kernels).
pub const PAGE_SIZE: usize = 4096;

/// Incremented by HotSpot when a safepoint begins (`RuntimeService::record_safepoint_begin`).
const SAFEPOINT_COUNT: &str = "sun.rt.safepoints";
/// Incremented by HotSpot when a safepoint ends (`RuntimeService::record_safepoint_end`).
const SAFEPOINT_TIME: &str = "sun.rt.safepointTime";

/// Changed-counter lists kept for the packed replay. One id per changed counter per
/// interval: 4 million ids are 16 MiB, hours of sampling at 10 ms.
const MAX_KEPT_CHANGES: usize = 4 << 20;

/// One counter's place and its changes.
#[derive(Debug, Clone)]
struct Tracked {
    name: String,
    value: Range<usize>,
    variability: Variability,
    changes: u64,
}

/// Accumulates the page map over successive snapshots of one JVM.
#[derive(Debug)]
pub struct PageMapper {
    counters: Vec<Tracked>,
    previous: Vec<u8>,
    safepoint_count: Option<Range<usize>>,
    safepoint_time: Option<Range<usize>>,
    /// A safepoint began and had not ended at the last snapshot: a GC longer than the
    /// sampling interval writes its counters in intervals where neither counter moves.
    safepoint_open: bool,
    intervals: u64,
    safepoint_intervals: u64,
    /// Per page: intervals in which it was written, and those of them holding a safepoint.
    written: Vec<(u64, u64)>,
    /// Distinct pages written, summed over intervals.
    page_writes: u64,
    /// Per interval with a change: the ids of the counters that changed.
    changed_by_interval: Vec<Vec<u32>>,
    kept_changes: usize,
    /// Set when [`MAX_KEPT_CHANGES`] was reached: the packed replay covers fewer intervals.
    packed_truncated: bool,
}

impl PageMapper {
    /// Starts a map from the first snapshot (the baseline nothing is compared against).
    pub fn new(first: &Snapshot) -> PageMapper {
        let mut mapper = PageMapper {
            counters: Vec::new(),
            previous: first.bytes().to_vec(),
            safepoint_count: None,
            safepoint_time: None,
            safepoint_open: false,
            intervals: 0,
            safepoint_intervals: 0,
            written: Vec::new(),
            page_writes: 0,
            changed_by_interval: Vec::new(),
            kept_changes: 0,
            packed_truncated: false,
        };
        mapper.learn_layout(first);
        mapper
    }

    /// The region only grows: counters created since the last snapshot are appended.
    fn learn_layout(&mut self, snapshot: &Snapshot) {
        for slot in snapshot.slots().skip(self.counters.len()) {
            match slot.name {
                SAFEPOINT_COUNT => self.safepoint_count = Some(slot.value.clone()),
                SAFEPOINT_TIME => self.safepoint_time = Some(slot.value.clone()),
                _ => {}
            }
            self.counters.push(Tracked {
                name: slot.name.to_string(),
                value: slot.value,
                variability: slot.variability,
                changes: 0,
            });
        }
        let pages = snapshot.bytes().len().div_ceil(PAGE_SIZE);
        if self.written.len() < pages {
            self.written.resize(pages, (0, 0));
        }
    }

    /// Compares `next` with the previous snapshot: one interval.
    pub fn observe(&mut self, next: &Snapshot) {
        self.learn_layout(next);
        let now = next.bytes();
        let before = &self.previous;
        let differs = |range: &Range<usize>| {
            now.get(range.clone()) != before.get(range.clone())
                && range.end <= now.len().max(before.len())
        };
        // An interval held a safepoint if one began in it, ended in it, or was under way
        // when it started. One that began and did not end is still under way at its end;
        // where both moved, the one that began is taken to have ended (the usual case of a
        // safepoint shorter than the interval).
        let began = self.safepoint_count.as_ref().is_some_and(&differs);
        let ended = self.safepoint_time.as_ref().is_some_and(&differs);
        let in_safepoint = began || ended || self.safepoint_open;
        self.safepoint_open =
            self.safepoint_time.is_some() && !ended && (began || self.safepoint_open);
        self.intervals += 1;
        self.safepoint_intervals += u64::from(in_safepoint);
        for (page, tally) in self.written.iter_mut().enumerate() {
            let bytes = page * PAGE_SIZE..(page + 1) * PAGE_SIZE;
            let bytes = bytes.start..bytes.end.min(now.len().max(before.len()));
            if differs(&bytes) {
                tally.0 += 1;
                tally.1 += u64::from(in_safepoint);
                self.page_writes += 1;
            }
        }
        let mut changed = Vec::new();
        for (id, counter) in self.counters.iter_mut().enumerate() {
            if differs(&counter.value) {
                counter.changes += 1;
                changed.push(id as u32);
            }
        }
        if !changed.is_empty() {
            if self.kept_changes + changed.len() <= MAX_KEPT_CHANGES {
                self.kept_changes += changed.len();
                self.changed_by_interval.push(changed);
            } else {
                self.packed_truncated = true;
            }
        }
        self.previous.clear();
        self.previous.extend_from_slice(now);
    }

    /// The map, for the `elapsed` wall time the intervals covered.
    pub fn finish(self, elapsed: Duration) -> PageMap {
        let seconds = elapsed.as_secs_f64();
        let per_second = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let share = |n: u64, of: u64| if of > 0 { n as f64 / of as f64 } else { 0.0 };
        let pages = self
            .written
            .iter()
            .enumerate()
            .map(|(page, &(written, in_safepoint))| {
                let bytes = page * PAGE_SIZE..(page + 1) * PAGE_SIZE;
                let mut here: Vec<&Tracked> = self
                    .counters
                    .iter()
                    .filter(|c| c.value.start < bytes.end && c.value.end > bytes.start)
                    .collect();
                here.sort_by(|a, b| b.changes.cmp(&a.changes).then(a.name.cmp(&b.name)));
                PageWrites {
                    page,
                    offset: bytes.start,
                    counters: here.len(),
                    variable_counters: here
                        .iter()
                        .filter(|c| c.variability == Variability::Variable)
                        .count(),
                    changed_counters: here.iter().filter(|c| c.changes > 0).count(),
                    written_intervals: written,
                    written_share: share(written, self.intervals),
                    in_safepoint_intervals: in_safepoint,
                    in_safepoint_share: share(in_safepoint, written),
                    changed: here
                        .iter()
                        .filter(|c| c.changes > 0)
                        .map(|c| CounterWrites {
                            name: c.name.clone(),
                            offset: c.value.start,
                            changes: c.changes,
                        })
                        .collect(),
                }
            })
            .collect();
        let (packed_pages, packed_writes) = self.packed_replay();
        PageMap {
            page_size: PAGE_SIZE,
            region_bytes_in_use: self.previous.len(),
            counters: self.counters.len(),
            changed_counters: self.counters.iter().filter(|c| c.changes > 0).count(),
            intervals: self.intervals,
            safepoint_intervals: self.safepoint_intervals,
            seconds,
            pages_written_per_second: per_second(self.page_writes),
            packed_pages,
            packed_pages_written_per_second: per_second(packed_writes),
            packed_covers_every_interval: !self.packed_truncated,
            pages,
        }
    }

    /// Lays every counter that changed side by side from offset 0, in their order in the
    /// region and at their own sizes, and counts the distinct pages each interval's changes
    /// would write there. Returns the pages the packed counters fill and the writes.
    fn packed_replay(&self) -> (usize, u64) {
        let mut packed_page = vec![Vec::new(); self.counters.len()];
        let mut offset = 0usize;
        for (id, counter) in self.counters.iter().enumerate() {
            if counter.changes == 0 {
                continue;
            }
            // Values keep the 8-byte alignment HotSpot gives them.
            offset = offset.next_multiple_of(8);
            let end = offset + counter.value.len().max(1);
            packed_page[id] = (offset / PAGE_SIZE..=(end - 1) / PAGE_SIZE).collect();
            offset = end;
        }
        let writes = self
            .changed_by_interval
            .iter()
            .map(|ids| {
                ids.iter()
                    .flat_map(|&id| packed_page[id as usize].iter().copied())
                    .collect::<BTreeSet<usize>>()
                    .len() as u64
            })
            .sum();
        (offset.div_ceil(PAGE_SIZE), writes)
    }
}

/// The page map of one sampling run.
#[derive(Debug, Clone, Serialize)]
pub struct PageMap {
    /// Bytes per page (4096).
    pub page_size: usize,
    /// Bytes of the region in use at the end (entries stop there; the rest is never written).
    pub region_bytes_in_use: usize,
    /// Counters in the region.
    pub counters: usize,
    /// Counters whose value changed at least once.
    pub changed_counters: usize,
    /// Intervals compared (snapshots minus one).
    pub intervals: u64,
    /// Intervals in which `sun.rt.safepoints` changed: they held at least one safepoint.
    pub safepoint_intervals: u64,
    /// Wall time the intervals covered.
    pub seconds: f64,
    /// Distinct pages written per interval, summed, per second: the layout as it is.
    pub pages_written_per_second: f64,
    /// Pages the changed counters fill when packed together at the start of the region.
    pub packed_pages: usize,
    /// The same changes on the packed layout: distinct pages written per second.
    pub packed_pages_written_per_second: f64,
    /// False when the run was so long that the packed replay kept only its first intervals.
    pub packed_covers_every_interval: bool,
    /// Every page of the part in use, in order.
    pub pages: Vec<PageWrites>,
}

/// What happened to one page.
#[derive(Debug, Clone, Serialize)]
pub struct PageWrites {
    /// Page number from the start of the region.
    pub page: usize,
    /// Its first byte's offset.
    pub offset: usize,
    /// Counters whose value lies (at least partly) in the page.
    pub counters: usize,
    /// Of them, those the JVM declares variable.
    pub variable_counters: usize,
    /// Of them, those that changed.
    pub changed_counters: usize,
    /// Intervals in which any byte of the page changed.
    pub written_intervals: u64,
    /// `written_intervals` over all intervals.
    pub written_share: f64,
    /// Of the intervals that wrote the page, those that held a safepoint.
    pub in_safepoint_intervals: u64,
    /// `in_safepoint_intervals` over `written_intervals`.
    pub in_safepoint_share: f64,
    /// The counters of the page that changed, most changed first.
    pub changed: Vec<CounterWrites>,
}

/// One counter that changed.
#[derive(Debug, Clone, Serialize)]
pub struct CounterWrites {
    /// Its name.
    pub name: String,
    /// Offset of its value in the region.
    pub offset: usize,
    /// Intervals in which its value changed.
    pub changes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_region::{test_region, TestValue};

    fn region(counters: &[(String, i64)]) -> Snapshot {
        let entries: Vec<(&str, TestValue)> = counters
            .iter()
            .map(|(name, value)| (name.as_str(), TestValue::Long(*value)))
            .collect();
        test_region(&entries)
    }

    #[test]
    fn a_changed_counter_marks_its_page_and_the_packed_layout_needs_one_page() {
        // Counters spread over three pages, as a large region would hold them.
        let counters: Vec<(String, i64)> = [SAFEPOINT_COUNT, SAFEPOINT_TIME]
            .into_iter()
            .map(|name| (name.to_string(), 0))
            .chain((0..400).map(|i| (format!("sun.test.counter{i:03}"), 0)))
            .collect();
        let first = region(&counters);
        let mut mapper = PageMapper::new(&first);
        let change = |values: &mut Vec<(String, i64)>, names: &[&str]| {
            for (name, value) in values.iter_mut() {
                if names.contains(&name.as_str()) {
                    *value += 1;
                }
            }
        };
        let mut values = counters.clone();
        // Interval 1: a counter on the first page and one on the last, no safepoint.
        change(&mut values, &["sun.test.counter000", "sun.test.counter399"]);
        mapper.observe(&region(&values));
        // Interval 2: a safepoint that begins and ends, and the first counter again.
        change(
            &mut values,
            &[SAFEPOINT_COUNT, SAFEPOINT_TIME, "sun.test.counter000"],
        );
        mapper.observe(&region(&values));
        // Interval 3: nothing.
        mapper.observe(&region(&values));
        let map = mapper.finish(Duration::from_secs(3));

        assert_eq!(map.intervals, 3);
        assert_eq!(map.safepoint_intervals, 1);
        assert_eq!(map.changed_counters, 4);
        let page_of = |name: &str| {
            map.pages
                .iter()
                .find(|p| p.changed.iter().any(|c| c.name == name))
                .unwrap()
        };
        let first_page = page_of("sun.test.counter000");
        assert_eq!(first_page.page, 0);
        assert_eq!(first_page.written_intervals, 2);
        assert_eq!(first_page.in_safepoint_intervals, 1);
        let last = page_of("sun.test.counter399");
        assert!(last.page >= 2, "400 entries span at least 3 pages");
        assert_eq!(last.written_intervals, 1);
        assert_eq!(last.in_safepoint_intervals, 0);
        let untouched = map
            .pages
            .iter()
            .filter(|p| p.written_intervals == 0)
            .count();
        assert!(untouched >= 1);
        // As laid out: 2 pages in interval 1, 1 in interval 2; packed: 1 per interval.
        assert!((map.pages_written_per_second - 3.0 / 3.0).abs() < 1e-9);
        assert_eq!(map.packed_pages, 1);
        assert!((map.packed_pages_written_per_second - 2.0 / 3.0).abs() < 1e-9);
        assert!(map.packed_covers_every_interval);
    }

    #[test]
    fn a_safepoint_longer_than_an_interval_covers_the_intervals_it_spans() {
        let counters: Vec<(String, i64)> = [SAFEPOINT_COUNT, SAFEPOINT_TIME, "sun.gc.test"]
            .into_iter()
            .map(|name| (name.to_string(), 0))
            .collect();
        let mut mapper = PageMapper::new(&region(&counters));
        let mut values = counters.clone();
        let mut step = |mapper: &mut PageMapper, names: &[&str]| {
            for (name, value) in values.iter_mut() {
                if names.contains(&name.as_str()) {
                    *value += 1;
                }
            }
            mapper.observe(&region(&values));
        };
        // Begins in interval 1, the collector writes in interval 2 (neither safepoint
        // counter moves), ends in interval 3; interval 4 is after it.
        step(&mut mapper, &[SAFEPOINT_COUNT]);
        step(&mut mapper, &["sun.gc.test"]);
        step(&mut mapper, &[SAFEPOINT_TIME]);
        step(&mut mapper, &["sun.gc.test"]);
        let map = mapper.finish(Duration::from_secs(4));
        assert_eq!(map.intervals, 4);
        assert_eq!(map.safepoint_intervals, 3);
        let page = &map.pages[0];
        assert_eq!(page.written_intervals, 4);
        assert_eq!(page.in_safepoint_intervals, 3);
    }
}
