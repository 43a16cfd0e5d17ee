//! `stopped_gt_gc`: safepoints that kept the application stopped well beyond the GC inside
//! them and the time to reach them. The VM operations that ran in those stops rank the
//! causes.

use pauselab_pause::record::GcPause;
use pauselab_pause::is_gc_operation;

use crate::evidence::RuleTracker;
use crate::terminal::dur;
use crate::rules::causes::Candidate;
use crate::rules::finding::{ms, Finding};
use crate::rules::rule::{Context, Marks, Rule, Seen, Series, Stop, Watch};

pub(crate) const ID: &str = "stopped_gt_gc";
pub(crate) const WATCHES: &[Watch] = &[Watch::Safepoint];
/// Default margin of the stopped time over the GC and the time to safepoint.
pub(crate) const STOPPED_EXCESS_NS: u64 = 50_000_000;
/// Distinct VM operations kept.
const MAX_OPERATIONS: usize = 32;

/// Only safepoint lines are judged: the JDK 8 statistics table does not say which pauses
/// ran in a stop.
#[derive(Default)]
struct StoppedGtGc {
    tracker: RuleTracker,
    /// VM operations that were not a collection and ran in a matched stop, with how many
    /// stops each.
    operations: Vec<(String, u64)>,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<StoppedGtGc>::default()
}

impl Rule for StoppedGtGc {
    fn counts(&self) -> Marks {
        Marks::GC_IN_STOP
    }

    fn safepoint(&mut self, seen: &Seen<'_, Stop<'_>>) {
        let stop = seen.item;
        if stop.series != Series::Lines || stop.pauses.is_empty() {
            return;
        }
        let sp = stop.safepoint;
        let gc_ns: u64 = stop.pauses.iter().map(|p| p.duration_ns).sum();
        // Time to safepoint is spent before the stop's work (long_ttsp reports it).
        let ttsp_ns = sp.ttsp_ns.unwrap_or(0);
        let excess = sp.total_ns.saturating_sub(gc_ns).saturating_sub(ttsp_ns);
        let at_safepoint = sp.total_ns.saturating_sub(ttsp_ns);
        if excess <= seen.thresholds.stopped_excess_ns || at_safepoint < gc_ns + gc_ns / 2 {
            return;
        }
        let operation = operation_of(stop);
        if let Some(op) = &operation {
            self.count_operation(op);
        }
        self.tracker.hit(excess, seen.keep, || {
            let what = stop
                .pauses
                .iter()
                .map(|p| p.name.as_ref())
                .collect::<Vec<_>>()
                .join(" + ");
            let ttsp = if ttsp_ns > 0 {
                format!(", time to safepoint {}", dur(ttsp_ns as f64 / 1e6))
            } else {
                String::new()
            };
            let op = operation
                .as_ref()
                .map_or(String::new(), |op| format!(", in VM operation {op}"));
            let detail = format!(
                "stopped {}, GC {}{ttsp}: {} outside the collector{op}",
                dur(sp.total_ns as f64 / 1e6),
                dur(gc_ns as f64 / 1e6),
                dur(excess as f64 / 1e6)
            );
            seen.evidence(what, detail, excess)
        });
    }

    fn matched(&self, ctx: &Context<'_>) -> u64 {
        self.judged(ctx).map_or(0, |r| r.count)
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let r = self.judged(ctx).filter(|r| r.count > 0)?;
        let title = format!(
            "{} safepoints stopped the application at least {} longer than the GC inside them and the time to reach them",
            r.count,
            ms(ctx.thresholds.stopped_excess_ns)
        );
        let confidence = "high: the time was spent at the safepoint, after its threads had stopped, but not in the collector";
        Some(Finding::of_stall(ID, r, title, confidence, self.causes(), ctx.flags))
    }
}

/// The stop's own operation when it is not a collection (a heap dump collects first:
/// `HeapDumper`, cause `Heap Dump Initiated GC`).
fn operation_of(stop: &Stop<'_>) -> Option<String> {
    stop.safepoint
        .operation
        .as_deref()
        .filter(|op| !is_gc_operation(op))
        .map(str::to_string)
        .or_else(|| {
            stop.pauses
                .iter()
                .find_map(|p: &GcPause| p.cause.as_deref().and_then(operation_of_cause))
                .map(str::to_string)
        })
}

