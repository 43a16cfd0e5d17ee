//! GC pauses: counted when their line comes, committed once their CPU times and safepoint
//! are known (the rules see them then), kept among the worst.

use pauselab_pause::record::{Format, GcPause, HeapChange, OldChange, Stamp};
use pauselab_pause::{Collector, CpuTimes, PauseEvent, PauseKind, SourceLine};

use crate::analyzer::clock::clock_ns;
use crate::analyzer::report::WorstPause;
use crate::analyzer::{Analyzer, HeapSample};
use crate::rules::full_gc::{upgrade_reason, NO_CAUSE};
use crate::rules::marks::{cpu_marks, is_marked, marks_of};
use crate::rules::rule::{Marks, Seen, Watch};
use crate::totals::{NameMarks, Totals};
use crate::waiting::{PauseRecord, Pending};

/// Pauses of a JDK 6-8 log or a recording kept waiting for one safepoint.
const MAX_PAUSES_IN_ONE_STOP: usize = 4;

/// Distinct pause names and full collection causes kept.
pub(super) const MAX_NAMES: usize = 1000;
const MAX_CAUSES: usize = 100;

impl Analyzer<'_> {
    /// [`Analyzer::count_pause`] for the pauses that nesting held or joined, kept out of
    /// the line's path.
    #[inline(never)]
    pub(super) fn count_pause_apart(&mut self, record: PauseRecord, line: u64) {
        self.count_pause(record, line)
    }

    /// One stop of the application: its heap, its time and its place in the pause windows.
    /// Inlined into the pause line's path, the one caller of every pause.
    #[inline(always)]
    pub(super) fn count_pause(&mut self, mut record: PauseRecord, line: u64) {
        let (stamp, format) = (record.stamp(), record.format());
        let pause = &mut *record;
        let fi = self.files.len() - 1;
        if let Some(heap) = pause.heap {
            self.heap_sample(&stamp, heap, &pause.name, pause.gc_id);
            // A young collection that failed and was upgraded promoted nothing it can tell.
            if let Some(young) = pause.young.filter(|_| !pause.upgraded_to_full) {
                self.memory.young(clock_ns(&stamp), young, heap);
            }
        }
        if let Some(bytes) = self.promoted_by(pause) {
            self.memory.promoted(clock_ns(&stamp), bytes);
        }
        let (start, end) = match format {
            // A unified pause line is written when the pause ends.
            Format::Unified => (stamp.minus(pause.duration_ns), stamp),
            // A JDK 8 event is stamped when it begins.
            Format::Jdk8 => (stamp, stamp.plus(pause.duration_ns)),
        };
        pause.start = start;
        let pause = &*record;
        self.clocks[fi].extend(&start, &end);
        // The stamp of its line is in the uptime range already (`observe` saw the line, or
        // one of the same stamp): only the pause's other end may lie outside it.
        let other_end = match format {
            Format::Unified => start,
            Format::Jdk8 => end,
        };
        if let Some(u) = other_end.uptime_ns {
            self.uptime.include(u);
        }
        if let Some(start) = clock_ns(&start) {
            self.windows
                .pause(start, start.saturating_add(pause.duration_ns));
        }
        if !self.text_log {
            let seen = Seen {
                item: pause,
                start,
                file: &self.files[fi].file,
                line,
                keep: self.opts.evidence,
                thresholds: &self.opts.thresholds,
            };
            self.rules.observe(Watch::PauseEnded, |rule| {
                rule.pause_ended(&seen, clock_ns(&end))
            });
        }
        // JDK 6-8 print a stop's collections before its stopped-time line: Parallel's young
        // collection and the full one it ran into share one stop. Their pauses wait for
        // that line (a few at most: a log without such lines holds them no longer). A
        // recording's feed closes the pauses that another stop follows.
        let waits_for_safepoint = (format == Format::Jdk8 || !self.text_log)
            && self.pending.len() < MAX_PAUSES_IN_ONE_STOP;
        if !waits_for_safepoint {
            self.flush_pending();
        }
        if self.jvm.first_pause_name.is_none() {
            self.jvm.first_pause_name = Some(pause.name.to_string());
        }
        self.jvm.told(pause.collector);
        self.jvm
            .told(pause.cause.as_deref().and_then(Collector::from_pause_cause));
        self.lost_gc = false;
        self.pending.push(Pending {
            pause: record,
            file: fi,
            line,
            ttsp_ns: None,
            stopped_ns: None,
        });
    }

    /// What a young collection of a unified log moved into the old generation, from the
    /// old generation's line of the same collection. Mixed and full collections also free
    /// old space, so their growth says nothing of promotion.
    fn promoted_by(&self, pause: &GcPause) -> Option<u64> {
        let (gc_id, change) = self.old_generation?;
        if pause.gc_id != Some(gc_id)
            || pause.upgraded_to_full
            || !pause.name.starts_with("Pause Young")
            || pause.name.contains("Mixed")
        {
            return None;
        }
        Some(match change {
            OldChange::Bytes(old) => old.after.saturating_sub(old.before),
            OldChange::Regions { before, after } => {
                after.saturating_sub(before) * self.region_size?
            }
        })
    }

    /// The heap around a collection ended at `stamp`: counted, and handed to the sink.
    #[inline(always)]
    pub(super) fn heap_sample(
        &mut self,
        stamp: &Stamp,
        heap: HeapChange,
        name: &str,
        gc_id: Option<u64>,
    ) {
        self.memory.heap(clock_ns(stamp), heap);
        if self.sink.is_some() {
            self.heap_to_sink(stamp, heap, name, gc_id);
        }
    }

    #[inline(never)]
    pub(super) fn heap_to_sink(
        &mut self,
        stamp: &Stamp,
        heap: HeapChange,
        name: &str,
        gc_id: Option<u64>,
    ) {
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.heap(&HeapSample {
                uptime_ms: stamp.uptime_ns.map(|u| u as f64 / 1e6),
                wall_ms: stamp.wall_ms.map(|w| w as f64),
                before_bytes: heap.before,
                after_bytes: heap.after,
                capacity_bytes: heap.capacity,
                name: name.to_string(),
                gc_id,
            });
        }
    }

    pub(super) fn flush_pending(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        for pp in pending.drain(..) {
            self.commit(&pp);
            pp.pause.spend(&mut self.spent);
        }
        // Kept with its capacity: a pause is pending after nearly every line that counts one.
        if self.pending.is_empty() {
            self.pending = pending;
        }
    }

    /// A pause whose CPU times and safepoint are known: counted, shown to the rules, kept
    /// among the worst and handed to the sink.
    fn commit(&mut self, pp: &Pending) {
        let p: &GcPause = &pp.pause;
        self.files[pp.file].pauses += 1;
        self.gc.record(p.duration_ns);
        let new = || Totals {
            named: NameMarks::of(&p.name),
            ..Totals::default()
        };
        let named = match self.by_name.entry(&p.name, new) {
            Some(totals) => {
                totals.add(p.duration_ns);
                totals.named
            }
            None => NameMarks::of(&p.name),
        };
        // Which marks, asked only of a pause that bears one.
        let marks = cpu_marks(p, &self.opts.thresholds)
            | if is_marked(p, named) {
                marks_of(p, named)
            } else {
                Marks::NONE
            };
        // Most pauses are shown to no rule: nothing to locate them for.
        if !marks.is_empty() || self.rules.watched(Watch::Pause) {
            let seen = Seen {
                item: p,
                start: p.start,
                file: &self.files[pp.file].file,
                line: pp.line,
                keep: self.opts.evidence,
                thresholds: &self.opts.thresholds,
            };
            self.rules.observe(Watch::Pause, |rule| rule.pause(&seen));
            if !marks.is_empty() {
                self.rules.observe_marks(marks, |rule| rule.pause(&seen));
            }
        }
        if named.full || p.upgraded_to_full {
            let cause = match &p.cause {
                Some(cause) => cause.as_ref(),
                None => upgrade_reason(p).unwrap_or(NO_CAUSE),
            };
            // Copied only for a cause not counted yet.
            if let Some(totals) = self.full_gc_causes.get_mut(cause) {
                totals.add(p.duration_ns);
            } else if self.full_gc_causes.len() < MAX_CAUSES {
                self.full_gc_causes
                    .entry(cause.to_string())
                    .or_default()
                    .add(p.duration_ns);
            }
        }
        self.keep_if_worst(pp);
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.gc_pause(&to_event(pp, &self.files[pp.file].file), &pp.pause);
        }
    }

    /// Worst pauses: a small sorted vector, cheaper than a heap at N = 10.
    fn keep_if_worst(&mut self, pp: &Pending) {
        let n = self.opts.top;
        if n == 0 {
            return;
        }
        // Most pauses are shorter than the shortest kept: told in ns, without the division.
        if self.worst_ns.len() == n
            && self
                .worst_ns
                .last()
                .is_some_and(|&floor| cannot_enter(pp.pause.duration_ns, floor))
        {
            return;
        }
        let worst_min = self.worst.last().map(|w| w.event.duration_ms);
        let ms = pp.pause.duration_ns as f64 / 1e6;
        if self.worst.len() < n || worst_min.is_some_and(|m| ms > m) {
            let w = WorstPause {
                event: to_event(pp, &self.files[pp.file].file),
                stopped_ms: pp.stopped_ns.map(|s| s as f64 / 1e6),
            };
            let at = self.worst.partition_point(|x| x.event.duration_ms >= ms);
            self.worst.insert(at, w);
            self.worst.truncate(n);
            self.worst_ns.insert(at, pp.pause.duration_ns);
            self.worst_ns.truncate(n);
        }
    }
}

