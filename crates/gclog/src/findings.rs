//! Diagnosis rules over pauses and safepoints. Each rule keeps a count and its strongest
//! evidence while the log streams by, and turns into a [`Finding`] with causes and fixes.
//!
//! Every rule has an absolute margin: JDK 8 and `gc+cpu` round CPU times to 10 ms, so a
//! relative rule alone fires on healthy logs (`user=0.00 sys=0.00, real=0.01`).

use serde::Serialize;

pub use crate::evidence::{Evidence, RuleTracker};
use crate::timeouts::Culprit;

mod busy_cpu;
mod causes;
mod gc_health;

use causes::{rank, Candidate};
pub use causes::{Cause, JvmFlags};

/// Margins the rules use; the defaults are documented in docs/analyze.md.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// real - (user + sys) above which a pause was off-CPU for a significant time.
    pub off_cpu_ns: u64,
    /// sys above which "sys > user" is worth reporting.
    pub sys_ns: u64,
    /// stopped - GC above which the JVM stayed stopped after (or before) its GC.
    pub stopped_excess_ns: u64,
    /// Time to safepoint above which threads were slow to stop.
    pub ttsp_ns: u64,
    /// A non-GC safepoint at least this long is listed as evidence.
    pub non_gc_ns: u64,
    /// Share of the covered time in GC pauses above which the collector costs too much, %.
    pub gc_share_pct: f64,
    /// The same, over the worst 1-minute window (localized throughput), %.
    pub window_share_pct: f64,
    /// The share of time in pauses is judged only over a log that covers at least this
    /// long (the smallest window): a log of one pause and little else tells nothing of it.
    pub min_share_span_ns: u64,
    /// A ZGC allocation stall at least this long is listed as evidence.
    pub alloc_stall_ns: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            off_cpu_ns: 50_000_000,
            sys_ns: 50_000_000,
            stopped_excess_ns: 50_000_000,
            ttsp_ns: 50_000_000,
            non_gc_ns: 10_000_000,
            gc_share_pct: 10.0,
            window_share_pct: 25.0,
            min_share_span_ns: 60_000_000_000,
            alloc_stall_ns: 10_000_000,
        }
    }
}

/// The scale shared with `doctor`'s host checks (a log finding is never `Ok`).
pub use pauselab_pause::Severity;

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    pub title: String,
    /// How many pauses or safepoints matched.
    pub count: u64,
    /// Sum of the matched pauses' excess over what the rule expects, ms.
    pub excess_total_ms: f64,
    /// How sure the diagnosis is, in words.
    pub confidence: &'static str,
    /// The strongest examples, worst first.
    pub evidence: Vec<Evidence>,
    /// Every candidate cause, the one the input's evidence points at most first.
    pub causes: Vec<Cause>,
    /// What to do, in the order of the causes; never an option the JVM already has.
    pub fixes: Vec<&'static str>,
    /// The threads HotSpot named as not reaching a safepoint in time (`long_ttsp`, with
    /// `-XX:+SafepointTimeout`); absent when none were named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<Culprit>,
}

impl RuleTracker {
    fn finding(&self, rule: &'static str, severity: Severity, title: String) -> Finding {
        Finding {
            rule,
            severity,
            title,
            count: self.count,
            excess_total_ms: self.excess_ns as f64 / 1e6,
            confidence: "",
            evidence: self.evidence().to_vec(),
            causes: Vec::new(),
            fixes: Vec::new(),
            threads: Vec::new(),
        }
    }
}

/// Rule ids, as used by `--fail-on finding:RULE` and in the JSON.
pub const RULES: [&str; 14] = [
    "real_gt_cpu",
    "sys_gt_user",
    "stopped_gt_gc",
    "long_ttsp",
    "non_gc_safepoints",
    "gc_time_share",
    "full_gc",
    "evacuation_failure",
    "concurrent_mode_failure",
    "promotion_failure",
    "humongous_allocation",
    "degenerated_gc",
    "allocation_stalls",
    "busy_cpu",
];

