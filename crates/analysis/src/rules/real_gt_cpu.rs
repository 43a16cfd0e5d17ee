//! `real_gt_cpu`: GC pauses whose wall time exceeds their CPU time (user + sys) by more
//! than the margin: the GC threads were off-CPU, waiting on the OS. Its causes are weighed
//! by the CPU times summed over its pauses and by what other rules found.

use pauselab_pause::record::GcPause;

use crate::evidence::RuleTracker;
use crate::rules::causes::Candidate;
use crate::rules::finding::{ms, whole_ms, Finding};
use crate::rules::rule::{Context, Marks, Rule, Seen, Watch};
use crate::rules::{busy_cpu, real_gt_gc, stopped_gt_gc, sys_gt_user};

pub(crate) const ID: &str = "real_gt_cpu";
pub(crate) const WATCHES: &[Watch] = &[Watch::OffCpuPause];
/// Default margin of real over user + sys.
pub(crate) const OFF_CPU_NS: u64 = 50_000_000;

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

/// CPU times summed over pauses, ns.
#[derive(Debug, Clone, Copy, Default)]
struct CpuSums {
    user_ns: u128,
    sys_ns: u128,
    real_ns: u128,
}

#[derive(Default)]
struct RealGtCpu {
    tracker: RuleTracker,
    /// Summed over the matched pauses.
    sums: CpuSums,
}

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<RealGtCpu>::default()
}

impl Rule for RealGtCpu {
    fn counts(&self) -> Marks {
        Marks::OFF_CPU
    }

    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let Some(cpu) = seen.item.cpu else { return };
        // When the stop outlasted the collection (real_gt_gc), the GC threads had the
        // collection's time to run: the rest of the stop is not theirs to be off-CPU in.
        let (wall, wall_is) = match real_gt_gc::stopped_outside_ns(seen.item, seen.thresholds) {
            Some(_) => (seen.item.duration_ns, "collection"),
            None => (cpu.real_ns, "real"),
        };
        let on_cpu = cpu.user_ns + cpu.sys_ns;
        if wall <= on_cpu + seen.thresholds.off_cpu_ns {
            return;
        }
        let excess = wall - on_cpu;
        self.sums.user_ns += u128::from(cpu.user_ns);
        self.sums.sys_ns += u128::from(cpu.sys_ns);
        self.sums.real_ns += u128::from(wall);
        self.tracker.hit(excess, seen.keep, || {
            let detail = format!(
                "{wall_is} {} ms, user {} ms + sys {} ms: {} ms off-CPU",
                whole_ms(wall),
                whole_ms(cpu.user_ns),
                whole_ms(cpu.sys_ns),
                whole_ms(excess)
            );
            seen.evidence(seen.item.described(), detail, excess)
        });
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.tracker.count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let r = self.tracker.fired()?;
        let title = format!(
            "{} of {} GC pauses spent more than {} of wall time off-CPU (real > user + sys)",
            r.count,
            ctx.pause_count,
            ms(ctx.thresholds.off_cpu_ns)
        );
        let confidence = "high: GC worker threads were on a CPU for less than the pause lasted; the JVM was waiting on the OS";
        Some(Finding::of_stall(ID, r, title, confidence, self.causes(ctx), ctx.flags))
    }
}

fn pct(part: u128, whole: u128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

impl RealGtCpu {
    /// The causes, weighed by the CPU times of its pauses, the recording's CPU samples, the
    /// stops that outlasted their GC and the JVM's options.
    fn causes(&self, ctx: &Context<'_>) -> Vec<Candidate> {
        let sums = self.sums;
        let cpu = sums.user_ns + sums.sys_ns;
        let sys_pct = pct(sums.sys_ns, cpu);
        let stopped_after = ctx.matched(stopped_gt_gc::ID);
        let sys_gt_user = ctx.matched(sys_gt_user::ID);
        // sys over half the CPU time, and enough of it to be more than rounding.
        let high_sys =
            sys_gt_user > 0 || (sys_pct > 50.0 && sums.sys_ns >= u128::from(SIGNIFICANT_SYS_NS));
        vec![
            self.descheduling(ctx.matched(busy_cpu::ID)),
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
                .weigh_if(high_sys, 1, || format!("sys is {sys_pct:.0}% of the CPU time (sys_gt_user: {sys_gt_user} pauses)")),
            Candidate::new("transparent huge page compaction stalls")
                .fix("THP: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")
                .weigh_if(high_sys, 1, || format!("sys is {sys_pct:.0}% of the CPU time")),
        ]
    }

    /// Descheduling, weighed by how the CPU times look and by `busy` pauses on a saturated
    /// machine (`busy_cpu`).
    fn descheduling(&self, busy: u64) -> Candidate {
        let sums = self.sums;
        let cpu = sums.user_ns + sums.sys_ns;
        let off = sums.real_ns.saturating_sub(cpu);
        let ratio = if cpu == 0 {
            f64::INFINITY
        } else {
            sums.real_ns as f64 / cpu as f64
        };
        let times = format!(
            "over its {} pauses real {:.0} ms, user {:.0} ms + sys {:.0} ms ({ratio:.1}x the CPU time)",
            self.tracker.count,
            sums.real_ns as f64 / 1e6,
            sums.user_ns as f64 / 1e6,
            sums.sys_ns as f64 / 1e6,
        );
        let descheduled =
            sums.real_ns >= DESCHEDULED_RATIO * cpu && sums.sys_ns * LOW_SYS_PART <= off;
        let weight = u32::from(descheduled) * 2 + u32::from(busy > 0) * 3;
        let evidence = match (descheduled, busy > 0) {
            (_, true) => Some(format!(
                "{busy} long pauses ran with the machine's CPU 90% busy or more (busy_cpu); {times}"
            )),
            (true, false) => Some(format!(
                "{times}: sys at most a fifth of the off-CPU time; runnable, not running, not in the kernel"
            )),
            (false, false) => None,
        };
        let deschedule = Candidate::new(
            "descheduling: other processes (or the JVM's own threads) on the cores the GC threads need, or CPU quota throttling (cgroup cpu.max)",
        )
        .fix("find what else runs during the pauses (pidstat 1, top), give the JVM CPUs of its own (cpuset), check cgroup throttling (cpu.stat nr_throttled) and size -XX:ParallelGCThreads to the CPUs the JVM gets");
        match evidence {
            Some(e) => deschedule.weigh(weight, e),
            None => deschedule,
        }
    }
}