/// Whether a pause of `ns` cannot replace one of `floor_ns` among the worst pauses, which
/// are compared in ms (`ns as f64 / 1e6`): that division never puts a shorter or equal
/// duration above a longer one.
#[inline]
pub(super) fn cannot_enter(ns: u64, floor_ns: u64) -> bool {
    ns <= floor_ns
}

fn to_event(pp: &Pending, file: &str) -> PauseEvent {
    let p = &pp.pause;
    PauseEvent {
        start_ms: p.start.uptime_ns.map(|u| u as f64 / 1e6),
        wall_start_ms: p.start.wall_ms.map(|w| w as f64),
        duration_ms: p.duration_ns as f64 / 1e6,
        kind: PauseKind::Gc,
        name: p.name.to_string(),
        cause: p.cause.as_deref().map(str::to_owned),
        cpu: p.cpu.map(|c| CpuTimes {
            user_ms: c.user_ns as f64 / 1e6,
            sys_ms: c.sys_ns as f64 / 1e6,
            real_ms: c.real_ns as f64 / 1e6,
        }),
        ttsp_ms: pp.ttsp_ns.map(|t| t as f64 / 1e6),
        source: Some(SourceLine {
            file: file.to_string(),
            line: pp.line,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::cannot_enter;
    use proptest::prelude::*;

    proptest! {
        /// A pause that `cannot_enter` turns away is never longer in ms, as the worst
        /// pauses are compared, than the shortest kept: durations of any size, a few ns
        /// apart (where ms may round alike).
        #[test]
        fn a_pause_turned_away_is_no_longer_in_ms(
            floor in prop_oneof![any::<u64>(), 0u64..1_000_000_000_000],
            apart in -3i64..3,
        ) {
            let ns = floor.saturating_add_signed(apart);
            if cannot_enter(ns, floor) {
                prop_assert!(ns as f64 / 1e6 <= floor as f64 / 1e6);
            }
        }
    }
}
