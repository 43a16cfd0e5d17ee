//! Safepoints: counted per series and per VM operation, shown to the rules, and closing the
//! GC pauses that ran in them.

use pauselab_pause::record::Safepoint;
use pauselab_pause::{is_gc_operation, Collector};
use pauselab_pause::{DurationStats, PauseEvent, PauseKind, SourceLine};

use crate::analyzer::Analyzer;
use crate::rules::marks::stop_marks;
use crate::rules::rule::{Seen, Series, Stop};
use crate::totals::{Totals, TotalsByName};
use crate::waiting::StopPauses;

/// Distinct VM operations kept.
const MAX_OPERATIONS: usize = 1000;

/// Safepoints from one kind of line (stopped-time / `Safepoint "..."` lines, or the JDK 8
/// safepoint statistics table); both describe the same stops, so they are never added up.
pub(super) struct SafepointSeries {
    pub(super) stats: DurationStats,
    pub(super) ttsp: DurationStats,
    pub(super) non_gc: Totals,
    pub(super) operations: TotalsByName,
}

impl Default for SafepointSeries {
    fn default() -> Self {
        SafepointSeries {
            stats: DurationStats::default(),
            ttsp: DurationStats::default(),
            non_gc: Totals::default(),
            operations: TotalsByName::new(MAX_OPERATIONS),
        }
    }
}

impl Analyzer<'_> {
    /// `held_up_by`: the threads a safepoint timeout report named for this safepoint.
    pub(super) fn safepoint(
        &mut self,
        sp: Safepoint,
        fi: usize,
        line: u64,
        series: Series,
        held_up_by: Option<String>,
    ) {
        let statistics = series == Series::Statistics;
        // The pauses waiting for their safepoint ran in this one (safepoint lines only).
        let pauses = StopPauses::of(if statistics { &[] } else { &self.pending });
        let had_gc = !pauses.is_empty() || (self.lost_gc && !statistics);
        let is_gc = match &sp.operation {
            Some(op) => is_gc_operation(op) || had_gc,
            None => had_gc,
        };
        if let Some(op) = &sp.operation {
            self.jvm.told(Collector::from_vm_operation(op));
        }
        // JDK 11 to 16 run several operations in one safepoint: a `ThreadDump` that a
        // collection joined is a GC's stop, counted apart from the thread dumps without one.
        let joined;
        let operation = match &sp.operation {
            Some(op) if had_gc && !is_gc_operation(op) => {
                joined = format!("{op} + GC");
                joined.as_str()
            }
            Some(op) => op.as_ref(),
            None if is_gc => "GC",
            None => "(not a GC)",
        };
        let counted = match series {
            Series::Lines => &mut self.safepoint_lines,
            Series::Statistics => &mut self.safepoint_statistics,
        };
        count_safepoint(counted, &sp, operation, is_gc);
        let stop = Stop {
            safepoint: &sp,
            operation,
            is_gc,
            series,
            held_up_by: held_up_by.as_deref(),
            pauses,
        };
        // Most stops are a GC's, quick to reach: shown to no rule.
        let marks = stop_marks(&stop, &self.opts.thresholds);
        if !marks.is_empty() {
            let seen = Seen {
                item: &stop,
                start: sp.start,
                file: &self.files[fi].file,
                line,
                keep: self.opts.evidence,
                thresholds: &self.opts.thresholds,
            };
            self.rules
                .observe_marks(marks, |rule| rule.safepoint(&seen));
        }
        if let Some(sink) = self.sink.as_deref_mut() {
            let event = PauseEvent {
                start_ms: sp.start.uptime_ns.map(|u| u as f64 / 1e6),
                wall_start_ms: sp.start.wall_ms.map(|w| w as f64),
                duration_ms: sp.total_ns as f64 / 1e6,
                kind: PauseKind::Safepoint,
                name: operation.to_string(),
                cause: None,
                cpu: None,
                ttsp_ms: sp.ttsp_ns.map(|t| t as f64 / 1e6),
                source: Some(SourceLine {
                    file: self.files[fi].file.clone(),
                    line,
                }),
            };
            sink.safepoint(&event, statistics);
        }
        if !statistics {
            self.lost_gc = false;
        }
        if had_gc {
            for pp in &mut self.pending {
                pp.ttsp_ns = sp.ttsp_ns;
                pp.stopped_ns = Some(sp.total_ns);
            }
            self.flush_pending();
        }
    }
}

/// The safepoint's time, its time to safepoint and its VM operation in `series`.
#[inline]
fn count_safepoint(series: &mut SafepointSeries, sp: &Safepoint, operation: &str, is_gc: bool) {
    series.stats.record(sp.total_ns);
    if let Some(ttsp) = sp.ttsp_ns {
        series.ttsp.record(ttsp);
    }
    let new = || Totals {
        gc: Some(is_gc),
        ..Totals::default()
    };
    if let Some(totals) = series.operations.entry(operation, new) {
        totals.add(sp.total_ns);
    }
    if !is_gc {
        series.non_gc.add(sp.total_ns);
    }
}
