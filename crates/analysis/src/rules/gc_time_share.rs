//! `gc_time_share`: the collector costs too much: pauses take a large share of the time the
//! log covers, overall or in its worst minute (localized throughput).

use crate::rules::causes::{rank, Candidate};
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Rule, Watch};
use crate::rules::{evacuation_failure, full_gc};

pub(crate) const ID: &str = "gc_time_share";
/// Judged from the analysis' totals alone: it watches nothing.
pub(crate) const WATCHES: &[Watch] = &[];
/// Default share of the covered time in pauses, %.
pub(crate) const GC_SHARE_PCT: f64 = 10.0;
/// Default share of the worst 1-minute window, %.
pub(crate) const WINDOW_SHARE_PCT: f64 = 25.0;
/// Default shortest log judged: the smallest window.
pub(crate) const MIN_SHARE_SPAN_NS: u64 = 60_000_000_000;
/// A shorter log is judged when it holds this many pauses: the share is then measured
/// over as many stretches of running time, not one pause and little else (a 14 s run
/// with 45 collections taking 80 % of it).
const MIN_SHARE_PAUSES: u64 = 20;

/// Judged from the analysis' totals alone.
struct GcTimeShare;

pub(crate) fn start() -> Box<dyn Rule> {
    Box::new(GcTimeShare)
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part * 100.0 / whole
    } else {
        0.0
    }
}

impl Rule for GcTimeShare {
    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let t = ctx.thresholds;
        let pause_ms = ctx.pause_total_ns as f64 / 1e6;
        // Pauses that overlap in the log (two JVMs in one file) could add up to more.
        let share = pct(ctx.pause_total_ns as f64, ctx.covered_ns as f64).min(100.0);
        let worst_minute = ctx.worst_windows.iter().find(|w| w.window_s == 60);
        let window_hit = worst_minute.filter(|w| w.share_pct >= t.window_share_pct);
        let long_enough = ctx.covered_ns >= t.min_share_span_ns.max(1)
            || (ctx.pause_count >= MIN_SHARE_PAUSES && ctx.covered_ns > 0);
        if !long_enough || (share < t.gc_share_pct && window_hit.is_none()) {
            return None;
        }
        let windows = ctx
            .worst_windows
            .iter()
            .map(|w| {
                format!(
                    "worst {} min {:.1}% ({:.1} s of pauses from {:.0} s)",
                    w.window_s / 60,
                    w.share_pct,
                    w.pause_ms / 1000.0,
                    w.start_s
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let critical = share >= 2.0 * t.gc_share_pct
            || worst_minute.is_some_and(|w| w.share_pct >= 2.0 * t.window_share_pct);
        Some(Finding {
            rule: ID,
            severity: if critical {
                Severity::Critical
            } else {
                Severity::Warning
            },
            title: format!(
                "GC pauses took {share:.1}% of the {:.0} s the log covers ({:.1} s){}{windows}",
                ctx.covered_ns as f64 / 1e9,
                pause_ms / 1000.0,
                if windows.is_empty() { "" } else { "; " }
            ),
            count: ctx.pause_count,
            excess_total_ms: pause_ms,
            confidence: "high: the sum of the pause lines over the time the log covers",
            evidence: Vec::new(),
            causes: rank(causes(ctx), ctx.flags).0,
            fixes: vec![
                "raise -Xmx (and -Xms with it), or lower the live set",
                "find the allocation hot spots (async-profiler -e alloc, JFR ObjectAllocationSample)",
                "consider a concurrent collector (G1 tuned, ZGC, Shenandoah) for large heaps",
            ],
            threads: Vec::new(),
        })
    }
}

fn causes(ctx: &Context<'_>) -> Vec<Candidate> {
    let (full, failed) = (
        ctx.matched(full_gc::ID),
        ctx.matched(evacuation_failure::ID),
    );
    vec![
        Candidate::new("the heap is too small for the live data and the allocation rate: collections run back to back"),
        Candidate::new("a burst of allocation (a batch job, a cache reload) in the worst window"),
        Candidate::new("full collections (see full_gc) or failed evacuations").weigh_if(
            full + failed > 0,
            1,
            || format!("{full} full collections, {failed} failed evacuations in the log"),
        ),
    ]
}
