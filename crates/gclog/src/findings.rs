//! Diagnosis rules over pauses and safepoints. Each rule keeps a count and its strongest
//! evidence while the log streams by, and turns into a [`Finding`] with causes and fixes.
//!
//! Every rule has an absolute margin: JDK 8 and `gc+cpu` round CPU times to 10 ms, so a
//! relative rule alone fires on healthy logs (`user=0.00 sys=0.00, real=0.01`).

use serde::Serialize;

use crate::timeouts::Culprit;

mod busy_cpu;
mod gc_health;

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

/// One pause or safepoint that made a rule fire.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    pub file: String,
    pub line: u64,
    /// Seconds since JVM start, when the log has it.
    pub uptime_s: Option<f64>,
    /// ISO-8601 UTC, when the log has a wall clock.
    pub wall: Option<String>,
    /// The pause or VM operation.
    pub what: String,
    /// The numbers that made the rule fire, in words.
    pub detail: String,
    /// How far over the rule's margin, in ms (ranks the evidence).
    pub excess_ms: f64,
}

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
    pub causes: Vec<&'static str>,
    pub fixes: Vec<&'static str>,
    /// The threads HotSpot named as not reaching a safepoint in time (`long_ttsp`, with
    /// `-XX:+SafepointTimeout`); absent when none were named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<Culprit>,
}

/// Count, excess and the K strongest examples of one rule.
#[derive(Debug, Clone, Default)]
pub struct RuleTracker {
    pub count: u64,
    pub excess_ns: u128,
    pub max_excess_ns: u64,
    evidence: Vec<Evidence>,
}

impl RuleTracker {
    pub fn hit(&mut self, excess_ns: u64, keep: usize, evidence: impl FnOnce() -> Evidence) {
        self.count += 1;
        self.excess_ns += u128::from(excess_ns);
        self.max_excess_ns = self.max_excess_ns.max(excess_ns);
        let excess_ms = excess_ns as f64 / 1e6;
        if self.evidence.len() < keep {
            self.evidence.push(evidence());
        } else if let Some(min) = self
            .evidence
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.excess_ms.total_cmp(&b.1.excess_ms))
            .filter(|(_, e)| e.excess_ms < excess_ms)
            .map(|(i, _)| i)
        {
            self.evidence[min] = evidence();
        } else {
            return;
        }
        self.evidence
            .sort_by(|a, b| b.excess_ms.total_cmp(&a.excess_ms));
    }

    pub fn evidence(&self) -> &[Evidence] {
        &self.evidence
    }

    fn finding(&self, rule: &'static str, severity: Severity, title: String) -> Finding {
        Finding {
            rule,
            severity,
            title,
            count: self.count,
            excess_total_ms: self.excess_ns as f64 / 1e6,
            confidence: "",
            evidence: self.evidence.clone(),
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
            f.confidence = "high: GC worker threads were runnable for less than the pause lasted; the JVM was waiting on the OS";
            f.causes = vec![
                "GC threads blocked on I/O: a write() of the GC log or of the hsperf file (/tmp/hsperfdata_<user>/<pid>) stalled behind disk writeback",
                "page faults on memory that had to be read back from disk or swap",
                "CPU quota throttling (cgroup cpu.cfs_quota_us) or descheduling by other processes",
                "transparent huge page compaction stalls",
            ];
            f.fixes = vec![
                "-XX:+PerfDisableSharedMem, or put hsperfdata on tmpfs",
                "-Xlog:async (JDK 17+) and write GC logs to tmpfs or a quiet disk",
                "check swap (vm.swappiness, swapoff) and THP (echo madvise > /sys/kernel/mm/transparent_hugepage/enabled)",
                "check cgroup throttling (cpu.stat nr_throttled) and raise the CPU quota",
            ];
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
            f.causes = vec![
                "page faults: heap not pre-touched, memory returned to the OS and faulted in again",
                "transparent huge page allocation and compaction",
                "swapping",
                "hsperf mmap writeback",
            ];
            f.fixes = vec![
                "-XX:+AlwaysPreTouch with a fixed heap (-Xms = -Xmx)",
                "THP: madvise instead of always; defrag: defer or madvise",
                "disable swap for the JVM or lower vm.swappiness",
                "-XX:+PerfDisableSharedMem",
            ];
            out.push(f);
        }
        let r = &self.stopped_gt_gc;
        if r.count > 0 {
            let mut f = r.finding(
                "stopped_gt_gc",
                if r.max_excess_ns >= 500_000_000 || r.count >= 10 { Severity::Critical } else { Severity::Warning },
                format!(
                    "{} safepoints stopped the application at least {} longer than the GC inside them",
                    r.count, ms(t.stopped_excess_ns)
                ),
            );
            f.confidence = "high: the time was spent at the safepoint but not in the collector";
            f.causes = vec![
                "a blocking write() of the GC log line at the end of the pause (busy or slow disk)",
                "hsperf counter updates stalled on mmap writeback",
                "slow safepoint cleanup (large code cache, many monitors)",
            ];
            f.fixes = vec![
                "-Xlog:async (JDK 17+), GC log on tmpfs or a dedicated disk",
                "-XX:+PerfDisableSharedMem",
            ];
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
            f.causes = vec![
                "long counted loops without safepoint polls (JIT-compiled int loops)",
                "threads stalled on page faults, swap or CPU throttling while running to the safepoint",
                "large array copies or System.arraycopy / native code without polls",
            ];
            if f.threads.is_empty() {
                f.confidence = "high that threads were slow to stop; which threads needs -XX:+SafepointTimeout";
                f.fixes = vec![
                    "-XX:+SafepointTimeout -XX:SafepointTimeoutDelay=100 to name the slow threads",
                    "-XX:+UseCountedLoopSafepoints (and -XX:LoopStripMiningIter) on older JDKs",
                    "fix swap, THP and CPU quota on the host",
                ];
            } else {
                f.confidence = "high: HotSpot named the threads still running when -XX:SafepointTimeoutDelay passed";
                f.fixes = vec![
                    "find the loop or copy the named threads run (a profiler such as async-profiler, or jcmd <pid> Thread.print during a stall) and split it or make its index a long",
                    "-XX:+UseCountedLoopSafepoints (and -XX:LoopStripMiningIter) on older JDKs",
                    "fix swap, THP and CPU quota on the host",
                ];
            }
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
            f.causes = vec![
                "biased-lock revocation (RevokeBias, BulkRevokeBias: JDK 8-14)",
                "deoptimization, class redefinition (agents), thread dumps (jstack, jcmd Thread.print)",
                "heap inspection (jmap -histo, jcmd GC.class_histogram)",
                "periodic cleanup safepoints (GuaranteedSafepointInterval)",
            ];
            f.fixes = vec![
                "-XX:-UseBiasedLocking on JDK 8-14",
                "find who runs thread dumps or heap histograms in production",
                "-Xlog:safepoint (JDK 17+) names each operation",
            ];
            out.push(f);
        }
        self.gc_health(ctx, &mut out);
        self.busy_cpu(ctx, &mut out);
        out.sort_by(|a, b| b.severity.cmp(&a.severity).then(b.count.cmp(&a.count)));
        out
    }
}