/// The trackers of every rule, filled by the analyzer.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub real_gt_cpu: RuleTracker,
    pub sys_gt_user: RuleTracker,
    pub stopped_gt_gc: RuleTracker,
    pub long_ttsp: RuleTracker,
    pub non_gc_safepoints: RuleTracker,
    pub full_gc: RuleTracker,
    pub evacuation_failure: RuleTracker,
    pub concurrent_mode_failure: RuleTracker,
    pub promotion_failure: RuleTracker,
    pub humongous_allocation: RuleTracker,
    pub degenerated_gc: RuleTracker,
    pub allocation_stalls: RuleTracker,
    /// Long pauses while the machine's CPU was saturated (recordings with `jdk.CPULoad`).
    pub busy_cpu: RuleTracker,
    /// CPU times summed over the `real_gt_cpu` pauses.
    pub off_cpu: CpuSums,
    /// VM operations that were not a collection and ran in a `stopped_gt_gc` stop, with
    /// how many stops each.
    pub stopped_operations: Vec<(String, u64)>,
}

/// CPU times summed over pauses, ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSums {
    pub user_ns: u128,
    pub sys_ns: u128,
    pub real_ns: u128,
}

impl CpuSums {
    fn cpu_ns(&self) -> u128 {
        self.user_ns + self.sys_ns
    }
}

impl Rules {
    /// A `stopped_gt_gc` stop that ran the non-GC VM operation `op`.
    pub fn stopped_operation(&mut self, op: &str) {
        match self.stopped_operations.iter().position(|(o, _)| o == op) {
            Some(at) => self.stopped_operations[at].1 += 1,
            None if self.stopped_operations.len() < 32 => {
                self.stopped_operations.push((op.to_string(), 1));
            }
            None => {}
        }
    }
}

/// Context the findings need to be worded and ranked.
pub struct Context {
    pub thresholds: Thresholds,
    pub pause_count: u64,
    pub safepoint_count: u64,
    pub covered_ns: u64,
    pub non_gc_total_ns: u128,
    pub non_gc_count: u64,
    pub top_non_gc_operations: Vec<(String, u64, f64)>,
    /// Sum of all GC pauses.
    pub pause_total_ns: u128,
    /// Full collections by cause: (cause, count, total ms), most frequent first.
    pub full_gc_causes: Vec<(String, u64, f64)>,
    /// The worst 1-minute and 10-minute windows of pause time, when the log is that long.
    pub worst_windows: Vec<crate::health::WindowShare>,
    /// Allocation stalls: count, total ms, max ms.
    pub allocation_stalls: (u64, f64, f64),
    /// Threads named by safepoint timeout reports, most often first.
    pub safepoint_timeouts: Vec<Culprit>,
    /// Long pauses a CPU load sample covered (0 without `jdk.CPULoad`).
    pub long_pauses_cpu_sampled: u64,
    /// The JVM's own options, when the input states them.
    pub flags: JvmFlags,
}

