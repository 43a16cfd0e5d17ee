//! `long_ttsp`: safepoints whose threads took too long to stop (time to safepoint), and,
//! without safepoint lines, HotSpot's safepoint timeout reports. The threads the reports
//! name rank the causes.

use crate::evidence::RuleTracker;
use crate::rules::causes::{rank, Candidate, JvmFlags};
use crate::rules::finding::{graded, ms, Finding};
use crate::rules::rule::{Context, Marks, PerSeries, Rule, Seen, Stop, Watch};
use crate::rules::{busy_cpu, real_gt_cpu};
use crate::timeouts::Culprit;

pub(crate) const ID: &str = "long_ttsp";
pub(crate) const WATCHES: &[Watch] = &[Watch::Safepoint];
/// Default time to safepoint above which threads were slow to stop.
pub(crate) const TTSP_NS: u64 = 50_000_000;

#[derive(Default)]
struct LongTtsp(PerSeries<RuleTracker>);

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<LongTtsp>::default()
}

impl Rule for LongTtsp {
    fn counts(&self) -> Marks {
        Marks::SLOW_TO_STOP
    }

    fn safepoint(&mut self, seen: &Seen<'_, Stop<'_>>) {
        let stop = seen.item;
        let sp = stop.safepoint;
        let Some(ttsp) = sp.ttsp_ns.filter(|&t| t > seen.thresholds.ttsp_ns) else {
            return;
        };
        self.0.get_mut(stop.series).hit(ttsp, seen.keep, || {
            let detail = format!(
                "time to safepoint {:.1} ms of {:.1} ms stopped{}",
                ttsp as f64 / 1e6,
                sp.total_ns as f64 / 1e6,
                stop.held_up_by
                    .map_or(String::new(), |t| format!("; held up by {t}"))
            );
            seen.evidence(stop.operation.to_string(), detail, ttsp)
        });
    }

    fn matched(&self, ctx: &Context<'_>) -> u64 {
        self.judged(ctx).count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let r = self.judged(ctx).fired()?;
        let title = if ctx.safepoint_count > 0 {
            format!(
                "{} of {} safepoints took more than {} to stop all threads (time to safepoint)",
                r.count,
                ctx.safepoint_count,
                ms(ctx.thresholds.ttsp_ns)
            )
        } else {
            format!(
                "{} safepoints waited longer than -XX:SafepointTimeoutDelay for threads to stop (time to safepoint; no safepoint lines to measure it)",
                r.count
            )
        };
        let mut f = Finding::tracked(ID, r, graded(r, 10, 500_000_000), title);
        f.threads = ctx.safepoint_timeouts.to_vec();
        let named = !f.threads.is_empty();
        f.confidence = if named {
            "high: HotSpot named the threads still running when -XX:SafepointTimeoutDelay passed"
        } else {
            "high that threads were slow to stop; which threads needs -XX:+SafepointTimeout"
        };
        let off_cpu = ctx.matched(real_gt_cpu::ID) + ctx.matched(busy_cpu::ID);
        let (causes, mut fixes) = rank(causes(&f.threads, off_cpu, ctx.flags), ctx.flags);
        if named || ctx.flags.has("-XX:+SafepointTimeout") {
            fixes.retain(|f| !f.starts_with("-XX:+SafepointTimeout"));
        }
        (f.causes, f.fixes) = (causes, fixes);
        Some(f)
    }
}

impl LongTtsp {
    /// The safepoints of the series the report counts; without any safepoint (a stdout
    /// capture), each timeout report is the evidence of a long time to safepoint.
    fn judged<'a>(&'a self, ctx: &Context<'a>) -> &'a RuleTracker {
        if ctx.safepoint_count == 0 {
            ctx.unmatched_timeouts
        } else {
            self.0.get(ctx.series)
        }
    }
}

/// The options that take the safepoint poll out of JIT-compiled counted loops.
const UNPOLLED_LOOPS: [&str; 2] = ["-XX:-UseCountedLoopSafepoints", "-XX:LoopStripMiningIter=0"];

/// `off_cpu`: GC pauses that were off-CPU or on a saturated CPU.
fn causes(threads: &[Culprit], off_cpu: u64, flags: &JvmFlags) -> Vec<Candidate> {
    let named = !threads.is_empty();
    let unpolled: Vec<&str> = UNPOLLED_LOOPS.into_iter().filter(|o| flags.has(o)).collect();
    let mut candidates = Vec::new();
    if !unpolled.is_empty() {
        // Set by hand, so above what the host's state suggests; a cause only when set.
        candidates.push(
            Candidate::new("the JVM's options take the safepoint poll out of counted loops: a thread in a long loop runs on while the others wait")
                .fix("drop -XX:-UseCountedLoopSafepoints and -XX:LoopStripMiningIter=0: since JDK 10 the JIT polls inside counted loops every -XX:LoopStripMiningIter iterations (1000 by default)")
                .weigh(3, format!("the JVM runs with {}", unpolled.join(" "))),
        );
    }
    candidates.extend([
        Candidate::new("long counted loops without safepoint polls (JIT-compiled int loops)")
            .fix(if named {
                "find the loop or copy the named threads run (a profiler such as async-profiler, or jcmd <pid> Thread.print during a stall) and split it or make its index a long"
            } else {
                "-XX:+SafepointTimeout -XX:SafepointTimeoutDelay=100 to name the slow threads"
            })
            .weigh_if(named, 2, || format!("HotSpot named the threads that did not stop: {}", culprit_names(threads))),
        Candidate::new("threads stalled on page faults, swap or CPU throttling while running to the safepoint")
            .fix("fix swap, THP and CPU quota on the host")
            .weigh_if(off_cpu > 0, 1, || format!("{off_cpu} GC pauses were also off-CPU or on a saturated CPU (real_gt_cpu, busy_cpu)")),
        Candidate::new("large array copies or System.arraycopy / native code without polls"),
        Candidate::new("loops of JDK 8-9 without loop strip mining")
            .fix("-XX:+UseCountedLoopSafepoints (and -XX:LoopStripMiningIter) on older JDKs")
            .option("-XX:+UseCountedLoopSafepoints"),
    ]);
    candidates
}

/// `worker-1, worker-2`: the threads a safepoint timeout report named.
fn culprit_names(threads: &[Culprit]) -> String {
    threads
        .iter()
        .take(3)
        .map(|c| c.thread.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
