//! `allocation_stalls`: ZGC threads that waited for memory (`Allocation Stall`), which no
//! pause statistic shows.

use pauselab_pause::record::{Stall, StallKind};

use crate::evidence::RuleTracker;
use crate::rules::causes::listed;
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Rule, Seen};

pub(crate) const ID: &str = "allocation_stalls";
/// Default length from which a stall is listed as evidence.
pub(crate) const ALLOC_STALL_NS: u64 = 10_000_000;

/// The long stalls; the finding counts every one (the report's `allocation_stalls`).
#[derive(Default)]
struct AllocationStalls(RuleTracker);

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<AllocationStalls>::default()
}

impl Rule for AllocationStalls {
    fn stall(&mut self, seen: &Seen<'_, Stall>) {
        let stall = seen.item;
        if stall.kind == StallKind::Allocation && stall.duration_ns >= seen.thresholds.alloc_stall_ns
        {
            self.0.hit(stall.duration_ns, seen.keep, || {
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

    fn matched(&self, ctx: &Context<'_>) -> u64 {
        ctx.allocation_stalls.0
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let (count, total_ms, max_ms) = ctx.allocation_stalls;
        if count == 0 {
            return None;
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
        let mut f = Finding::tracked(ID, &self.0, severity, title);
        f.count = count;
        f.excess_total_ms = total_ms;
        f.confidence = "high: ZGC logs every stalled allocation with its thread and duration";
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
        Some(f)
    }
}