/// The VM operation a collection's cause says it ran in, when that is not a collection.
fn operation_of_cause(cause: &str) -> Option<&'static str> {
    match cause {
        "Heap Dump Initiated GC" => Some("HeapDumper"),
        "Heap Inspection Initiated GC" => Some("HeapInspection"),
        _ => None,
    }
}

impl StoppedGtGc {
    /// What the finding is about: the stops of safepoint lines, when the report counts
    /// those.
    fn judged(&self, ctx: &Context<'_>) -> Option<&RuleTracker> {
        (ctx.series == Series::Lines).then_some(&self.tracker)
    }

    /// A matched stop that ran the non-GC VM operation `op`.
    fn count_operation(&mut self, op: &str) {
        match self.operations.iter().position(|(o, _)| o == op) {
            Some(at) => self.operations[at].1 += 1,
            None if self.operations.len() < MAX_OPERATIONS => {
                self.operations.push((op.to_string(), 1));
            }
            None => {}
        }
    }

    /// A VM operation that ran in the stops, else the log write, hsperf and safepoint
    /// cleanup.
    fn causes(&self) -> Vec<Candidate> {
        let ops = &self.operations;
        let named = |kinds: &[&str]| -> Option<String> {
            let hits: Vec<String> = ops
                .iter()
                .filter(|(op, _)| kinds.iter().any(|k| op.contains(k)))
                .map(|(op, n)| format!("{op} x{n}"))
                .collect();
            (!hits.is_empty())
                .then(|| format!("the stops ran the VM operation {}", hits.join(", ")))
        };
        let op = |cause: &'static str, fix: &'static str, kinds: &[&str]| {
            let c = Candidate::new(cause).fix(fix);
            match named(kinds) {
                Some(e) => c.weigh(3, e),
                None => c,
            }
        };
        let mut other_op = Candidate::new("another VM operation ran in the same stop as the GC")
            .fix("-Xlog:safepoint (JDK 17+) names each stop's operation");
        if !ops.is_empty() {
            let listed: Vec<String> = ops.iter().map(|(op, n)| format!("{op} x{n}")).collect();
            other_op = other_op.weigh(
                2,
                format!("the stops ran the VM operation {}", listed.join(", ")),
            );
        }
        vec![
            op(
                "a heap dump or heap inspection (jmap, jcmd GC.heap_dump or GC.class_histogram, -XX:+HeapDumpOnOutOfMemoryError) ran in the stop",
                "find who dumps or inspects the heap of this JVM in production; dump to a fast local disk",
                &["HeapDump", "HeapInspection", "HeapIterate"],
            ),
            op(
                "a thread dump (jstack, jcmd Thread.print) ran in the stop",
                "find who takes thread dumps of this JVM",
                &["ThreadDump", "PrintThreads", "FindDeadlocks"],
            ),
            op(
                "class redefinition (a Java agent) ran in the stop",
                "find the agent redefining classes (-Xlog:redefine+class)",
                &["Redefine"],
            ),
            op(
                "deoptimization or biased-lock revocation ran in the stop",
                "-Xlog:deoptimization shows what is deoptimized; -XX:-UseBiasedLocking on JDK 8-14",
                &["Deoptimize", "RevokeBias", "BiasedLocking"],
            ),
            other_op,
            Candidate::new("a blocking write() of the GC log line at the end of the pause (busy or slow disk)")
                .fix("-Xlog:async (JDK 17+), GC log on tmpfs or a dedicated disk")
                .option("-Xlog:async"),
            Candidate::new("hsperf counter updates stalled on mmap writeback")
                .fix("-XX:+PerfDisableSharedMem")
                .option("-XX:+PerfDisableSharedMem"),
            Candidate::new("slow safepoint cleanup (large code cache, many monitors)"),
        ]
    }
}
