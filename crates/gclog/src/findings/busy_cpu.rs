//! The finding about pauses that ran while the machine's CPU was saturated: only a JFR
//! recording says how busy the CPU was (`jdk.CPULoad`), so GC logs never raise it.

use super::causes::listed;
use super::{Context, Finding, Rules, Severity};

impl Rules {
    pub(super) fn busy_cpu(&self, ctx: &Context, out: &mut Vec<Finding>) {
        let r = &self.busy_cpu;
        if r.count == 0 {
            return;
        }
        let severity = if r.count >= 10 || r.max_excess_ns >= 500_000_000 {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let mut f = r.finding(
            "busy_cpu",
            severity,
            format!(
                "{} of {} pauses of {} ms or more ran while the machine's CPU was {}% busy or more",
                r.count,
                ctx.long_pauses_cpu_sampled,
                crate::busy_cpu::LONG_PAUSE_NS / 1_000_000,
                crate::busy_cpu::BUSY_PER_MILLE / 10
            ),
        );
        f.confidence = "medium: the recording samples the CPU once a period (1 s by default), so a saturated second holds the pause but may not be saturated all through it";
        let mut causes = listed(&[
            "other processes on the host (or in the container's CPU set) use the cores the GC threads need",
            "more GC threads than the JVM's share of the CPUs (ParallelGCThreads, ConcGCThreads), competing with the application's own threads",
            "a CPU quota (cgroup cpu.max or cpu.cfs_quota_us) smaller than the cores the JVM sees",
        ]);
        causes[0].evidence = Some(format!(
            "CPU load samples: the machine was {}% busy or more during {} long pauses (the evidence gives how much was other processes)",
            crate::busy_cpu::BUSY_PER_MILLE / 10,
            r.count
        ));
        f.causes = causes;
        f.fixes = vec![
            "find what else runs during the pauses (pidstat 1, top) and move it away, or give the JVM CPUs of its own (cpuset, taskset)",
            "size ParallelGCThreads and ConcGCThreads to the CPUs the JVM really gets (-XX:ActiveProcessorCount in containers)",
            "raise the CPU quota or check its throttling (pauselab lab run cpu-quota reproduces it)",
        ];
        out.push(f);
    }
}
