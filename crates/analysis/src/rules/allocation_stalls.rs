//! `allocation_stalls`: ZGC threads that waited for memory (`Allocation Stall`), which no
//! pause statistic shows.
//!
//! A JDK 11 recording holds no `jdk.ZAllocationStall` event: there, the ZGC cycles whose
//! cause is `Allocation Stall` tell that threads stalled, not how many nor how long.

use pauselab_pause::record::{GcPause, Stall, StallKind};

use crate::evidence::RuleTracker;
use crate::rules::causes::listed;
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Marks, Rule, Seen, Watch};

pub(crate) const ID: &str = "allocation_stalls";
pub(crate) const WATCHES: &[Watch] = &[Watch::MarkedPause, Watch::Stall];
/// Default length from which a stall is listed as evidence.
pub(crate) const ALLOC_STALL_NS: u64 = 10_000_000;

/// The cause ZGC gives a cycle that threads stalled waiting for.
pub(crate) const STALL_CAUSE: &str = "Allocation Stall";

/// The long stalls; the finding counts every one (the report's `allocation_stalls`).
/// `stalled_cycles`: the ZGC cycles started by a stall, for an input that records no stall.
#[derive(Default)]
struct AllocationStalls {
    stalls: RuleTracker,
    stalled_cycles: RuleTracker,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<AllocationStalls>::default()
}

impl Rule for AllocationStalls {
    fn counts(&self) -> Marks {
        Marks::STALL_CAUSE
    }

    fn stall(&mut self, seen: &Seen<'_, Stall>) {
        let stall = seen.item;
        if stall.kind == StallKind::Allocation && stall.duration_ns >= seen.thresholds.alloc_stall_ns
        {
            self.stalls.hit(stall.duration_ns, seen.keep, || {
                seen.evidence(
                    format!("Allocation Stall ({})", stall.thread),
                    format!(
                        "thread waited {:.1} ms for memory",
                        stall.duration_ns as f64 / 1e6
                    ),
                    stall.duration_ns,
                )
            });
        }
    }

    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let pause = seen.item;
        // A cycle's first pause (`Pause Mark Start`, generational ZGC's `y: ` / `Y: ` and
        // `(Major)` too): one per cycle.
        if pause.cause.as_deref() == Some(STALL_CAUSE) && pause.name.contains("Pause Mark Start") {
            self.stalled_cycles.hit(0, seen.keep, || {
                seen.evidence(
                    format!("{} ({STALL_CAUSE})", pause.name),
                    "ZGC started this cycle for threads stalled waiting for memory".to_string(),
                    0,
                )
            });
        }
    }

    fn matched(&self, ctx: &Context<'_>) -> u64 {
        match ctx.allocation_stalls.0 {
            0 => self.stalled_cycles.count,
            stalls => stalls,
        }
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let (count, total_ms, max_ms) = ctx.allocation_stalls;
        if count == 0 {
            return self.stalled_cycles_finding(ctx);
        }
        let severity = if max_ms >= 100.0 || count >= 100 {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let title = format!(
            "{count} ZGC allocation stalls, {:.1} s in total, longest {max_ms:.1} ms: threads waited for memory (not in the pause statistics)",
            total_ms / 1000.0
        );
        let mut f = Finding::tracked(ID, &self.stalls, severity, title);
        f.count = count;
        f.excess_total_ms = total_ms;
        f.confidence = "high: ZGC logs every stalled allocation with its thread and duration";
        advise(&mut f, ctx);
        Some(f)
    }
}

impl AllocationStalls {
    /// Stalls known only by the cycles they started (a JDK 11 recording).
    fn stalled_cycles_finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let cycles = self.stalled_cycles.count;
        if cycles == 0 {
            return None;
        }
        let severity = if cycles >= 100 {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let title = format!(
            "{cycles} ZGC cycles were started by allocation stalls: threads waited for memory; the input records no stall itself (JDK 11's recordings have no jdk.ZAllocationStall event), so how many and how long is not known (the GC log's `Allocation Stall` lines tell)"
        );
        let mut f = Finding::tracked(ID, &self.stalled_cycles, severity, title);
        f.confidence = "medium: ZGC gives a cycle the cause `Allocation Stall` when threads stalled; their waits are not recorded";
        advise(&mut f, ctx);
        Some(f)
    }
}

/// The causes and fixes of allocation stalls.
fn advise(f: &mut Finding, ctx: &Context<'_>) {
    f.causes = listed(&[
        "the heap is too small for the allocation rate: collections could not free memory in time",
        "too few concurrent GC threads for the allocation rate",
    ]);
    f.fixes = vec![
        "raise -Xmx (ZGC needs headroom: it collects while the application allocates)",
        if ctx.generational_zgc {
            "-XX:ConcGCThreads higher"
        } else {
            "-XX:ConcGCThreads higher; on JDK 21-22 use generational ZGC (-XX:+ZGenerational)"
        },
        "lower the allocation rate (async-profiler -e alloc)",
    ];
}
