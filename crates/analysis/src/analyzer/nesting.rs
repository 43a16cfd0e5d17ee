//! Pauses inside pauses: Serial and Parallel upgrading a young collection to a full one
//! log the full one (`GC(2) Pause Full`) inside the young one (`GC(1) Pause Young`); it is
//! one stop of the application (docs/analyze.md, "Pauses inside pauses").

use pauselab_pause::record::{Failure, Format, GcPause, Stamp};

use crate::analyzer::clock::clock_ns;
use crate::analyzer::Analyzer;
use crate::rules::full_gc::is_full_collection;
use crate::waiting::PauseRecord;

/// A pause line whose pause began after another pause began and before it ended.
pub(super) struct NestedPause {
    /// The GC id of the pause it lies in: known from `gc,start` lines, or, in a log
    /// without them, any earlier id whose pause line follows and covers it ([`Outer::Earlier`]).
    outer: Outer,
    pub(super) pause: PauseRecord,
    line: u64,
}

/// Which pause a nested pause lies in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outer {
    /// The pause of this GC id (its start line came before the nested pause's).
    Id(u64),
    /// No start lines to tell (`-Xlog:gc` on JDK 9-11): JDK 9-11 Serial and CMS print a
    /// young collection upgraded to a full one as `GC(6) Pause Full ...` then `GC(5) Pause
    /// Young ...` at the same stamp, the outer one a little longer; so a full pause line is
    /// held until the next pause line says whether it is that shape.
    Earlier,
}

/// Stamp resolution of the coarsest unified decoration (`uptime`, `time`: milliseconds).
const STAMP_RESOLUTION_NS: u64 = 1_000_000;

/// GC ids of pauses begun and not ended, oldest first; a few at most (one pause nests in
/// another), so a start line whose pause line never comes is dropped in time.
#[derive(Default)]
pub(super) struct OpenPauses(Vec<u64>);

impl NestedPause {
    /// Whether `outer`, a pause line ending at `end`, is the pause this one lies in.
    fn lies_in(&self, outer: &GcPause, end: &Stamp) -> bool {
        match self.outer {
            Outer::Id(id) => outer.gc_id == Some(id),
            Outer::Earlier => {
                let earlier =
                    matches!((outer.gc_id, self.pause.gc_id), (Some(o), Some(i)) if o < i);
                let longer = outer.duration_ns >= self.pause.duration_ns;
                // Began no later and ended no earlier, to the stamps' resolution.
                let inner_stamp = self.pause.stamp();
                let covers = match (clock_ns(end), clock_ns(&inner_stamp)) {
                    (Some(outer_end), Some(inner_end)) => {
                        outer_end + STAMP_RESOLUTION_NS >= inner_end
                            && outer_end.saturating_sub(outer.duration_ns)
                                <= inner_end.saturating_sub(self.pause.duration_ns)
                                    + STAMP_RESOLUTION_NS
                    }
                    _ => *end == inner_stamp,
                };
                earlier && longer && covers
            }
        }
    }
}

impl OpenPauses {
    const MAX: usize = 4;

    pub(super) fn begin(&mut self, gc_id: u64) {
        if !self.0.contains(&gc_id) {
            if self.0.len() == Self::MAX {
                self.0.remove(0);
            }
            self.0.push(gc_id);
        }
    }

    /// The pause of `gc_id` ended: the pause it lies in, when one began before it and is
    /// still open.
    fn end(&mut self, gc_id: u64) -> Option<u64> {
        let at = self.0.iter().position(|&id| id == gc_id)?;
        self.0.remove(at);
        at.checked_sub(1).map(|outer| self.0[outer])
    }

    fn forget(&mut self, gc_id: u64) {
        self.0.retain(|&id| id != gc_id);
    }
}

impl Analyzer<'_> {
    /// A pause line. A pause that began after another one began and ended before it (Serial
    /// and Parallel upgrading a young collection to a full one: `GC(2) Pause Full` inside
    /// `GC(1) Pause Young`) is one stop of the application: the outer pause counts, marked
    /// as upgraded to a full collection when the nested one was full.
    pub(super) fn pause_line(&mut self, mut record: PauseRecord, line: u64) {
        let (stamp, format) = (record.stamp(), record.format());
        if let Some(nested) = self.nested.take() {
            if nested.lies_in(&record, &stamp) {
                self.forget_outer(nested.outer);
                let inner = &nested.pause;
                let pause = &mut *record;
                pause.upgraded_to_full |= inner.upgraded_to_full || is_full_collection(&inner.name);
                for failure in [
                    Failure::Evacuation,
                    Failure::ConcurrentMode,
                    Failure::Promotion,
                ] {
                    if inner.failures.has(failure) {
                        pause.failures.add(failure);
                    }
                }
                return self.count_pause_apart(record, line);
            }
            // The outer pause's line never came: the nested one was a pause of its own.
            self.forget_outer(nested.outer);
            self.count_pause_apart(nested.pause, nested.line);
        }
        let pause: &GcPause = &record;
        let outer = match pause.gc_id {
            Some(id) if self.files_pause_starts[self.files.len() - 1] => {
                self.open_pauses.end(id).map(Outer::Id)
            }
            Some(_) if format == Format::Unified && is_full_collection(&pause.name) => {
                Some(Outer::Earlier)
            }
            _ => None,
        };
        if let Some(outer) = outer {
            self.nested = Some(NestedPause {
                outer,
                pause: record,
                line,
            });
            return;
        }
        // The usual pause line, counted in place.
        self.count_pause(record, line);
    }

    fn forget_outer(&mut self, outer: Outer) {
        if let Outer::Id(id) = outer {
            self.open_pauses.forget(id);
        }
    }

    /// Counts a pause held as nested whose outer pause did not follow.
    pub(super) fn release_nested(&mut self) {
        if let Some(nested) = self.nested.take() {
            self.forget_outer(nested.outer);
            self.count_pause_apart(nested.pause, nested.line);
        }
    }
}
