//! `non_gc_safepoints`: stops that were VM operations, not collections (bias revocation,
//! deoptimization, thread and heap dumps, cleanup), invisible in GC pause statistics. The
//! operations the log names rank the causes.

use crate::evidence::RuleTracker;
use crate::rules::causes::{rank, Candidate};
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, PerSeries, Rule, Seen, Stop};

pub(crate) const ID: &str = "non_gc_safepoints";
/// Default length from which a non-GC safepoint is listed as evidence.
pub(crate) const NON_GC_NS: u64 = 10_000_000;

/// The long ones, per series; the finding counts every non-GC safepoint.
#[derive(Default)]
struct NonGcSafepoints(PerSeries<RuleTracker>);

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<NonGcSafepoints>::default()
}

impl Rule for NonGcSafepoints {
    fn safepoint(&mut self, seen: &Seen<'_, Stop<'_>>) {
        let stop = seen.item;
        let total_ns = stop.safepoint.total_ns;
        if !stop.is_gc && total_ns >= seen.thresholds.non_gc_ns {
            self.0.get_mut(stop.series).hit(total_ns, seen.keep, || {
                let detail = format!("stopped {:.1} ms without a GC", total_ns as f64 / 1e6);
                seen.evidence(stop.operation.to_string(), detail, total_ns)
            });
        }
    }

    fn matched(&self, ctx: &Context<'_>) -> u64 {
        ctx.non_gc_count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        if ctx.non_gc_count == 0 {
            return None;
        }
        let r = self.0.get(ctx.series);
        let share = if ctx.covered_ns > 0 {
            ctx.non_gc_total_ns as f64 / ctx.covered_ns as f64
        } else {
            0.0
        };
        let severity = if r.count > 0 && (r.max_excess_ns >= 100_000_000 || share >= 0.01) {
            Severity::Warning
        } else {
            Severity::Info
        };
        let ops = ctx
            .top_non_gc_operations
            .iter()
            .map(|(name, count, total_ms)| format!("{name} x{count} ({total_ms:.1} ms)"))
            .collect::<Vec<_>>()
            .join(", ");
        let title = format!(
            "{} safepoints were not GCs, {:.1} ms in total: {ops}",
            ctx.non_gc_count,
            ctx.non_gc_total_ns as f64 / 1e6
        );
        let mut f = Finding::tracked(ID, r, severity, title);
        // The finding counts every non-GC safepoint and their time, as its title does;
        // evidence lists the long ones.
        f.count = ctx.non_gc_count;
        f.excess_total_ms = ctx.non_gc_total_ns as f64 / 1e6;
        f.confidence = "high: these stops are VM operations, invisible in GC pause statistics";
        (f.causes, f.fixes) = rank(causes(ctx), ctx.flags);
        Some(f)
    }
}

/// Each cause weighed by the operations of its kind the log names.
fn causes(ctx: &Context<'_>) -> Vec<Candidate> {
    let seen = |names: &[&str]| -> Option<String> {
        let hits: Vec<String> = ctx
            .top_non_gc_operations
            .iter()
            .filter(|(op, _, _)| names.iter().any(|n| op.contains(n)))
            .map(|(op, count, total_ms)| format!("{op} x{count} ({total_ms:.1} ms)"))
            .collect();
        (!hits.is_empty()).then(|| format!("the log names {}", hits.join(", ")))
    };
    let weighed = |c: Candidate, names: &[&str]| match seen(names) {
        Some(e) => c.weigh(1, e),
        None => c,
    };
    vec![
        weighed(
            Candidate::new("biased-lock revocation (RevokeBias, BulkRevokeBias: JDK 8-14)")
                .fix("-XX:-UseBiasedLocking on JDK 8-14")
                .option("-XX:-UseBiasedLocking"),
            &["RevokeBias", "BiasedLocking"],
        ),
        weighed(
            Candidate::new("deoptimization or class redefinition (agents)")
                .fix("find the agent redefining classes, or the code deoptimized over and over (-Xlog:deoptimization)"),
            &["Deoptimize", "Redefine", "ClassesRedefine", "HandshakeAllThreads"],
        ),
        weighed(
            Candidate::new("thread dumps (jstack, jcmd Thread.print) and heap dumps or inspection (jmap, jcmd GC.heap_dump, GC.class_histogram)")
                .fix("find who runs thread dumps, heap dumps or histograms in production"),
            &["ThreadDump", "PrintThreads", "FindDeadlocks", "HeapDumper", "HeapInspection", "HeapIterateOperation"],
        ),
        weighed(
            Candidate::new("periodic cleanup safepoints (GuaranteedSafepointInterval)"),
            &["Cleanup", "no vm operation", "None"],
        ),
        Candidate::new("operations the log does not name").fix("-Xlog:safepoint (JDK 17+) names each operation"),
    ]
}
