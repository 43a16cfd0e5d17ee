//! `non_gc_safepoints`: stops that were VM operations, not collections (bias revocation,
//! deoptimization, thread and heap dumps, cleanup), invisible in GC pause statistics. The
//! operations the log names rank the causes.

use crate::evidence::RuleTracker;
use crate::rules::causes::{rank, Candidate};
use crate::rules::finding::{Finding, Severity};
use crate::rules::rule::{Context, Marks, PerSeries, Rule, Seen, Stop, Watch};

pub(crate) const ID: &str = "non_gc_safepoints";
pub(crate) const WATCHES: &[Watch] = &[Watch::Safepoint];
/// Default length from which a non-GC safepoint is listed as evidence.
pub(crate) const NON_GC_NS: u64 = 10_000_000;

/// The long ones, per series; the finding counts every non-GC safepoint.
#[derive(Default)]
struct NonGcSafepoints {
    long: PerSeries<RuleTracker>,
    /// How much of every non-GC stop was spent reaching the safepoint, per series.
    reaching_ns: PerSeries<u128>,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<NonGcSafepoints>::default()
}

impl Rule for NonGcSafepoints {
    fn counts(&self) -> Marks {
        Marks::NOT_GC
    }

    fn safepoint(&mut self, seen: &Seen<'_, Stop<'_>>) {
        let stop = seen.item;
        let total_ns = stop.safepoint.total_ns;
        if stop.is_gc {
            return;
        }
        let ttsp_ns = stop.safepoint.ttsp_ns;
        *self.reaching_ns.get_mut(stop.series) += u128::from(ttsp_ns.unwrap_or(0));
        if total_ns >= seen.thresholds.non_gc_ns {
            self.long.get_mut(stop.series).hit(total_ns, seen.keep, || {
                let mut detail = format!("stopped {:.1} ms without a GC", total_ns as f64 / 1e6);
                if let Some(t) = ttsp_ns.filter(|&t| t > 0) {
                    detail += &format!(", {:.1} ms of it reaching the safepoint", t as f64 / 1e6);
                }
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
        let r = self.long.get(ctx.series);
        let share = if ctx.covered_ns > 0 {
            ctx.non_gc_total_ns as f64 / ctx.covered_ns as f64
        } else {
            0.0
        };
        let severity = if (r.count > 0 && r.max_excess_ns >= 100_000_000) || share >= 0.01 {
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
        let reaching_ns = *self.reaching_ns.get(ctx.series);
        (f.causes, f.fixes) = rank(causes(ctx, reaching_ns), ctx.flags);
        Some(f)
    }
}

/// Each cause weighed by the operations of its kind the log names; the time to safepoint
/// above them when it was most of the stops' time (`reaching_ns` of the non-GC total).
fn causes(ctx: &Context<'_>, reaching_ns: u128) -> Vec<Candidate> {
    let seen = |names: &[&str]| -> Option<String> {
        let hits: Vec<String> = ctx
            .top_non_gc_operations
            .iter()
            .filter(|(op, _, _)| names.iter().any(|n| op.contains(n)))
            .map(|(op, count, total_ms)| format!("{op} x{count} ({total_ms:.1} ms)"))
            .collect();
        (!hits.is_empty()).then(|| format!("the log names {}", hits.join(", ")))
    };
    let total_ms = ctx.non_gc_total_ns as f64 / 1e6;
    // A cause weighs by the share of the stops' time its operations took: one RevokeBias
    // of 0.1 ms does not outrank 769 thread dumps.
    let share_weight = |ms: f64| 1 + (100.0 * ms / total_ms.max(f64::MIN_POSITIVE)).min(100.0) as u32;
    let weighed = |c: Candidate, names: &[&str]| match seen(names) {
        Some(e) => {
            let ms: f64 = ctx
                .top_non_gc_operations
                .iter()
                .filter(|(op, _, _)| names.iter().any(|n| op.contains(n)))
                .map(|(_, _, ms)| ms)
                .sum();
            c.weigh(share_weight(ms), e)
        }
        None => c,
    };
    let reaching_ms = reaching_ns as f64 / 1e6;
    let mostly_reaching =
        reaching_ns * 2 >= ctx.non_gc_total_ns && reaching_ns >= u128::from(ctx.thresholds.ttsp_ns);
    // Named when an operation is not: "(not a GC)" stands for a stop the input does not name.
    let unnamed = ctx
        .top_non_gc_operations
        .iter()
        .any(|(op, _, _)| op.starts_with('('));
    let mut candidates = vec![
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
            Candidate::new("the flight recorder's own stops: its checkpoints and old-object samples (JFRCheckpoint, JFRSafepointWrite, JFROldObject) and the periodic events that stop the JVM (jdk.ClassLoaderStatistics: ClassLoaderStatsOperation; jdk.ThreadDump: PrintThreads, PrintJNI, FindDeadlocks)")
                .fix("where these stops matter, record jdk.ThreadDump and jdk.ClassLoaderStatistics less often or not at all (a .jfc file, or -XX:StartFlightRecording:...,jdk.ThreadDump#enabled=false on JDK 17+)"),
            &["JFR", "ClassLoaderStatsOperation"],
        ),
        weighed(
            // After a concurrent cycle unloaded classes (ZGC, Shenandoah): the collector's own
            // work, though not one of its pauses.
            Candidate::new("the collector's cleanup of class metadata after a concurrent cycle unloaded classes (CleanClassLoaderDataMetaspaces)")
                .fix("nothing to do while these stay short; many of them point at classes loaded and unloaded over and over (-Xlog:class+unload)"),
            &["CleanClassLoaderDataMetaspaces"],
        ),
        weighed(
            Candidate::new("periodic cleanup safepoints (GuaranteedSafepointInterval)"),
            &["Cleanup", "no vm operation", "None"],
        ),
        // A stop is as long as its slowest thread takes to reach it, whatever the operation;
        // judged from the time that makes `long_ttsp` fire.
        Candidate::new("threads slow to reach the safepoint: the operations were short, the wait for the last thread long (long_ttsp)")
            .weigh_if(mostly_reaching, share_weight(reaching_ms), || {
                format!("{reaching_ms:.1} ms of the {total_ms:.1} ms were time to safepoint")
            }),
    ];
    // Biased locking is off from JDK 15 and gone from JDK 18: a cause only where the log
    // names its operations or an older JDK may run it.
    if ctx.jdk_feature.is_some_and(|f| f >= 15) {
        candidates.retain(|c| c.option != Some("-XX:-UseBiasedLocking") || c.weight > 0);
    }
    // Only JDK 10-13 have the operation: a cause where the log names it.
    let handshakes = &["HandshakeFallback"];
    if seen(handshakes).is_some() {
        candidates.push(weighed(
            // They run a handshake as a stop of every thread when thread-local handshakes
            // are off, which JDK 11 does for Shenandoah (it warns that turning them on is
            // not safe there); its marking cycles hand out one each.
            Candidate::new("handshakes run as stops of every thread, thread-local handshakes being off (HandshakeFallback: JDK 10-13 with -XX:-ThreadLocalHandshakes, the default for Shenandoah on JDK 11, one each marking cycle)")
                .fix("JDK 17 or later, where a handshake stops one thread at a time (on JDK 11, Shenandoah warns that -XX:+ThreadLocalHandshakes is not safe with it)"),
            handshakes,
        ));
    }
    if unnamed {
        candidates.push(
            Candidate::new("operations the log does not name")
                .fix("-Xlog:safepoint (JDK 17+) names each operation"),
        );
    }
    candidates
}