fn pct(part: u128, whole: u128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn ms(ns: u64) -> String {
    format!("{} ms", ns / 1_000_000)
}

impl Rules {
    pub fn findings(&self, ctx: &Context) -> Vec<Finding> {
        let t = ctx.thresholds;
        let mut out = Vec::new();
        let r = &self.real_gt_cpu;
        if r.count > 0 {
            let mut f = r.finding(
                "real_gt_cpu",
                if r.max_excess_ns >= 500_000_000 || r.count >= 10 { Severity::Critical } else { Severity::Warning },
                format!(
                    "{} of {} GC pauses spent more than {} of wall time off-CPU (real > user + sys)",
                    r.count, ctx.pause_count, ms(t.off_cpu_ns)
                ),
            );
            f.confidence = "high: GC worker threads were on a CPU for less than the pause lasted; the JVM was waiting on the OS";
            let (causes, fixes) = rank(self.off_cpu_causes(), &ctx.flags);
            (f.causes, f.fixes) = (causes, fixes);
            out.push(f);
        }
        let r = &self.sys_gt_user;
        if r.count > 0 {
            let mut f = r.finding(
                "sys_gt_user",
                if r.count >= 10 || r.max_excess_ns >= 500_000_000 { Severity::Critical } else { Severity::Warning },
                format!(
                    "{} of {} GC pauses spent more CPU time in the kernel than in the JVM (sys > user, sys >= {})",
                    r.count, ctx.pause_count, ms(t.sys_ns)
                ),
            );
            f.confidence = "medium: the kernel worked on the JVM's behalf during the pause; which work needs the host's counters (pauselab doctor)";
            let pre_touched = ctx.flags.has("-XX:+AlwaysPreTouch");
            let (causes, fixes) = rank(
                vec![
                    Candidate::new("page faults: heap not pre-touched, memory returned to the OS and faulted in again")
                        .fix("-XX:+AlwaysPreTouch with a fixed heap (-Xms = -Xmx)")
                        .option("-XX:+AlwaysPreTouch")
                        .weigh_if(!pre_touched && ctx.flags.known(), 1, || "the JVM's options do not pre-touch the heap (no -XX:+AlwaysPreTouch)".to_string()),
                    Candidate::new("transparent huge page allocation and compaction")
                        .fix("THP: madvise instead of always; defrag: defer or madvise"),
                    Candidate::new("swapping").fix("disable swap for the JVM or lower vm.swappiness"),
                    Candidate::new("hsperf mmap writeback")
                        .fix("-XX:+PerfDisableSharedMem")
                        .option("-XX:+PerfDisableSharedMem"),
                ],
                &ctx.flags,
            );
            (f.causes, f.fixes) = (causes, fixes);
            out.push(f);
        }
        let r = &self.stopped_gt_gc;
        if r.count > 0 {
            let mut f = r.finding(
                "stopped_gt_gc",
                if r.max_excess_ns >= 500_000_000 || r.count >= 10 { Severity::Critical } else { Severity::Warning },
                format!(
                    "{} safepoints stopped the application at least {} longer than the GC inside them and the time to reach them",
                    r.count, ms(t.stopped_excess_ns)
                ),
            );
            f.confidence = "high: the time was spent at the safepoint, after its threads had stopped, but not in the collector";
            let (causes, fixes) = rank(self.stopped_causes(), &ctx.flags);
            (f.causes, f.fixes) = (causes, fixes);
            out.push(f);
        }
        let r = &self.long_ttsp;
        if r.count > 0 {
            let severity = if r.max_excess_ns >= 500_000_000 || r.count >= 10 {
                Severity::Critical
            } else {
                Severity::Warning
            };
            let title = if ctx.safepoint_count > 0 {
                format!(
                    "{} of {} safepoints took more than {} to stop all threads (time to safepoint)",
                    r.count,
                    ctx.safepoint_count,
                    ms(t.ttsp_ns)
                )
            } else {
                format!(
                    "{} safepoints waited longer than -XX:SafepointTimeoutDelay for threads to stop (time to safepoint; no safepoint lines to measure it)",
                    r.count
                )
            };
            let mut f = r.finding("long_ttsp", severity, title);
            f.threads = ctx.safepoint_timeouts.clone();
            let named = !f.threads.is_empty();
            f.confidence = if named {
                "high: HotSpot named the threads still running when -XX:SafepointTimeoutDelay passed"
            } else {
                "high that threads were slow to stop; which threads needs -XX:+SafepointTimeout"
            };
            let off_cpu = self.real_gt_cpu.count + self.busy_cpu.count;
            let (causes, mut fixes) = rank(
                vec![
                    Candidate::new("long counted loops without safepoint polls (JIT-compiled int loops)")
                        .fix(if named {
                            "find the loop or copy the named threads run (a profiler such as async-profiler, or jcmd <pid> Thread.print during a stall) and split it or make its index a long"
                        } else {
                            "-XX:+SafepointTimeout -XX:SafepointTimeoutDelay=100 to name the slow threads"
                        })
                        .weigh_if(named, 2, || format!("HotSpot named the threads that did not stop: {}", culprit_names(&f.threads))),
                    Candidate::new("threads stalled on page faults, swap or CPU throttling while running to the safepoint")
                        .fix("fix swap, THP and CPU quota on the host")
                        .weigh_if(off_cpu > 0, 1, || format!("{off_cpu} GC pauses were also off-CPU or on a saturated CPU (real_gt_cpu, busy_cpu)")),
                    Candidate::new("large array copies or System.arraycopy / native code without polls"),
                    Candidate::new("loops of JDK 8-9 without loop strip mining")
                        .fix("-XX:+UseCountedLoopSafepoints (and -XX:LoopStripMiningIter) on older JDKs")
                        .option("-XX:+UseCountedLoopSafepoints"),
                ],
                &ctx.flags,
            );
            if named || ctx.flags.has("-XX:+SafepointTimeout") {
                fixes.retain(|f| !f.starts_with("-XX:+SafepointTimeout"));
            }
            (f.causes, f.fixes) = (causes, fixes);
            out.push(f);
        }
        if ctx.non_gc_count > 0 {
            let r = &self.non_gc_safepoints;
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
            let mut f = r.finding(
                "non_gc_safepoints",
                severity,
                format!(
                    "{} safepoints were not GCs, {:.1} ms in total: {ops}",
                    ctx.non_gc_count,
                    ctx.non_gc_total_ns as f64 / 1e6
                ),
            );
            // The finding counts every non-GC safepoint; evidence lists the long ones.
            f.count = ctx.non_gc_count;
            f.confidence = "high: these stops are VM operations, invisible in GC pause statistics";
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
            let (causes, fixes) = rank(
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
                ],
                &ctx.flags,
            );
            (f.causes, f.fixes) = (causes, fixes);
            out.push(f);
        }
        self.gc_health(ctx, &mut out);
        self.busy_cpu(ctx, &mut out);
        out.sort_by(|a, b| b.severity.cmp(&a.severity).then(b.count.cmp(&a.count)));
        out
    }
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

/// Real time at least this many times the CPU time, with little sys, is what GC threads
/// that were runnable but not running leave in `[Times:]`/`gc+cpu`.
const DESCHEDULED_RATIO: u128 = 2;
/// sys at most 1/this of the off-CPU time: threads waiting in the kernel for page faults
/// or reclaim burn sys on the way; descheduled ones do not. Judged against the off-CPU
/// time, not the CPU time: both are rounded to 10 ms, and a GC thread that got 30 ms of
/// CPU shows 10 ms of sys as often as not.
const LOW_SYS_PART: u128 = 5;
/// sys summed over the pauses below which its share of the CPU time is rounding.
const SIGNIFICANT_SYS_NS: u64 = 50_000_000;

impl Rules {
    /// `real_gt_cpu`'s causes, weighed by the CPU times of its pauses, the recording's CPU
    /// samples, the stops that outlasted their GC and the JVM's options.
    fn off_cpu_causes(&self) -> Vec<Candidate> {
        let sums = self.off_cpu;
        let cpu = sums.cpu_ns();
        let off = sums.real_ns.saturating_sub(cpu);
        let sys_pct = pct(sums.sys_ns, cpu);
        let ratio = if cpu == 0 {
            f64::INFINITY
        } else {
            sums.real_ns as f64 / cpu as f64
        };
        let times = format!(
            "over its {} pauses real {:.0} ms, user {:.0} ms + sys {:.0} ms ({ratio:.1}x the CPU time)",
            self.real_gt_cpu.count,
            sums.real_ns as f64 / 1e6,
            sums.user_ns as f64 / 1e6,
            sums.sys_ns as f64 / 1e6,
        );
        let descheduled =
            sums.real_ns >= DESCHEDULED_RATIO * cpu && sums.sys_ns * LOW_SYS_PART <= off;
        let busy = self.busy_cpu.count;
        let deschedule_weight = u32::from(descheduled) * 2 + u32::from(busy > 0) * 3;
        let deschedule_evidence = match (descheduled, busy > 0) {
            (_, true) => Some(format!(
                "{busy} long pauses ran with the machine's CPU 90% busy or more (busy_cpu); {times}"
            )),
            (true, false) => Some(format!(
                "{times}: sys at most a fifth of the off-CPU time; runnable, not running, not in the kernel"
            )),
            (false, false) => None,
        };
        let stopped_after = self.stopped_gt_gc.count;
        // sys over half the CPU time, and enough of it to be more than rounding.
        let high_sys = self.sys_gt_user.count > 0
            || (sys_pct > 50.0 && sums.sys_ns >= u128::from(SIGNIFICANT_SYS_NS));
        let mut deschedule = Candidate::new(
            "descheduling: other processes (or the JVM's own threads) on the cores the GC threads need, or CPU quota throttling (cgroup cpu.max)",
        )
        .fix("find what else runs during the pauses (pidstat 1, top), give the JVM CPUs of its own (cpuset), check cgroup throttling (cpu.stat nr_throttled) and size -XX:ParallelGCThreads to the CPUs the JVM gets");
        if let Some(e) = deschedule_evidence {
            deschedule = deschedule.weigh(deschedule_weight, e);
        }
        vec![
            deschedule,
            Candidate::new(
                "GC threads blocked on I/O: a write() of the GC log or of the hsperf file (/tmp/hsperfdata_<user>/<pid>) stalled behind disk writeback",
            )
            .fix("-XX:+PerfDisableSharedMem, or put hsperfdata on tmpfs")
            .option("-XX:+PerfDisableSharedMem")
            .weigh_if(stopped_after > 0, 2, || {
                format!("{stopped_after} safepoints also stayed stopped after their GC (stopped_gt_gc)")
            }),
            Candidate::new("a blocking write of the GC log")
                .fix("-Xlog:async (JDK 17+) and write GC logs to tmpfs or a quiet disk")
                .option("-Xlog:async")
                .weigh_if(stopped_after > 0, 1, || {
                    format!("{stopped_after} safepoints stayed stopped after their GC (stopped_gt_gc)")
                }),
            Candidate::new("page faults on memory that had to be read back from disk or swap")
                .fix("check swap (vm.swappiness, swapoff)")
                .weigh_if(high_sys, 1, || format!("sys is {sys_pct:.0}% of the CPU time (sys_gt_user: {} pauses)", self.sys_gt_user.count)),
            Candidate::new("transparent huge page compaction stalls")
                .fix("THP: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")
                .weigh_if(high_sys, 1, || format!("sys is {sys_pct:.0}% of the CPU time")),
        ]
    }

    /// `stopped_gt_gc`'s causes: a VM operation that ran in the stop, else the log write,
    /// hsperf and safepoint cleanup.
    fn stopped_causes(&self) -> Vec<Candidate> {
        let ops = &self.stopped_operations;
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
        let any_op = !ops.is_empty();
        let others = if any_op {
            let listed: Vec<String> = ops.iter().map(|(op, n)| format!("{op} x{n}")).collect();
            Some(format!(
                "the stops ran the VM operation {}",
                listed.join(", ")
            ))
        } else {
            None
        };
        let mut other_op = Candidate::new("another VM operation ran in the same stop as the GC")
            .fix("-Xlog:safepoint (JDK 17+) names each stop's operation");
        if let Some(e) = others {
            other_op = other_op.weigh(2, e);
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
