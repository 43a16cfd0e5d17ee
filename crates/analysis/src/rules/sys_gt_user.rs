//! `sys_gt_user`: GC pauses that spent more CPU time in the kernel than in the JVM.

use pauselab_pause::record::GcPause;

use crate::evidence::RuleTracker;
use crate::rules::causes::{rank, Candidate};
use crate::rules::finding::{graded, ms, whole_ms, Finding};
use crate::rules::rule::{Context, Marks, Rule, Seen, Watch};

pub(crate) const ID: &str = "sys_gt_user";
pub(crate) const WATCHES: &[Watch] = &[Watch::OffCpuPause];
/// Default sys time above which "sys > user" is worth reporting.
pub(crate) const SYS_NS: u64 = 50_000_000;

#[derive(Default)]
struct SysGtUser(RuleTracker);

pub(crate) fn start() -> Box<dyn Rule> {
    Box::<SysGtUser>::default()
}

impl Rule for SysGtUser {
    fn counts(&self) -> Marks {
        Marks::SYS_OVER_USER
    }

    fn pause(&mut self, seen: &Seen<'_, GcPause>) {
        let Some(cpu) = seen.item.cpu else { return };
        if cpu.sys_ns > cpu.user_ns && cpu.sys_ns >= seen.thresholds.sys_ns {
            let excess = cpu.sys_ns - cpu.user_ns;
            // Ranked, counted and graded by the kernel time beyond the JVM's own.
            self.0.hit(excess, seen.keep, || {
                let detail = format!(
                    "sys {} ms > user {} ms (real {} ms)",
                    whole_ms(cpu.sys_ns),
                    whole_ms(cpu.user_ns),
                    whole_ms(cpu.real_ns)
                );
                seen.evidence(seen.item.described(), detail, excess)
            });
        }
    }

    fn matched(&self, _ctx: &Context<'_>) -> u64 {
        self.0.count
    }

    fn finding(&self, ctx: &Context<'_>) -> Option<Finding> {
        let r = self.0.fired()?;
        let title = format!(
            "{} of {} GC pauses spent more CPU time in the kernel than in the JVM (sys > user, sys >= {})",
            r.count,
            ctx.pause_count,
            ms(ctx.thresholds.sys_ns)
        );
        let mut f = Finding::tracked(ID, r, graded(r, 10, 500_000_000), title);
        f.confidence = "medium: the kernel worked on the JVM's behalf during the pause; which work needs the host's counters (pauselab doctor)";
        let pre_touched = ctx.flags.has("-XX:+AlwaysPreTouch");
        (f.causes, f.fixes) = rank(
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
            ctx.flags,
        );
        Some(f)
    }
}
